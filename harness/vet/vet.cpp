// `vet`: a platform judged in one command, step by step: the probe (what it is, idle), stability (exclusive phases
// of compute, bandwidth and latency workloads), sustained load, and with a baseline the P95 against an exclusive card
// and the cost advice; vet.json, vet.md and --html/--junit/--history.
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
#include "reports/junit/platform_junit.h"
#include "harness/history/history.h"
#include "reports/html/platform_html.h"
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
                      "every stability workload measured", "docs/design.md section 6"});
  return checks;
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
                           "seed 000: switch when T_share x P_share > T_excl x P_excl; docs/design.md section 6"});
}

CheckResult cost_without_baseline() {
  return {"cost", "Cost per unit of work", CheckOutcome::unknown,
          "prices given but no --baseline: the exclusive card's throughput is unknown",
          "needs the exclusive card's throughput (--baseline)", "docs/design.md section 6"};
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

}  // namespace ib
