#include "harness/vet/platform.h"

#include "harness/core/files.h"
#include "harness/analysis/analysis.h"
#include "harness/core/exit_codes.h"
#include "harness/core/text.h"
#include "harness/core/clock.h"
#include "harness/stats/metrics.h"
#include "harness/modes/mode_setup.h"
#include "harness/nvml/nvml.h"
#include "harness/vet/probe.h"
#include "harness/process/process.h"
#include "harness/stats/stats.h"
#include "harness/nvml/telemetry.h"
#include "reports/json_writer.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace ib {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

// ---- helpers ----

// A number for a child's command line: the shortest text that reads back as the same double.
std::string arg(double v) { return fmt::format("{}", v); }

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  return json::parse(in, nullptr, false);
}

}  // namespace

ChildRun run_self(const PlatformOptions& o, std::vector<std::string> args, const std::string& out_dir, double timeout_s) {
  args.insert(args.begin(), self_exe_path());
  args.insert(args.end(), {"--out", out_dir, "--max-foreign-cpus", arg(o.max_foreign_cpus), "--max-steal-cpus",
                           arg(o.max_steal_cpus)});
  const CommandResult r = run_helper_command(args, {"INTERFERENCE_BENCH_CHILD=1"}, "", timeout_s);
  ChildRun c;
  c.output = r.output;
  c.exit_code = r.timed_out ? kExitWorkloadFailed
                            : r.status.exit_code.value_or(r.status.signal ? 128 + *r.status.signal : kExitCannotRun);
  c.results = read_json(out_dir + "/results.json");
  if (c.results.is_discarded()) c.results = nullptr;
  return c;
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

template <typename T>
std::optional<T> at_opt(const json& column, std::size_t i) {
  if (!column.is_array() || i >= column.size() || column[i].is_null()) return std::nullopt;
  return column[i].get<T>();
}

// The telemetry series a child wrote back into readings.
std::vector<TelemetrySample> telemetry_from_json(const json& series) {
  std::vector<TelemetrySample> out;
  if (!series.is_object() || !series.contains("t_ns")) return out;
  const auto& t = series.at("t_ns");
  for (std::size_t i = 0; i < t.size(); ++i) {
    TelemetrySample s;
    s.t_ns = t[i].get<std::int64_t>();
    s.r.sm_clock_mhz = at_opt<unsigned>(series.value("sm_clock_mhz", json()), i);
    s.r.max_sm_clock_mhz = at_opt<unsigned>(series.value("max_sm_clock_mhz", json()), i);
    s.r.mem_clock_mhz = at_opt<unsigned>(series.value("mem_clock_mhz", json()), i);
    s.r.power_w = at_opt<double>(series.value("power_w", json()), i);
    s.r.power_limit_w = at_opt<double>(series.value("power_limit_w", json()), i);
    s.r.default_power_limit_w = at_opt<double>(series.value("default_power_limit_w", json()), i);
    s.r.temperature_c = at_opt<unsigned>(series.value("temperature_c", json()), i);
    s.r.clock_event_reasons = at_opt<unsigned long long>(series.value("clock_event_reasons", json()), i);
    s.r.util_gpu_pct = at_opt<unsigned>(series.value("util_gpu_pct", json()), i);
    out.push_back(s);
  }
  return out;
}

// One tenant's exclusive phase from a results document.
struct ExclusivePhase {
  std::string name;
  std::string workload;
  double work = 0;
  std::string unit;
  std::vector<std::int64_t> start_ns;
  std::vector<double> duration_s;
  std::vector<int> block;  // each sample's block (one block in files written before schema 2.0)
  double throughput = 0;
  std::string throughput_unit;
  double window_cv = NAN;
  double sample_cv = NAN;
  json telemetry;
  std::vector<double> latencies_s;  // per-request latencies of a latency-type workload (else empty)
  json resolved;                    // what the workload chose in setup (worker.resolved), e.g. its rate
  std::string source;  // phases.exclusive.source: measured, baseline, largest_mig_instance, mig_instance

  // What a P95 comparison judges, as finalize_run does: per-request latency where the workload has it
  // (an open-loop sample lasts as long as its arrivals do), else sample time; the counted values by block.
  std::vector<std::vector<double>> judged_blocks;
  std::size_t judged_count() const {
    std::size_t n = 0;
    for (const auto& b : judged_blocks) n += b.size();
    return n;
  }
  const char* basis() const { return latencies_s.empty() ? "sample time" : "per-request latency"; }
};

std::vector<ExclusivePhase> exclusive_phases(const json& results) {
  std::vector<ExclusivePhase> out;
  if (!results.is_object() || !results.contains("runs") || results["runs"].empty()) return out;
  for (const auto& t : results["runs"][0].at("tenants")) {
    const auto& ph = t.at("phases").at("exclusive");
    if (ph.at("worker").at("status") != "ok" || !ph.contains("samples")) continue;
    ExclusivePhase e;
    e.name = t.at("name");
    e.workload = t.at("workload");
    e.work = t.at("work_per_sample").at("value");
    e.unit = t.at("work_per_sample").at("unit");
    e.start_ns = ph.at("samples").at("start_ns").get<std::vector<std::int64_t>>();
    e.duration_s = ph.at("samples").at("duration_s").get<std::vector<double>>();
    e.throughput = ph.at("throughput").at("value").is_null() ? NAN : ph.at("throughput").at("value").get<double>();
    e.throughput_unit = ph.at("throughput").at("unit");
    e.window_cv = ph.at("window_cv").is_null() ? NAN : ph.at("window_cv").get<double>();
    e.sample_cv = ph.at("stats").at("sample_cv").is_null() ? NAN : ph.at("stats").at("sample_cv").get<double>();
    e.telemetry = ph.value("telemetry", json());
    PhaseResult p;  // the counted values by block, as the run's own analysis groups them
    p.start_ns = e.start_ns;
    p.duration_s = e.duration_s;
    if (ph.at("samples").contains("latency_s")) {
      e.latencies_s = ph.at("samples").at("latency_s").get<std::vector<double>>();
      p.latencies_s = e.latencies_s;
      p.latency_count = ph.at("samples").at("latency_count").get<std::vector<std::uint32_t>>();
    }
    read_sample_flags(ph.at("samples"), p);
    e.judged_blocks = counted_by_block(p, !e.latencies_s.empty());
    e.block = p.block;
    e.resolved = ph.at("worker").value("resolved", json::object());
    e.source = ph.value("source", "measured");
    out.push_back(std::move(e));
  }
  return out;
}

// ---- formatting (no computation below this line in this section) ----

ojson check_json(const ProbeCheck& c) {
  return {{"id", c.id},
          {"title", c.title},
          {"status", check_status_name(c.status)},
          {"evidence", c.evidence},
          {"threshold", c.threshold},
          {"source", c.source}};
}

std::string checks_markdown(const std::string& title, const std::vector<ProbeCheck>& checks) {
  std::ostringstream os;
  os << "## " << title << "\n\n| check | status | evidence | threshold | source |\n|---|---|---|---|---|\n";
  for (const auto& c : checks)
    os << "| " << c.title << " | **" << check_status_name(c.status) << "** | " << c.evidence << " | " << c.threshold
       << " | " << c.source << " |\n";
  return os.str();
}

// ---- the checks the measuring steps add to the probe's ----

ProbeCheck stability_check(const ExclusivePhase& e) {
  ProbeCheck c;
  c.id = "stability:" + e.name;
  c.title = "Throughput stability (" + e.workload + ")";
  c.threshold = "CV of 1 s window throughput: pass <= 1.5%, warn <= 10%, fail above";
  c.source = "seed 003 (good platforms fluctuate <= 1.5%; power-locked shared cards > 10%); DESIGN.md section 4";
  // The run's window CV pools 1 s windows inside each block (a window never spans the gap between blocks).
  std::map<int, std::pair<std::vector<std::int64_t>, std::vector<double>>> by_block;
  for (std::size_t i = 0; i < e.start_ns.size(); ++i) {
    auto& [st, du] = by_block[i < e.block.size() ? e.block[i] : 0];
    st.push_back(e.start_ns[i]);
    du.push_back(e.duration_s[i]);
  }
  std::size_t windows = 0;
  for (const auto& [k, sd] : by_block) windows += window_throughputs(sd.first, sd.second, e.work).size();
  c.evidence = "window CV " + percent(e.window_cv) + " over " + std::to_string(windows) +
               " windows of 1 s; sample-time CV " + percent(e.sample_cv) + "; " + significant(e.throughput, 4) + " " + e.throughput_unit;
  if (!std::isfinite(e.window_cv)) c.status = CheckStatus::unknown;
  else if (e.window_cv <= 0.015) c.status = CheckStatus::pass;
  else if (e.window_cv <= 0.10) c.status = CheckStatus::warn;
  else c.status = CheckStatus::fail;
  return c;
}

ProbeCheck sustain_check(const json& sustain) {
  ProbeCheck c;
  c.id = "sustained_load";
  c.title = "Sustained load (throttling)";
  c.threshold = "FAIL: median SM clock over the last half < 70% of max, or 0xE8 reasons in > 1% of readings; "
                "WARN: last-minute throughput > 5% below the first, or enforced power limit below default";
  c.source = "seed 002, seed 003; DCGM's 0xE8 mask; DESIGN.md section 5";
  if (!sustain.is_object()) {
    c.status = CheckStatus::unknown;
    c.evidence = "the sustained-load step wrote no result";
    return c;
  }
  const std::string v = sustain.value("verdict", "inconclusive");
  c.status = v == "pass" ? CheckStatus::pass : v == "warn" ? CheckStatus::warn : v == "fail" ? CheckStatus::fail
                                                                                            : CheckStatus::unknown;
  std::string ev;
  for (const auto& line : sustain.value("evidence", json::array())) ev += (ev.empty() ? "" : "; ") + line.get<std::string>();
  c.evidence = ev;
  return c;
}

std::string default_out(const std::string& what) {
  return "interference-bench-results/" + what + "-" + utc_now("%Y%m%d-%H%M%S");
}

std::unique_ptr<Nvml> nvml_or_refuse(const std::string& command, std::string& error) {
  try {
    return Nvml::load();
  } catch (const NvmlError& e) {
    error = command + " needs NVML to read the GPU: " + e.what();
    return nullptr;
  }
}

// ---- commands ----

int probe_command(const PlatformOptions& o) {
  std::string error;
  auto nvml = nvml_or_refuse("probe", error);
  if (!nvml) {
    std::cerr << "interference-bench: " << error << "\n";
    return kExitCannotRun;
  }
  const ProbeFacts facts = collect_probe_facts(*nvml, static_cast<unsigned>(o.device), o.idle_window_s, o.telemetry_hz);
  const auto checks = evaluate_probe(facts);
  bool failed = false;
  for (const auto& c : checks) failed |= c.status == CheckStatus::fail;
  if (o.json) {
    ojson doc = {{"schema_version", "1.0"}, {"kind", "probe"}, {"device", o.device}, {"idle_window_s", o.idle_window_s}};
    doc["checks"] = ojson::array();
    for (const auto& c : checks) doc["checks"].push_back(check_json(c));
    doc["pass"] = !failed;
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << checks_markdown("interference-bench probe — GPU " + std::to_string(o.device), checks);
  }
  return failed ? kExitVerdictFailed : kExitPass;
}

// Sustained-load verdict of one finished run (the results of the sustain scenario).
struct SustainOutcome {
  int exit_code = kExitPass;
  ojson report;
};

SustainOutcome evaluate_sustain(const PlatformOptions& o, const ChildRun& run) {
  SustainOutcome out;
  const auto phases = exclusive_phases(run.results);
  if (phases.empty()) {
    out.exit_code = run.exit_code == kExitPass ? kExitWorkloadFailed : run.exit_code;
    out.report = {{"verdict", "inconclusive"}, {"evidence", {"the sustained-load run measured nothing: " + run.output}}};
    return out;
  }
  const ExclusivePhase& e = phases.front();
  const auto telemetry = telemetry_from_json(e.telemetry.value("series", json()));
  SustainThresholds th;
  th.min_clock_fraction = o.min_clock_fraction;
  th.max_reason_fraction = o.max_reason_fraction;
  th.max_throughput_drop = o.max_throughput_drop;
  const auto windows = window_throughputs(e.start_ns, e.duration_s, e.work, th.window_s);
  const SustainVerdict v = sustained_load_verdict(telemetry, windows, th);
  // The 1 s series: throughput beside the clocks, power, temperature and reasons of the same window.
  const std::int64_t t0 = e.start_ns.empty() ? 0 : *std::min_element(e.start_ns.begin(), e.start_ns.end());
  const auto tw = telemetry_windows(telemetry, t0, windows.size(), th.window_s);
  ojson series = ojson::array();
  auto opt = [](const auto& o) { return o ? ojson(*o) : ojson(nullptr); };
  for (std::size_t k = 0; k < windows.size(); ++k)
    series.push_back({{"t_s", k * th.window_s},
                      {"throughput", windows[k]},
                      {"readings", tw[k].readings},
                      {"median_sm_clock_mhz", opt(tw[k].median_sm_clock_mhz)},
                      {"mean_power_w", opt(tw[k].mean_power_w)},
                      {"max_temperature_c", opt(tw[k].max_temperature_c)},
                      {"reasons", tw[k].reasons ? ojson(reason_names(*tw[k].reasons)) : ojson(nullptr)}});
  out.report = {{"verdict", load_verdict_name(v.verdict)},
                {"evidence", v.evidence},
                {"workload", e.workload},
                {"throughput_unit", e.throughput_unit},
                {"window_throughputs", windows},
                {"windows", series},
                {"telemetry_readings", telemetry.size()},
                {"thresholds",
                 {{"min_clock_fraction", th.min_clock_fraction},
                  {"fail_reasons", th.fail_reasons},
                  {"max_reason_fraction", th.max_reason_fraction},
                  {"max_throughput_drop", th.max_throughput_drop},
                  {"compare_window_s", th.compare_window_s}}}};
  if (v.verdict == LoadVerdict::fail || v.verdict == LoadVerdict::inconclusive) out.exit_code = kExitVerdictFailed;
  if (run.exit_code == kExitWorkloadFailed || run.exit_code == kExitInterrupted) out.exit_code = run.exit_code;
  return out;
}

int sustain_command(const PlatformOptions& o) {
  std::string error;
  if (!nvml_or_refuse("sustain", error)) {
    std::cerr << "interference-bench: " << error << "\n";
    return kExitCannotRun;
  }
  const std::string out = o.out.empty() ? default_out("sustain") : o.out;
  std::filesystem::create_directories(out);
  const std::string scenario = write_scenario(out, sustain_scenario(o.backend, o.duration_s));
  // One round: a sustained load must not pause between blocks (the clocks would recover in the gaps).
  const ChildRun run = run_self(o, {"--mode", "exclusive", "--backend", o.backend, "--device", std::to_string(o.device),
                                 "--scenario", scenario, "--telemetry-hz", arg(o.telemetry_hz), "--rounds", "1"},
                                out + "/run", o.duration_s + 300.0);
  SustainOutcome s = evaluate_sustain(o, run);
  s.report["run"] = out + "/run/results.json";
  write_file_atomic(out + "/sustain.json", s.report.dump(2) + "\n");
  std::cout << "## interference-bench sustain — " << o.duration_s << " s\n\n**" << s.report["verdict"].get<std::string>()
            << "**\n\n";
  for (const auto& line : s.report["evidence"]) std::cout << "- " << line.get<std::string>() << "\n";
  std::cout << "\nresults: " << out << "/sustain.json\n";
  return s.exit_code;
}

int baseline_command(const PlatformOptions& o) {
  if (o.out.empty()) {
    std::cerr << "interference-bench: baseline: --out FILE is required\n";
    return kExitBadInput;
  }
  const std::string dir = o.out + ".d";
  std::filesystem::create_directories(dir);
  const json stability = stability_scenario(o.backend, 2.0, o.duration_s);
  const std::string scenario = write_scenario(dir, stability);
  // One tenant after another: warm-up, duration and a few seconds of start-up each.
  const double limit_s = static_cast<double>(stability.at("tenants").size()) * (o.duration_s + 2.0 + 3.0) + 300.0;
  const ChildRun run = run_self(o, {"--mode", "exclusive", "--backend", o.backend, "--device", std::to_string(o.device),
                                 "--scenario", scenario, "--telemetry-hz", arg(o.telemetry_hz)},
                                dir, limit_s);
  if (run.results.is_null()) {
    std::cerr << run.output;
    return run.exit_code;
  }
  std::filesystem::copy_file(dir + "/results.json", o.out, std::filesystem::copy_options::overwrite_existing);
  std::cout << "baseline: " << o.out << " (exclusive phases of vet-stability; give it to `vet --baseline`)\n";
  return run.exit_code;
}

// A `baseline` file: its exclusive phases and the GPU it was measured on ("" when the file does not say).
struct Baseline {
  std::vector<ExclusivePhase> phases;
  std::string gpu_name;
};

// The exclusive phases of a `baseline` file, or a one-line reason why it cannot be one: read before
// anything is measured, so a wrong file costs nothing.
Baseline read_baseline(const std::string& path, std::string& error) {
  const json doc = read_json(path);
  if (!doc.is_object() || !doc.contains("runs") || !doc["runs"].is_array() || doc["runs"].empty()) {
    error = "--baseline " + path + ": not an interference-bench results file (no runs[]); write one with `baseline --out`";
    return {};
  }
  std::vector<ExclusivePhase> phases;
  std::string gpu_name;
  try {
    const std::string mode = doc["runs"][0].value("mode", "");
    const json& dev = doc["runs"][0].value("mode_config", json::object()).value("device", json::object());
    if (dev.contains("name") && dev["name"].is_string()) gpu_name = dev["name"].get<std::string>();
    if (mode == "mig") {
      error = "--baseline " + path + ": written by a mig run; a baseline must come from an exclusive card";
      return {};
    }
    phases = exclusive_phases(doc);
  } catch (const json::exception& e) {
    error = "--baseline " + path + ": not a results file of this version (" + e.what() + ")";
    return {};
  }
  if (phases.empty()) error = "--baseline " + path + ": no exclusive phase with raw samples in it (written with --no-raw?)";
  for (const auto& p : phases)
    if (p.source != "measured") {
      error = "--baseline " + path + ": " + p.name + "'s exclusive phase was not measured on a whole card (" + p.source + ")";
      return {};
    }
  if (!error.empty()) return {};
  return {phases, gpu_name};
}

int vet_command(const PlatformOptions& o) {
  std::string error;
  auto nvml = nvml_or_refuse("vet", error);
  if (!nvml) {
    std::cerr << "interference-bench: " << error << "\n";
    return kExitCannotRun;
  }
  if (o.price_exclusive.has_value() != o.price_shared.has_value()) {
    std::cerr << "interference-bench: vet: give both --price-exclusive and --price-shared, or neither\n";
    return kExitBadInput;
  }
  Baseline baseline;
  if (!o.baseline.empty()) {
    baseline = read_baseline(o.baseline, error);
    if (baseline.phases.empty()) {
      std::cerr << "interference-bench: " << error << "\n";
      return kExitBadInput;
    }
  }
  const std::string out = o.out.empty() ? default_out("vet") : o.out;
  std::filesystem::create_directories(out);
  // The budget, split: 8% idle window (2-5 s), 45% stability, 40% sustained load; the rest is start-up.
  const double budget = o.budget_s;
  const double idle = std::clamp(0.08 * budget, 2.0, 5.0);
  const std::size_t n_stability = o.backend == "cuda" ? 5 : 3;
  const double stability_phase = std::max(3.0, 0.45 * budget / static_cast<double>(n_stability) - 2.0);
  const double sustain_s = std::max(5.0, 0.40 * budget - 2.0);

  // 1. probe: what the platform is, while we run nothing.
  ProbeFacts facts = collect_probe_facts(*nvml, static_cast<unsigned>(o.device), idle, o.telemetry_hz);
  const std::vector<ExclusivePhase>& base = baseline.phases;

  // 2. stability: exclusive phases of compute, bandwidth and latency workloads. With a baseline, each
  // workload runs as the baseline's did (e.g. the latency workload at the baseline's arrival rate), so
  // that the P95 comparison below is at the same offered load.
  json stability = stability_scenario(o.backend, 1.0, stability_phase);
  for (auto& t : stability["tenants"])
    for (const auto& b : base)
      if (b.name == t.at("name") && b.workload == t.at("workload") && !b.resolved.empty()) t["params"].update(b.resolved);
  const std::string stability_file = write_scenario(out, stability);
  const ChildRun stability_run =
      run_self(o, {"--mode", "exclusive", "--backend", o.backend, "--device", std::to_string(o.device), "--scenario",
                stability_file, "--telemetry-hz", arg(o.telemetry_hz)},
               out + "/stability", n_stability * (stability_phase + 1.0) + 300.0);
  const auto phases = exclusive_phases(stability_run.results);
  std::vector<double> util;
  for (const auto& e : phases)
    for (const auto& u : e.telemetry.value("series", json()).value("util_gpu_pct", json::array()))
      if (!u.is_null()) util.push_back(u.get<double>());
  if (!util.empty()) facts.load_util_pct = mean(util);
  for (const auto& e : phases) {  // h2d counts bytes one way: B/s -> GB/s
    if (e.name == "h2d-pinned") facts.host.h2d_pinned_gbps = e.throughput / 1e9;
    if (e.name == "h2d-pageable") facts.host.h2d_pageable_gbps = e.throughput / 1e9;
  }
  std::vector<ProbeCheck> checks = evaluate_probe(facts);
  // Stability is about throughput; an open-loop latency workload's throughput is its arrival rate, so
  // it is judged against the baseline below instead.
  for (const auto& e : phases)
    if (e.workload != "h2d" && e.latencies_s.empty()) checks.push_back(stability_check(e));
  if (phases.size() < n_stability)
    checks.push_back({"stability", "Throughput stability", CheckStatus::fail,
                      "the stability run did not finish (exit " + std::to_string(stability_run.exit_code) + ")",
                      "every stability workload measured", "DESIGN.md section 6"});

  // 3. sustained load.
  const ChildRun sustain = run_self(o, {"sustain", "--backend", o.backend, "--device", std::to_string(o.device),
                                     "--duration", arg(sustain_s), "--telemetry-hz", arg(o.telemetry_hz)},
                                    out + "/sustain", sustain_s + 300.0);
  checks.push_back(sustain_check(read_json(out + "/sustain/sustain.json")));

  // 4. P95 against an exclusive card of the same model, and 5. cost advice.
  ojson cost = nullptr;
  if (!o.baseline.empty()) {
    checks.push_back(baseline_model_check(baseline.gpu_name, facts.gpu.name, o.baseline));
    bool all_passed = !base.empty();
    const ExclusivePhase* first_here = nullptr;
    const ExclusivePhase* first_base = nullptr;
    for (const auto& here : phases) {
      const ExclusivePhase* b = nullptr;
      for (const auto& x : base)
        if (x.name == here.name && x.workload == here.workload) b = &x;
      ProbeCheck c;
      c.id = "p95_vs_exclusive:" + here.name;
      c.title = "P95 slowdown against an exclusive card (" + here.workload + ")";
      c.threshold = "p95_slowdown = P95(here) / P95(exclusive) - 1: pass when its 95% CI lies at or below " + percent(o.cutoff) +
                    ", fail when above, else unknown (at least 72 values each)";
      c.source = "seed 000 (40% cutoff); DESIGN.md section 4";
      if (!b) {
        c.status = CheckStatus::unknown;
        c.evidence = "no " + here.name + " in the baseline " + o.baseline;
        all_passed = false;
      } else {
        if (!first_here) {
          first_here = &here;
          first_base = b;
        }
        const Estimate est = p95_slowdown({here.judged_blocks}, {b->judged_blocks}, 1);
        const VerdictResult v = slowdown_verdict(b->judged_count(), here.judged_count(), est, o.cutoff);
        c.status = v.verdict == Verdict::pass ? CheckStatus::pass : v.verdict == Verdict::fail ? CheckStatus::fail
                                                                                              : CheckStatus::unknown;
        c.evidence = "p95_slowdown of " + std::string(here.basis()) + " " + percent(est.value) + " [95% CI " +
                     percent(est.ci_low) + ", " + percent(est.ci_high) + "] from " + std::to_string(here.judged_count()) +
                     " values here and " + std::to_string(b->judged_count()) + " in " + o.baseline;
        if (!b->latencies_s.empty() && b->resolved.empty())
          c.evidence += "; the baseline does not record its arrival rate, so this platform ran at its own";
        if (here.latencies_s.empty() != b->latencies_s.empty()) {
          c.status = CheckStatus::unknown;
          c.evidence = "one side has per-request latencies and the other not: not comparable";
        }
        all_passed &= c.status == CheckStatus::pass;
      }
      checks.push_back(c);
    }
    if (o.price_exclusive && first_here) {
      const CostAdvice a =
          cost_advice(first_base->throughput, first_here->throughput, *o.price_exclusive, *o.price_shared, all_passed);
      cost = {{"unit", first_here->unit},
              {"workload", first_here->workload},
              {"exclusive", {{"throughput", a.exclusive.throughput}, {"price_per_h", a.exclusive.price_per_h},
                             {"cost_per_unit", a.exclusive.cost_per_unit}}},
              {"shared", {{"throughput", a.shared.throughput}, {"price_per_h", a.shared.price_per_h},
                          {"cost_per_unit", a.shared.cost_per_unit}}},
              {"p95_cutoff_passed", a.p95_cutoff_passed},
              {"recommendation", recommendation_name(a.recommendation)},
              {"reason", a.reason}};
      checks.push_back({"cost", "Cost per unit of work", CheckStatus::pass,
                        "recommend " + std::string(recommendation_name(a.recommendation)) + ": " + a.reason,
                        "cost per unit = price / throughput; never the shared option when the P95 cutoff fails",
                        "seed 000: switch when T_share x P_share > T_excl x P_excl; DESIGN.md section 6"});
    }
  } else if (o.price_exclusive) {
    checks.push_back({"cost", "Cost per unit of work", CheckStatus::unknown,
                      "prices given but no --baseline: the exclusive card's throughput is unknown",
                      "needs the exclusive card's throughput (--baseline)", "DESIGN.md section 6"});
  }

  bool failed = false, warned = false;
  for (const auto& c : checks) {
    failed |= c.status == CheckStatus::fail;
    warned |= c.status == CheckStatus::warn;
  }
  ojson doc = {{"schema_version", "1.0"},
               {"kind", "vet"},
               {"start_time", utc_now("%Y-%m-%dT%H:%M:%SZ")},
               {"device", o.device},
               {"backend", o.backend},
               {"budget_s", budget},
               {"steps", {{"idle_window_s", idle}, {"stability_phase_s", stability_phase}, {"sustain_s", sustain_s}}},
               {"baseline", o.baseline},
               {"verdict", failed ? "fail" : warned ? "warn" : "pass"}};
  doc["checks"] = ojson::array();
  for (const auto& c : checks) doc["checks"].push_back(check_json(c));
  doc["cost"] = cost;
  doc["stability_results"] = out + "/stability/results.json";
  doc["sustain_results"] = out + "/sustain/sustain.json";
  write_file_atomic(out + "/vet.json", doc.dump(2) + "\n");
  const std::string md = checks_markdown("interference-bench vet — GPU " + std::to_string(o.device), checks) +
                         "\n**" + doc["verdict"].get<std::string>() + "**\n";
  write_file_atomic(out + "/vet.md", md);
  std::cout << md << "\nresults: " << out << "/vet.json\n";
  if (stability_run.exit_code == kExitInterrupted || sustain.exit_code == kExitInterrupted) return kExitInterrupted;
  return failed ? kExitVerdictFailed : kExitPass;
}

}  // namespace

