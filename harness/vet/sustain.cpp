// `sustain` (a power-heavy load held for a while, judged on its clocks, power and throughput, docs/design.md section 4)
// and `baseline` (the exclusive phases of vet's stability run, saved for `vet --baseline` on another card).
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

}  // namespace ib
