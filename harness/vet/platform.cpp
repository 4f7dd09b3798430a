// The platform commands' common ground: a measuring step run as a child of this binary (run_self), the
// judgements vet and sustain share (exclusive phases, stability, P95 against a baseline, verdicts), `probe`,
// and the shared steps of platform_steps.h. `vet` is in vet.cpp, `sustain` and `baseline` in sustain.cpp.
#include "harness/vet/platform.h"
#include "harness/vet/platform_steps.h"

#include "harness/analysis/analysis.h"
#include "harness/core/clock.h"
#include "harness/core/errors.h"
#include "harness/core/exit_codes.h"
#include "harness/core/files.h"
#include "harness/core/host.h"
#include "harness/core/output_dir.h"
#include "harness/core/output_paths.h"
#include "harness/core/stop_signals.h"
#include "harness/core/text.h"
#include "harness/nvml/nvml.h"
#include "harness/nvml/telemetry.h"
#include "harness/process/process.h"
#include "harness/stats/metrics.h"
#include "harness/stats/stats.h"
#include "harness/vet/probe.h"
#include "harness/history/history.h"
#include "reports/json/platform_json.h"
#include "reports/markdown/platform_markdown.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <map>

#include <unistd.h>

namespace ib {

using nlohmann::json;
using namespace platform_steps;

namespace {

// The child's results.json: empty when it wrote none; when it wrote one that does not read, why
// goes into the output the steps quote.
std::optional<ResultsDocument> child_results(const std::string& path, std::string& output) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    return read_results_file(path);
  } catch (const ResultsFileError& e) {
    output += std::string(output.empty() || output.back() == '\n' ? "" : "\n") + e.what() + "\n";
    return std::nullopt;
  }
}

}  // namespace
ChildRun run_self(const PlatformOptions& o, std::vector<std::string> args, const std::string& out_dir, double timeout_s,
                  const std::vector<std::string>& env) {
  args.insert(args.begin(), self_exe_path());
  // --force: out_dir is a subfolder of this command's own, checked and locked, output folder.
  args.insert(args.end(), {"--out", out_dir, "--force", "--max-foreign-cpus", arg(o.max_foreign_cpus),
                           "--max-steal-cpus", arg(o.max_steal_cpus)});
  std::vector<std::string> child_env = {"INTERFERENCE_BENCH_CHILD=1"};
  child_env.insert(child_env.end(), env.begin(), env.end());
  const CommandResult r = run_helper_command(args, child_env, "", timeout_s, {}, o.stop);
  ChildRun c;
  c.output = r.output;
  c.exit_code = r.timed_out ? kExitWorkloadFailed
                            : r.status.exit_code.value_or(r.status.signal ? 128 + *r.status.signal : kExitCannotRun);
  if (r.interrupted) c.exit_code = kExitInterrupted;  // whatever the child made of our SIGTERM
  c.results = child_results(out_dir + "/results.json", c.output);
  return c;
}

std::vector<std::string> child_run_args(const PlatformOptions& o, const std::string& mode, const std::string& scenario) {
  std::vector<std::string> args = {"--mode", mode, "--backend", o.backend, "--device", std::to_string(o.device),
                                   "--scenario", scenario, "--telemetry-hz", fmt::format("{}", o.telemetry_hz),
                                   "--cutoff", fmt::format("{}", o.cutoff)};
  if (o.phase_s) args.insert(args.end(), {"--duration", fmt::format("{}", *o.phase_s)});
  if (o.rounds) args.insert(args.end(), {"--rounds", std::to_string(*o.rounds), "--until", "fixed"});
  return args;
}

std::string child_last_line(const std::string& output) {
  std::string line, last;
  std::stringstream ss(output);
  while (std::getline(ss, line))
    if (!line.empty()) last = line;
  return printable(last, 300);
}

// ---- the judgements ----

std::size_t ExclusivePhase::judged_count() const {
  std::size_t n = 0;
  for (const auto& b : judged_blocks) n += b.size();
  return n;
}

std::vector<ExclusivePhase> exclusive_phases(const ResultsDocument& doc) {
  std::vector<ExclusivePhase> out;
  if (doc.results.runs.empty()) return out;
  for (const TenantResult& t : doc.results.runs.front().tenants) {
    const PhaseResult& ph = t.exclusive;
    // The writer keeps raw samples of every phase but one that repeats the exclusive phase.
    const bool has_samples = doc.raw_samples && ph.source != PhaseSource::exclusive;
    if (ph.outcome.status != WorkerStatus::ok || !has_samples) continue;
    ExclusivePhase e;
    e.name = t.name;
    e.workload = t.workload;
    e.work = t.work;
    e.phase = ph;
    e.judged_blocks = counted_by_block(ph, e.by_latency());
    out.push_back(std::move(e));
  }
  return out;
}