void add_platform_commands(CLI::App& app, PlatformCommands& c) {
  PlatformOptions& o = c.options;
  auto common = [&o](CLI::App* sub) {
    sub->add_option("--device", o.device, "CUDA/NVML device index")->check(CLI::Range(0, 63));
    sub->add_option("--telemetry-hz", o.telemetry_hz, "NVML sampling rate (default 10)")->check(CLI::Range(0.1, 1000.0));
  };
  auto backend = [&o](CLI::App* sub) {
    sub->add_option("--backend", o.backend, "cuda (default) or host (CPU workloads)")->check(CLI::IsMember({"cuda", "host"}));
    // The measuring runs' foreign-load control (see `run --help`), passed on to them.
    sub->add_option("--max-foreign-cpus", o.max_foreign_cpus, "A block is contaminated above this many foreign CPUs (0.25)")
        ->check(CLI::Range(0.0, 4096.0));
    sub->add_option("--max-steal-cpus", o.max_steal_cpus, "A block is contaminated above this many stolen CPUs (0.10)")
        ->check(CLI::Range(0.0, 4096.0));
  };
  c.probe = app.add_subcommand("probe", "Check what this platform is: identity, memory, MIG, neighbours, power, PCIe, ...");
  common(c.probe);
  c.probe->add_flag("--json", o.json, "JSON on stdout");
  c.probe->add_option("--idle-window", o.idle_window_s, "Seconds of watching the GPU while running nothing (default 5)")
      ->check(CLI::Range(0.0, 3600.0));

  c.sustain = app.add_subcommand("sustain", "Power-heavy GEMM for --duration seconds: clocks, power, throttling, verdict");
  common(c.sustain);
  backend(c.sustain);
  c.sustain->add_option("--duration", o.duration_s, "Seconds (default 300)")->check(CLI::PositiveNumber);
  c.sustain->add_option("--out", o.out, "Output folder");
  c.sustain->add_option("--min-clock-fraction", o.min_clock_fraction, "FAIL below this x max SM clock (default 0.70)")
      ->check(CLI::Range(0.0, 1.0));
  c.sustain->add_option("--max-reason-fraction", o.max_reason_fraction, "FAIL above this fraction of 0xE8 readings (0.01)")
      ->check(CLI::Range(0.0, 1.0));
  c.sustain->add_option("--max-throughput-drop", o.max_throughput_drop, "WARN above this last/first-minute drop (0.05)")
      ->check(CLI::Range(0.0, 1.0));

  c.baseline = app.add_subcommand("baseline", "On an exclusive card: write the baseline file that vet --baseline compares with");
  common(c.baseline);
  backend(c.baseline);
  c.baseline->add_option("--out", o.out, "Baseline file to write (results JSON)")->required();
  c.baseline->add_option("--duration", o.duration_s, "Seconds per workload (default 20)")->check(CLI::PositiveNumber);
  c.baseline->preparse_callback([&o](std::size_t) { o.duration_s = 20.0; });

  c.vet = app.add_subcommand("vet", "Vet a platform within a time budget: probe, stability, sustained load, P95 vs baseline, cost");
  common(c.vet);
  backend(c.vet);
  c.vet->add_option("--budget", o.budget_s, "Seconds for the whole vet (default 600; 60 works)")->check(CLI::Range(20.0, 86400.0));
  c.vet->add_option("--baseline", o.baseline, "Baseline file from `baseline` on an exclusive card of the same model")
      ->check(CLI::ExistingFile);
  c.vet->add_option("--price-exclusive", o.price_exclusive, "Price per hour of the exclusive option")->check(CLI::NonNegativeNumber);
  c.vet->add_option("--price-shared", o.price_shared, "Price per hour of the shared option (this platform)")
      ->check(CLI::NonNegativeNumber);
  c.vet->add_option("--cutoff", o.cutoff, "P95 slowdown cutoff (default 0.40)")->check(CLI::PositiveNumber);
  c.vet->add_option("--out", o.out, "Output folder");

  c.selftest = app.add_subcommand("selftest", "Known answers that tell whether this machine can measure now");
  common(c.selftest);
  backend(c.selftest);
  c.selftest->add_option("--budget", o.selftest_budget_s, "Seconds for the whole self-test (default 60)")
      ->check(CLI::Range(20.0, 3600.0));
  c.selftest->add_option("--out", o.out, "Output folder");
}

std::optional<int> run_platform_command(PlatformCommands& c) {
  if (c.probe && *c.probe) return probe_command(c.options);
  if (c.sustain && *c.sustain) return sustain_command(c.options);
  if (c.baseline && *c.baseline) return baseline_command(c.options);
  if (c.vet && *c.vet) return vet_command(c.options);
  if (c.selftest && *c.selftest) return selftest_command(c.options);
  return std::nullopt;
}

}  // namespace ib
