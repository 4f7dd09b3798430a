// A saved baseline (--baseline FILE, mode mig): the exclusive phases of an exclusive run, read back through
// harness/results/results_reader.h and checked against the scenarios before anything is made.
#include "harness/modes/baseline.h"

#include "harness/analysis/analysis.h"
#include "harness/core/errors.h"
#include "harness/results/results_reader.h"

namespace ib {

namespace {

[[noreturn]] void refuse_baseline(const std::string& path, const std::string& why) {
  throw InputError("--baseline " + path + ": " + why);
}

// A baseline's exclusive phase as this run uses it: the samples with their blocks and counted flags
// and the per-request latencies, the figures recomputed from them; the rest of the file's phase
// (telemetry, the flags of its run's analysis) stays behind.
BaselinePhase baseline_phase(const TenantResult& t, const RunResult& run, const Meta& meta, const std::string& path) {
  const PhaseResult& from = t.exclusive;
  BaselinePhase b;
  b.workload = t.workload;
  b.work = t.work;
  PhaseResult& p = b.phase;
  p.source = PhaseSource::baseline;
  p.outcome.status = WorkerStatus::ok;
  p.outcome.resolved = from.outcome.resolved;
  p.outcome.message = "from " + path + " (" + run.mode + " run of " + meta.start_time + ")";
  p.start_ns = from.start_ns;
  p.duration_s = from.duration_s;
  p.block = from.block;
  p.counted = from.counted;
  p.measure_start_ns = from.measure_start_ns;
  p.measure_end_ns = from.measure_end_ns;
  p.latencies_s = from.latencies_s;  // a latency-type workload is judged on its per-request latencies
  p.latency_count = from.latency_count;
  summarize_phase(p, b.work, {});
  return b;
}

// Every "<scenario>/<tenant>" exclusive phase of the file: from the first repetition that measured it.
std::map<std::string, BaselinePhase> baseline_phases(const std::string& path) {
  ResultsDocument doc;
  try {
    doc = read_results_file(path);
  } catch (const ResultsFileError& e) {
    throw InputError(std::string("--baseline ") + e.what());
  }
  std::map<std::string, BaselinePhase> found;
  for (const RunResult& run : doc.results.runs) {
    if (run.status != RunStatus::ok) continue;
    if (run.mode == "mig") refuse_baseline(path, "written by a mig run; the baseline must come from a whole GPU");
    for (const TenantResult& t : run.tenants) {
      const std::string key = run.scenario + "/" + t.name;
      if (found.count(key) || t.exclusive.outcome.status != WorkerStatus::ok) continue;
      // An exclusive run on one MIG instance is accepted (mode mig has no whole GPU to compare with; it is
      // what mig-sweep measures its yardstick with, on the GPU's largest instance), and the run says so.
      if (t.exclusive.source != PhaseSource::measured && t.exclusive.source != PhaseSource::mig_instance)
        refuse_baseline(path, key + ": the exclusive phase was not measured on a whole GPU or one MIG instance (" +
                                  to_string(t.exclusive.source) + ")");
      if (!doc.raw_samples) refuse_baseline(path, key + " has no raw samples (the file was written with --no-raw)");
      BaselinePhase b = baseline_phase(t, run, doc.results.meta, path);
      if (t.exclusive.source == PhaseSource::mig_instance)
        b.measured_on = run.mode_config.exclusive_source.value_or("one MIG instance, not a whole GPU");
      found.emplace(key, std::move(b));
    }
  }
  return found;
}

}  // namespace

std::map<std::string, BaselinePhase> load_baseline(const std::string& path, const std::vector<Scenario>& scenarios) {
  const std::map<std::string, BaselinePhase> found = baseline_phases(path);
  std::map<std::string, BaselinePhase> out;
  for (const auto& s : scenarios)
    for (const auto& t : s.tenants) {
      const std::string key = s.name + "/" + t.name;
      const auto it = found.find(key);
      if (it == found.end())
        refuse_baseline(path, "no exclusive phase for scenario \"" + s.name + "\" tenant \"" + t.name +
                                  "\" (run the same scenarios with --mode exclusive on a whole GPU to make one)");
      if (it->second.work.amount <= 0.0 || it->second.phase.stats.n == 0) refuse_baseline(path, key + " has no samples");
      if (it->second.workload != t.workload)
        refuse_baseline(path, key + " ran " + it->second.workload + " there, " + t.workload + " here: not comparable");
      out.emplace(key, it->second);
    }
  return out;
}

}  // namespace ib