CheckOutcome stability_outcome(double window_cv) {
  if (!std::isfinite(window_cv)) return CheckOutcome::unknown;
  if (window_cv <= 0.015) return CheckOutcome::pass;
  if (window_cv <= 0.10) return CheckOutcome::warn;
  return CheckOutcome::fail;
}

CheckResult stability_check(const ExclusivePhase& e) {
  const PhaseResult& p = e.phase;
  CheckResult c;
  c.id = "stability:" + e.name;
  c.title = "Throughput stability (" + e.workload + ")";
  c.threshold = "CV of 1 s window throughput: pass <= 1.5%, warn <= 10%, fail above";
  c.source = "seed 003 (good platforms fluctuate <= 1.5%; power-locked shared cards > 10%); docs/design.md section 4";
  // The run's window CV pools 1 s windows inside each block (a window never spans the gap between blocks).
  std::map<int, std::pair<std::vector<std::int64_t>, std::vector<double>>> by_block;
  for (std::size_t i = 0; i < p.start_ns.size(); ++i) {
    auto& [st, du] = by_block[i < p.block.size() ? p.block[i] : 0];
    st.push_back(p.start_ns[i]);
    du.push_back(p.duration_s[i]);
  }
  std::size_t windows = 0;
  for (const auto& [k, sd] : by_block) windows += window_throughputs(sd.first, sd.second, e.work.amount).size();
  c.evidence = "window CV " + percent(p.window_cv) + " over " + std::to_string(windows) + " windows of 1 s; sample-time CV " +
               percent(p.stats.cv) + "; " + significant(p.throughput, 4) + " " + p.throughput_unit;
  c.status = stability_outcome(p.window_cv);
  return c;
}

CheckResult p95_against_baseline(const ExclusivePhase& here, const ExclusivePhase* base, double cutoff,
                                 const std::string& baseline_file) {
  CheckResult c;
  c.id = "p95_vs_exclusive:" + here.name;
  c.title = "P95 slowdown against an exclusive card (" + here.workload + ")";
  c.threshold = "p95_slowdown = P95(here) / P95(exclusive) - 1: pass when its 95% CI lies at or below " + percent(cutoff) +
                ", fail when above, else unknown (at least 72 values each)";
  c.source = "seed 000 (40% cutoff); docs/design.md section 4";
  if (!base) {
    c.status = CheckOutcome::unknown;
    c.evidence = "no " + here.name + " in the baseline " + baseline_file;
    return c;
  }
  if (here.by_latency() != base->by_latency()) {
    c.status = CheckOutcome::unknown;
    c.evidence = "one side has per-request latencies and the other not: not comparable";
    return c;
  }
  // This platform is the colocated side C, the exclusive card the E side.
  // Two runs of different machines share no rounds: each side draws its own (blocks as clusters).
  const Estimate est = p95_slowdown({here.judged_blocks}, {base->judged_blocks}, 1, 1000, {}, Pairing::independent);
  const VerdictResult v = slowdown_verdict(base->judged_count(), here.judged_count(), est, cutoff);
  c.status = v.verdict == Verdict::pass ? CheckOutcome::pass : v.verdict == Verdict::fail ? CheckOutcome::fail
                                                                                          : CheckOutcome::unknown;
  c.evidence = "p95_slowdown of " + std::string(here.basis()) + " " + percent(est.value) + " [95% CI " +
               percent(est.ci_low) + ", " + percent(est.ci_high) + "] from " + std::to_string(here.judged_count()) +
               " values here and " + std::to_string(base->judged_count()) + " in " + baseline_file;
  if (base->by_latency() && base->phase.outcome.resolved.empty())
    c.evidence += "; the baseline does not record its arrival rate, so this platform ran at its own";
  return c;
}

CheckOutcome vet_verdict(const std::vector<CheckResult>& checks) {
  bool failed = false, warned = false;
  for (const auto& c : checks) {
    failed |= c.status == CheckOutcome::fail;
    warned |= c.status == CheckOutcome::warn;
  }
  return failed ? CheckOutcome::fail : warned ? CheckOutcome::warn : CheckOutcome::pass;
}

int sustain_exit_code(LoadVerdict verdict, int run_exit_code) {
  if (run_exit_code == kExitWorkloadFailed || run_exit_code == kExitInterrupted) return run_exit_code;
  return verdict == LoadVerdict::fail || verdict == LoadVerdict::inconclusive ? kExitVerdictFailed : kExitPass;
}

