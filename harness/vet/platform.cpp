#include "harness/vet/platform.h"

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
#include "reports/junit_writer.h"
#include "harness/history/history.h"
#include "reports/html_writer.h"
#include "reports/platform_writer.h"

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

namespace {

// A number for a child's command line: the shortest text that reads back as the same double.
std::string arg(double v) { return fmt::format("{}", v); }

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
  c.source = "seed 003 (good platforms fluctuate <= 1.5%; power-locked shared cards > 10%); DESIGN.md section 4";
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
  c.source = "seed 000 (40% cutoff); DESIGN.md section 4";
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

namespace {

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

// ---- probe ----

}  // namespace

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

namespace {

// ---- sustain ----

SustainThresholds sustain_thresholds(const PlatformOptions& o) {
  SustainThresholds th;
  th.min_clock_fraction = o.min_clock_fraction;
  th.max_reason_fraction = o.max_reason_fraction;
  th.max_throughput_drop = o.max_throughput_drop;
  return th;
}

// The sustained-load verdict of one finished run (the results of the sustain scenario) and the 1 s
// series behind it: throughput beside the clocks, power, temperature and reasons of the same window.
SustainReport sustain_report(const PlatformOptions& o, const ChildRun& run) {
  SustainReport r;
  r.duration_s = o.duration_s;
  const auto phases = run.results ? exclusive_phases(*run.results) : std::vector<ExclusivePhase>{};
  if (phases.empty()) {
    r.verdict = LoadVerdict::inconclusive;
    r.evidence = {"the sustained-load run measured nothing: " + run.output};
    r.exit_code = run.exit_code == kExitPass ? kExitWorkloadFailed : run.exit_code;
    return r;
  }
  const ExclusivePhase& e = phases.front();
  const PhaseResult& p = e.phase;
  r.thresholds = sustain_thresholds(o);
  const SustainThresholds& th = r.thresholds;
  const auto throughputs = window_throughputs(p.start_ns, p.duration_s, e.work.amount, th.window_s);
  const SustainVerdict v = sustained_load_verdict(p.telemetry, throughputs, th);
  const std::int64_t t0 = p.start_ns.empty() ? 0 : *std::min_element(p.start_ns.begin(), p.start_ns.end());
  const auto telemetry = telemetry_windows(p.telemetry, t0, throughputs.size(), th.window_s);
  r.measured = true;
  r.verdict = v.verdict;
  r.evidence = v.evidence;
  r.workload = e.workload;
  r.throughput_unit = p.throughput_unit;
  for (std::size_t k = 0; k < throughputs.size(); ++k)
    r.windows.push_back({static_cast<double>(k) * th.window_s, throughputs[k], telemetry[k]});
  r.telemetry_readings = p.telemetry.size();
  r.exit_code = sustain_exit_code(v.verdict, run.exit_code);
  return r;
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

CheckResult sustained_load_check(const std::string& sustain_json);

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

}  // namespace

int sustain_command(const PlatformOptions& o) {
  load_nvml_for("sustain");
  const std::string start_time = utc_now("%Y-%m-%dT%H:%M:%SZ");
  const std::string out_dir = o.out.empty() ? default_out("sustain") : o.out;
  check_platform_outputs(o, out_dir, {"sustain.json"});
  const OutputDir folder("--out", out_dir, {"sustain.json"}, o.force);
  const std::string& out = folder.path();
  const std::string scenario = write_scenario(out, sustain_scenario(o.backend, o.duration_s));
  // One round: a sustained load must not pause between blocks (the clocks would recover in the gaps).
  const ChildRun run = run_self(o, {"--mode", "exclusive", "--backend", o.backend, "--device", std::to_string(o.device),
                                 "--scenario", scenario, "--telemetry-hz", arg(o.telemetry_hz), "--rounds", "1"},
                                out + "/run", o.duration_s + 300.0);
  SustainReport report = sustain_report(o, run);
  report.run_results = out + "/run/results.json";
  report.host = node_name();
  write_file_atomic(out + "/sustain.json", sustain_to_json(report).dump(2) + "\n");
  if (!o.junit.empty()) write_file_atomic(o.junit, sustain_junit_xml(report));
  std::cout << sustain_markdown(report) << "\nresults: " << out << "/sustain.json\n";
  if (o.history.empty()) return report.exit_code;
  HistoryRun row;
  row.command = "sustain";
  row.start_time = start_time;
  row.verdict = to_string(report.verdict);
  return record_platform_history(o, row, {sustained_load_check(out + "/sustain.json")}, out + "/sustain.json",
                                 report.exit_code);
}

// ---- baseline ----

int baseline_command(const PlatformOptions& o) {
  if (o.out.empty()) throw InputError("baseline: --out FILE is required");
  std::error_code ec;
  const auto st = std::filesystem::symlink_status(o.out, ec);
  if (std::filesystem::is_directory(st) || std::filesystem::is_symlink(st))
    throw InputError("baseline --out " + o.out + ": is a " + (std::filesystem::is_symlink(st) ? "symlink" : "folder") +
                     "; give the file to write");
  if (std::filesystem::exists(st) && !o.force)
    throw InputError("baseline --out " + o.out + ": exists; give a new file, or --force to replace it");
  OutputPlan plan;  // and never a device, FIFO or socket, even with --force (core/output_paths.h)
  plan.force = o.force;
  plan.outputs = {{"baseline --out", o.out}};
  check_output_paths(plan);
  // The measuring run's own folder: it takes the lock itself (run_self passes --force: the folder is
  // this file's, replaced with it).
  const std::string dir = o.out + ".d";
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(dir, ec)))
    throw InputError("baseline --out " + o.out + ": " + dir + " is a symlink");
  std::filesystem::create_directories(dir, ec);
  const json stability = stability_scenario(o.backend, 2.0, o.duration_s);
  const std::string scenario = write_scenario(dir, stability);
  // One tenant after another: warm-up, duration and a few seconds of start-up each.
  const double limit_s = static_cast<double>(stability.at("tenants").size()) * (o.duration_s + 2.0 + 3.0) + 300.0;
  const ChildRun run = run_self(o, {"--mode", "exclusive", "--backend", o.backend, "--device", std::to_string(o.device),
                                 "--scenario", scenario, "--telemetry-hz", arg(o.telemetry_hz)},
                                dir, limit_s);
  if (!run.results) {
    std::cerr << run.output;
    return run.exit_code;
  }
  std::ifstream in(dir + "/results.json", std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  write_file_atomic(o.out, text);  // atomically, never through a symlink
  std::cout << "baseline: " << o.out << " (exclusive phases of vet-stability; give it to `vet --baseline`)\n";
  return run.exit_code;
}

namespace {

// ---- vet ----

// A `baseline` file: its exclusive phases and the GPU it was measured on ("" when the file does not say).
struct Baseline {
  std::vector<ExclusivePhase> phases;
  std::string gpu_name;
  const ExclusivePhase* find(const ExclusivePhase& here) const {
    for (const auto& b : phases)
      if (b.name == here.name && b.workload == here.workload) return &b;
    return nullptr;
  }
};

[[noreturn]] void refuse_baseline(const std::string& path, const std::string& why) {
  throw InputError("--baseline " + path + ": " + why);
}

// The exclusive phases of a `baseline` file, or InputError with a one-line reason why it cannot be
// one: read before anything is measured, so a wrong file costs nothing.
Baseline read_baseline(const std::string& path) {
  try {
    const std::vector<std::string> modes = results_file_modes(path);
    if (!modes.empty() && modes.front() == "mig")
      refuse_baseline(path, "written by a mig run; a baseline must come from an exclusive card");
    const ResultsDocument doc = read_results_file(path);
    Baseline b;
    b.phases = exclusive_phases(doc);
    if (!doc.results.runs.empty()) {
      const auto& dev = doc.results.runs.front().mode_config.device;
      if (dev && dev->name) b.gpu_name = *dev->name;
    }
    if (b.phases.empty()) refuse_baseline(path, "no exclusive phase with raw samples in it (written with --no-raw?)");
    for (const auto& p : b.phases)
      if (p.phase.source != PhaseSource::measured)
        refuse_baseline(path, p.name + "'s exclusive phase was not measured on a whole card (" +
                                  to_string(p.phase.source) + ")");
    return b;
  } catch (const ResultsFileError& e) {
    throw InputError(std::string("--baseline ") + e.what());
  }
}

// The budget, split: 8% idle window (2-5 s), 45% stability, 40% sustained load; the rest is start-up.
struct VetPlan {
  VetSteps steps;
  std::size_t stability_workloads = 3;
};

VetPlan plan_vet(const PlatformOptions& o) {
  VetPlan p;
  p.stability_workloads = o.backend == "cuda" ? 5 : 3;
  p.steps.idle_window_s = std::clamp(0.08 * o.budget_s, 2.0, 5.0);
  p.steps.stability_phase_s = std::max(3.0, 0.45 * o.budget_s / static_cast<double>(p.stability_workloads) - 2.0);
  p.steps.sustain_s = std::max(5.0, 0.40 * o.budget_s - 2.0);
  return p;
}

// Step 2, stability: exclusive phases of compute, bandwidth and latency workloads. With a baseline,
// each workload runs as the baseline's did (e.g. the latency workload at the baseline's arrival
// rate), so that the P95 comparison is at the same offered load.
struct StabilityStep {
  ChildRun run;
  std::vector<ExclusivePhase> phases;
};

StabilityStep run_stability_step(const PlatformOptions& o, const VetPlan& plan, const Baseline& baseline,
                                 const std::string& out) {
  json stability = stability_scenario(o.backend, 1.0, plan.steps.stability_phase_s);
  for (auto& t : stability["tenants"])
    for (const auto& b : baseline.phases)
      if (b.name == t.at("name") && b.workload == t.at("workload") && !b.phase.outcome.resolved.empty())
        t["params"].update(b.phase.outcome.resolved);
  const std::string file = write_scenario(out, stability);
  StabilityStep step;
  step.run = run_self(o, {"--mode", "exclusive", "--backend", o.backend, "--device", std::to_string(o.device), "--scenario",
                          file, "--telemetry-hz", arg(o.telemetry_hz)},
                      out + "/stability",
                      static_cast<double>(plan.stability_workloads) * (plan.steps.stability_phase_s + 1.0) + 300.0);
  if (step.run.results) step.phases = exclusive_phases(*step.run.results);
  return step;
}

// What the stability run adds to the probe's facts: GPU utilisation under our own load, and the H2D
// bandwidths (h2d counts bytes one way: B/s -> GB/s).
void add_load_facts(ProbeFacts& facts, const std::vector<ExclusivePhase>& phases) {
  std::vector<double> util;
  for (const auto& e : phases)
    for (const auto& s : e.phase.telemetry)
      if (s.r.util_gpu_pct) util.push_back(*s.r.util_gpu_pct);
  if (!util.empty()) facts.load_util_pct = mean(util);
  for (const auto& e : phases) {
    if (e.name == "h2d-pinned") facts.host.h2d_pinned_gbps = e.phase.throughput / 1e9;
    if (e.name == "h2d-pageable") facts.host.h2d_pageable_gbps = e.phase.throughput / 1e9;
  }
}

// Stability is about throughput; an open-loop latency workload's throughput is its arrival rate, so
// it is judged against the baseline instead.
std::vector<CheckResult> stability_checks(const StabilityStep& step, std::size_t expected) {
  std::vector<CheckResult> checks;
  for (const auto& e : step.phases)
    if (e.workload != "h2d" && !e.by_latency()) checks.push_back(stability_check(e));
  if (step.phases.size() < expected)
    checks.push_back({"stability", "Throughput stability", CheckOutcome::fail,
                      "the stability run did not finish (exit " + std::to_string(step.run.exit_code) + ")",
                      "every stability workload measured", "DESIGN.md section 6"});
  return checks;
}

// Step 3's check, from the sustain.json the sustained-load step wrote.
CheckResult sustained_load_check(const std::string& sustain_json) {
  CheckResult c;
  c.id = "sustained_load";
  c.title = "Sustained load (throttling)";
  c.threshold = "FAIL: median SM clock over the last half < 70% of max, or 0xE8 reasons in > 1% of readings; "
                "WARN: last-minute throughput > 5% below the first, or enforced power limit below default";
  c.source = "seed 002, seed 003; DCGM's 0xE8 mask; DESIGN.md section 5";
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

// Steps 4 and 5: P95 against an exclusive card of the same model, and the cost advice on the first
// workload the baseline has.
void compare_with_baseline(const PlatformOptions& o, const ProbeFacts& facts, const Baseline& baseline,
                           const std::vector<ExclusivePhase>& phases, VetReport& report) {
  report.checks.push_back(check_result(baseline_model_check(baseline.gpu_name, facts.gpu.name, o.baseline)));
  bool all_passed = !baseline.phases.empty();
  const ExclusivePhase* first_here = nullptr;
  const ExclusivePhase* first_base = nullptr;
  for (const auto& here : phases) {
    const ExclusivePhase* b = baseline.find(here);
    if (b && !first_here) {
      first_here = &here;
      first_base = b;
    }
    report.checks.push_back(p95_against_baseline(here, b, o.cutoff, o.baseline));
    all_passed &= report.checks.back().status == CheckOutcome::pass;
  }
  if (!o.price_exclusive || !first_here) return;
  const CostAdvice a = cost_advice(first_base->phase.throughput, first_here->phase.throughput, *o.price_exclusive,
                                   *o.price_shared, all_passed);
  report.cost = cost_report(a, *first_here);
  report.checks.push_back({"cost", "Cost per unit of work", CheckOutcome::pass,
                           "recommend " + std::string(recommendation_name(a.recommendation)) + ": " + a.reason,
                           "cost per unit = price / throughput; never the shared option when the P95 cutoff fails",
                           "seed 000: switch when T_share x P_share > T_excl x P_excl; DESIGN.md section 6"});
}

CheckResult cost_without_baseline() {
  return {"cost", "Cost per unit of work", CheckOutcome::unknown,
          "prices given but no --baseline: the exclusive card's throughput is unknown",
          "needs the exclusive card's throughput (--baseline)", "DESIGN.md section 6"};
}

VetReport new_vet_report(const PlatformOptions& o, const VetPlan& plan, const std::string& out) {
  VetReport r;
  r.start_time = utc_now("%Y-%m-%dT%H:%M:%SZ");
  r.host = node_name();
  r.device = o.device;
  r.backend = o.backend;
  r.budget_s = o.budget_s;
  r.steps = plan.steps;
  r.baseline = o.baseline;
  r.stability_results = out + "/stability/results.json";
  r.sustain_results = out + "/sustain/sustain.json";
  return r;
}

// vet.json and vet.md (and --html, --junit), the summary on stdout, --history; the exit code.
int write_vet_report(const PlatformOptions& o, VetReport& report, const std::string& out) {
  report.verdict = vet_verdict(report.checks);
  write_file_atomic(out + "/vet.json", vet_to_json(report).dump(2) + "\n");
  const std::string md = vet_markdown(report);
  write_file_atomic(out + "/vet.md", md);
  if (!o.html.empty()) write_file_atomic(o.html, vet_html_report(report));
  if (!o.junit.empty()) write_file_atomic(o.junit, checks_junit_xml("interference-bench vet", report.checks));
  std::cout << md << "\nresults: " << out << "/vet.json\n";
  const int code = report.interrupted                       ? kExitInterrupted
                   : report.verdict == CheckOutcome::fail ? kExitVerdictFailed
                                                           : kExitPass;
  if (o.history.empty()) return code;
  HistoryRun row;
  row.command = "vet";
  row.start_time = report.start_time;
  row.verdict = to_string(report.verdict);
  return record_platform_history(o, row, report.checks, out + "/vet.json", code);
}

}  // namespace

int vet_command(const PlatformOptions& o) {
  auto nvml = load_nvml_for("vet");
  check_device_index(*nvml, o.device);
  if (o.price_exclusive.has_value() != o.price_shared.has_value())
    throw InputError("vet: give both --price-exclusive and --price-shared, or neither");
  const Baseline baseline = o.baseline.empty() ? Baseline{} : read_baseline(o.baseline);
  const std::string out_dir = o.out.empty() ? default_out("vet") : o.out;
  check_platform_outputs(o, out_dir, {"vet.json", "vet.md"});
  OutputDir folder("--out", out_dir, {"vet.json", "vet.md"}, o.force);
  const std::string& out = folder.path();
  const VetPlan plan = plan_vet(o);
  VetReport report = new_vet_report(o, plan, out);
  const auto stopped = [&o] { return o.stop && o.stop(); };

  // 1. probe: what the platform is, while we run nothing.
  ProbeFacts facts =
      collect_probe_facts(*nvml, static_cast<unsigned>(o.device), plan.steps.idle_window_s, o.telemetry_hz, o.stop);
  // 2. stability, whose load also tells the probe's load checks what they need.
  const StabilityStep stability = run_stability_step(o, plan, baseline, out);
  add_load_facts(facts, stability.phases);
  report.checks = check_results(evaluate_probe(facts));
  for (auto& c : stability_checks(stability, plan.stability_workloads)) report.checks.push_back(std::move(c));
  // 3. sustained load (not after a stop signal: what finished is written now).
  report.interrupted = stability.run.exit_code == kExitInterrupted || stopped();
  if (!report.interrupted) {
    const ChildRun sustain = run_self(o, {"sustain", "--backend", o.backend, "--device", std::to_string(o.device),
                                          "--duration", arg(plan.steps.sustain_s), "--telemetry-hz", arg(o.telemetry_hz)},
                                      out + "/sustain", plan.steps.sustain_s + 300.0);
    report.checks.push_back(sustained_load_check(report.sustain_results));
    report.interrupted = sustain.exit_code == kExitInterrupted || stopped();
  }
  // 4. and 5.
  if (!o.baseline.empty()) compare_with_baseline(o, facts, baseline, stability.phases, report);
  else if (o.price_exclusive) report.checks.push_back(cost_without_baseline());
  return write_vet_report(o, report, out);
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

}  // namespace ib