namespace platform_steps {

std::string arg(double v) { return fmt::format("{}", v); }


// The exclusive-phase workloads of the stability run: compute, memory bandwidth and latency (and,
// on a GPU, pinned and pageable host-to-device copies for the probe's H2D check).
json stability_scenario(const std::string& backend, double warmup_s, double duration_s) {
  json tenants = backend == "cuda"
                     ? json::array({{{"name", "gemm"}, {"workload", "gemm"}},
                                    {{"name", "copy"}, {"workload", "copy"}},
                                    {{"name", "latency"}, {"workload", "latency"}, {"params", {{"mode", "open"}, {"load", 0.5}}}},
                                    {{"name", "h2d-pinned"}, {"workload", "h2d"}, {"params", {{"memory", "pinned"}}}},
                                    {{"name", "h2d-pageable"}, {"workload", "h2d"}, {"params", {{"memory", "pageable"}}}}})
                     : json::array({{{"name", "compute"}, {"workload", "host-compute"}},
                                    {{"name", "copy"}, {"workload", "host-copy"}},
                                    {{"name", "latency"}, {"workload", "host-latency"}, {"params", {{"load", 0.5}}}}});
  return {{"name", "vet-stability"},
          {"description", "exclusive phases of a compute-, a bandwidth- and a latency-bound workload"},
          {"mode", "exclusive"}, {"warmup_s", warmup_s}, {"duration_s", duration_s}, {"tenants", tenants}};
}

// A power-heavy GEMM (the host backend's stand-in: a CPU matrix product).
json sustain_scenario(const std::string& backend, double duration_s) {
  const json tenant = backend == "cuda" ? json{{"name", "gemm"}, {"workload", "gemm"}, {"params", {{"dtype", "bf16"}}}}
                                        : json{{"name", "compute"}, {"workload", "host-compute"}};
  return {{"name", "sustain"}, {"mode", "exclusive"}, {"warmup_s", 2.0}, {"duration_s", duration_s},
          {"tenants", json::array({tenant})}};
}

std::string write_scenario(const std::string& dir, const json& scenario) {
  const std::string path = dir + "/" + scenario.at("name").get<std::string>() + ".scenario.json";
  write_file_atomic(path, scenario.dump(2) + "\n");
  return path;
}

// ---- probe.h's checks and cost advice as the vet report holds them ----

CheckOutcome outcome_of(CheckStatus s) {
  switch (s) {
    case CheckStatus::pass: return CheckOutcome::pass;
    case CheckStatus::warn: return CheckOutcome::warn;
    case CheckStatus::fail: return CheckOutcome::fail;
    case CheckStatus::unknown: return CheckOutcome::unknown;
  }
  return CheckOutcome::unknown;
}

CheckResult check_result(const ProbeCheck& c) {
  return {c.id, c.title, outcome_of(c.status), c.evidence, c.threshold, c.source};
}

std::vector<CheckResult> check_results(const std::vector<ProbeCheck>& checks) {
  std::vector<CheckResult> out;
  for (const auto& c : checks) out.push_back(check_result(c));
  return out;
}

CostRecommendation recommendation_of(Recommendation r) {
  switch (r) {
    case Recommendation::exclusive: return CostRecommendation::exclusive;
    case Recommendation::shared: return CostRecommendation::shared;
    case Recommendation::undecided: return CostRecommendation::undecided;
  }
  return CostRecommendation::undecided;
}

CostReport cost_report(const CostAdvice& a, const ExclusivePhase& here) {
  CostReport c;
  c.unit = here.work.unit;
  c.workload = here.workload;
  c.exclusive = {a.exclusive.throughput, a.exclusive.price_per_h, a.exclusive.cost_per_unit};
  c.shared = {a.shared.throughput, a.shared.price_per_h, a.shared.cost_per_unit};
  c.p95_cutoff_passed = a.p95_cutoff_passed;
  c.recommendation = recommendation_of(a.recommendation);
  c.reason = a.reason;
  return c;
}

std::string default_out(const std::string& what) {
  return OutputDir::unique_default("interference-bench-results/" + what + "-");
}

// --device names a GPU NVML sees, or InputError (exit 2) saying which there are.
void check_device_index(Nvml& nvml, int device) {
  const unsigned count = nvml.device_count();
  if (device < 0 || static_cast<unsigned>(device) >= count)
    throw InputError("--device " + std::to_string(device) + ": " +
                     (count == 0 ? std::string("NVML sees no GPU here")
                                 : "NVML sees " + std::to_string(count) + " GPU(s), 0.." + std::to_string(count - 1)));
}

// NVML, or CannotRunError (exit 3) saying which command needs it.
std::unique_ptr<Nvml> load_nvml_for(const std::string& command) {
  try {
    return Nvml::load();
  } catch (const NvmlError& e) {
    throw CannotRunError(command + " needs NVML to read the GPU: " + e.what());
  }
}

// --history DB on vet and sustain: the command and its checks in one transaction, after its document
// (`file`) is written. A database that cannot be used is one line; the exit code is then
// exit_code_after_history_failure's (the command's own, or 3 when that was 0).
int record_platform_history(const PlatformOptions& o, HistoryRun run, const std::vector<CheckResult>& checks,
                            const std::string& file, int exit_code) {
  run.host = host_name();
  run.version = o.version;
  run.git_sha = o.git_sha;
  run.backend = o.backend;
  run.results_file = std::filesystem::absolute(file).lexically_normal().string();
  run.exit_code = exit_code;
  std::vector<HistoryCheck> rows;
  for (const CheckResult& c : checks) rows.push_back({c.id, c.title, c.status, c.evidence, c.threshold});
  try {
    record_checks(o.history, run, rows);
    return exit_code;
  } catch (const HistoryError& e) {
    std::cerr << "interference-bench: --history: not recorded (" << file << " is written): " << printable(e.what(), 400) << "\n";
    return exit_code_after_history_failure(exit_code);
  }
}


// A platform command's outputs against the one rule for written files (core/output_paths.h): the
// files it writes in its own folder `out`, --junit, --html, the history it appends to; its input the
// baseline. Before the folder is made, so a refusal leaves nothing.
void check_platform_outputs(const PlatformOptions& o, const std::string& out, const std::vector<std::string>& own_files) {
  OutputPlan plan;
  plan.own_folder = out;
  plan.force = o.force;
  for (const std::string& f : own_files) plan.outputs.push_back({"--out", out + "/" + f});
  if (!o.junit.empty()) plan.outputs.push_back({"--junit", o.junit});
  if (!o.html.empty()) plan.outputs.push_back({"--html", o.html});
  if (!o.history.empty()) {
    require_history("--history");
    plan.outputs.push_back({"--history", o.history, true});
  }
  if (!o.baseline.empty()) plan.inputs.push_back({"--baseline", o.baseline});
  check_output_paths(plan);
}

CheckResult sustained_load_check(const std::string& sustain_json) {
  CheckResult c;
  c.id = "sustained_load";
  c.title = "Sustained load (throttling)";
  c.threshold = "FAIL: median SM clock over the last half < 70% of max, or 0xE8 reasons in > 1% of readings; "
                "WARN: last-minute throughput > 5% below the first, or enforced power limit below default";
  c.source = "seed 002, seed 003; DCGM's 0xE8 mask; docs/design.md section 5";
  SustainReport s;
  try {
    s = read_sustain_verdict(sustain_json);
  } catch (const ResultsFileError& e) {
    c.status = CheckOutcome::unknown;
    c.evidence = std::string("the sustained-load step wrote no result (") + e.what() + ")";
    return c;
  }
  c.status = s.verdict == LoadVerdict::pass   ? CheckOutcome::pass
             : s.verdict == LoadVerdict::warn ? CheckOutcome::warn
             : s.verdict == LoadVerdict::fail ? CheckOutcome::fail
                                              : CheckOutcome::unknown;
  for (const auto& line : s.evidence) c.evidence += (c.evidence.empty() ? "" : "; ") + line;
  return c;
}

}  // namespace platform_steps

int probe_command(const PlatformOptions& o) {
  auto nvml = load_nvml_for("probe");
  check_device_index(*nvml, o.device);
  const ProbeFacts facts =
      collect_probe_facts(*nvml, static_cast<unsigned>(o.device), o.idle_window_s, o.telemetry_hz, o.stop);
  ProbeReport report;
  report.device = o.device;
  report.idle_window_s = o.idle_window_s;
  report.checks = check_results(evaluate_probe(facts));
  report.pass = std::none_of(report.checks.begin(), report.checks.end(),
                             [](const CheckResult& c) { return c.status == CheckOutcome::fail; });
  if (o.json) std::cout << probe_to_json(report).dump(2) << "\n";
  else std::cout << probe_markdown(report);
  return report.pass ? kExitPass : kExitVerdictFailed;
}

std::unique_ptr<Nvml> platform_nvml(const std::string& command, int device) {
  auto nvml = load_nvml_for(command);
  check_device_index(*nvml, device);
  return nvml;
}

std::string platform_default_out(const std::string& what) { return default_out(what); }

void platform_check_outputs(const PlatformOptions& o, const std::string& out, const std::vector<std::string>& own_files) {
  check_platform_outputs(o, out, own_files);
}

// matrix --history DB (platform.h): as record_platform_history, with the matrix's cells.
int record_matrix_history(const PlatformOptions& o, const MatrixResult& r, const std::string& file) {
  try {
    record_matrix(o.history, r, std::filesystem::absolute(file).lexically_normal().string());
    return r.exit_code;
  } catch (const HistoryError& e) {
    std::cerr << "interference-bench: --history: not recorded (" << file << " is written): " << printable(e.what(), 400) << "\n";
    return exit_code_after_history_failure(r.exit_code);
  }
}

}  // namespace ib
