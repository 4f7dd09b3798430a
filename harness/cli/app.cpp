#include "harness/cli/app.h"

#include "harness/cli/result_commands.h"
#include "harness/cli/history_command.h"
#include "harness/cli/merge_command.h"
#include "harness/cli/validators.h"

#include "build_info.h"
#include "harness/core/files.h"
#include "harness/core/host.h"
#include "harness/core/output_dir.h"
#include "harness/core/output_paths.h"
#include "harness/core/stop_signals.h"
#include "harness/core/text.h"
#include "harness/analysis/analysis.h"
#include "harness/core/clock.h"
#include "harness/exec/executor.h"
#include "harness/modes/cleanup.h"
#include "harness/modes/journal.h"
#include "harness/modes/mode_setup.h"
#include "harness/modes/mps_daemon.h"
#include "harness/nvml/nvml.h"
#include "harness/run/launcher.h"
#include "harness/analysis/deciding.h"
#include "harness/run/orchestrator.h"
#include "harness/cli/platform_commands.h"
#include "harness/vet/devices.h"
#include "harness/process/process.h"
#include "harness/scenario/scenario.h"
#include "harness/run/worker.h"
#include "harness/exec/cuda_module.h"
#include "kernels/command/command_workload.h"
#include "kernels/host/host_workloads.h"
#include "harness/history/history.h"
#include "reports/html_writer.h"
#include "reports/json_writer.h"
#include "reports/junit_writer.h"
#include "reports/markdown_writer.h"
#include "reports/prometheus_writer.h"
#include "reports/results_writer.h"

#include <CLI/CLI.hpp>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <map>
#include <cstring>
#include <ctime>
#include <iostream>

namespace ib {

namespace {

struct RunOptions {
  std::string mode;
  std::string scenario;
  std::string suite;
  std::string backend = "cuda";
  std::optional<int> device;
  std::optional<double> duration, warmup, cutoff, collective_timeout;
  std::optional<int> repeat;
  std::string out;
  bool no_raw = false;
  bool force = false;  // --force: replace the results an existing --out folder holds
  double timeout_margin = 60.0;
  std::uint64_t seed = 1;
  int resamples = 1000;
  std::string mps_pipe_dir;
  std::string baseline;
  std::vector<std::string> mig_create;
  std::optional<double> telemetry_hz;  // default: 10 with the cuda backend, off with host
  int rounds = 10;
  std::string until = "decided";          // --until decided|fixed
  std::optional<double> max_duration;     // --max-duration S (default kDefaultBudgetFactor x --duration)
  double resolution = 0.0;                // --resolution X (points of slowdown; 0: none)
  std::string round_order = "abba";
  int max_reruns = 2;
  double max_foreign_cpus = 0.25;
  double max_steal_cpus = default_max_steal_cpus();  // 5% of this machine's CPUs, at least 0.10
  std::string junit, prometheus;  // further outputs (--junit FILE, --prometheus FILE)
  std::string history;  // --history DB: appended to after results.json is written
  std::string html;     // --html FILE
  // The one-line form: --victim-command [--victim-metric M] [--aggressors A,B] -- PROGRAM ARGS...
  bool victim_command = false;
  std::vector<std::string> victim_argv;  // what follows --
  std::string victim_metric;
  std::string aggressors;
};

Registry make_registry() {
  Registry r;
  register_host_workloads(r);
  register_cuda_workloads(r);
  register_command_workload(r);
  return r;
}

void make_dirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw InputError("--out: cannot create " + path + ": " + ec.message());
}

// A private temporary folder for this invocation (MPS pipes), removed when the run ends; recorded in
// the journal so that `cleanup` removes it after a SIGKILL.
struct TempDir {
  std::string path;
  Journal& journal;
  explicit TempDir(Journal& j) : journal(j) {
    char tmpl[] = "/tmp/ib-run-XXXXXX";
    if (!mkdtemp(tmpl)) throw CannotRunError(std::string("cannot create a temporary folder: ") + std::strerror(errno));
    path = tmpl;
    try {
      journal.record({JournalEvent::temp_dir, 0, {}, path});
    } catch (...) {  // not journalled, so not made: an unusable state folder leaves no /tmp/ib-run-* behind
      ::rmdir(path.c_str());
      throw;
    }
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    try {
      if (!ec) journal.record({JournalEvent::temp_dir_removed, 0, {}, path});
    } catch (const std::exception&) {  // the journal stays and says the folder may be left
    }
  }
};

int fail(int code, const std::string& message) {
  std::string line = "interference-bench: " + printable(message, std::string::npos);
  if (code == kExitBadInput && line.size() > 200) line = line.substr(0, 197) + "...";
  std::cerr << line << "\n";
  return code;
}

int list_command(const std::string& what, const Registry& registry) {
  if (what == "workloads") {
    for (const auto* w : registry.all()) {
      std::cout << w->name << "  [" << (w->any_backend ? "any backend" : backend_name(w->backend)) << "]  " << w->description << "\n";
      for (const auto& p : w->params)
        std::cout << "    " << p.name << " = " << p.default_value.dump() << "  " << p.help << "\n";
    }
    return kExitPass;
  }
  if (what == "modes") {
    for (const std::string& name : mode_names()) {
      std::string padded = name;
      padded.resize(11, ' ');
      std::cout << padded << mode_description(*parse_mode(name)) << "\n";
    }
    return kExitPass;
  }
  const std::string dir = find_scenarios_dir();
  for (const auto& s : list_suites(dir)) {
    std::cout << s.name << "  " << s.description << "\n";
    for (const auto& [backend, files] : s.scenarios_by_backend)
      for (const auto& f : files) std::cout << "    [" << backend << "] " << f.substr(dir.size() + 1) << "\n";
  }
  return kExitPass;
}

// A scenario under a mode this machine cannot run (--mode all): recorded, not run.
RunResult waived_run(const Scenario& s, const std::string& reason) {
  RunResult r = new_run_result(s, 1);
  r.status = RunStatus::waived;
  r.message = reason;
  for (auto& t : r.tenants) {
    t.verdict = Verdict::waived;
    t.verdict_reason = "mode " + r.mode + " waived: " + reason;
  }
  return r;
}

// The run's meta and the backend it will use (cuda refuses with exit 3 when no GPU is usable).
Meta make_meta(const RunOptions& o, const std::vector<std::string>& argv, Backend& backend) {
  Meta meta;
  meta.argv = argv;
  meta.version = IB_VERSION;
  meta.git_sha = IB_GIT_SHA;
  meta.start_time = utc_now("%Y-%m-%dT%H:%M:%SZ");
  meta.host = host_name();
  meta.scheduler = scheduler_from_env();
  meta.host_cpus = static_cast<int>(available_cpus().size());
  meta.backend_requested = o.backend;
  meta.bootstrap_seed = o.seed;
  meta.bootstrap_resamples = o.resamples;
  meta.max_foreign_cpus = o.max_foreign_cpus;
  meta.max_steal_cpus = o.max_steal_cpus;
  meta.max_reruns = o.max_reruns;
  meta.until = o.until == "fixed" || o.resamples < 2 ? StopRule::fixed : StopRule::decided;
  meta.rounds = o.rounds;
  meta.max_duration_s = o.max_duration;
  meta.resolution = o.resolution;
  backend = o.backend == "host" ? Backend::host : Backend::cuda;
  if (o.backend != "host") {
    const Availability cuda = cuda_availability(o.device.value_or(0));
    // A GPU this build cannot run on is refused whatever the backend: falling back to the host there
    // would answer a question nobody asked.
    if (cuda.state == Availability::State::unusable) throw CannotRunError(cuda.reason);
    if (cuda.state == Availability::State::no_gpu) {
      if (o.backend == "cuda") throw CannotRunError("--backend cuda: " + cuda.reason);
      backend = Backend::host;
      meta.backend_note = "NO GPU FOUND (" + cuda.reason +
                          "). Running the host (CPU) workloads instead: these figures describe CPU and "
                          "memory-bandwidth sharing on this machine, not GPU sharing.";
      std::cerr << "\n*** " << meta.backend_note << " ***\n\n";
    }
  }
  meta.backend = backend_name(backend);
  return meta;
}

// "a,b" -> {"a", "b"} (empty parts dropped).
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string part;
  for (char c : text + ",") {
    if (c != ',') {
      part += c;
    } else if (!part.empty()) {
      out.push_back(part);
      part.clear();
    }
  }
  return out;
}

// The one-line form's options make sense only together, and not with a scenario or suite.
void check_victim_command_options(const RunOptions& o) {
  if (!o.victim_command) {
    if (!o.victim_metric.empty()) throw InputError("--victim-metric: only with --victim-command");
    if (!o.aggressors.empty()) throw InputError("--aggressors: only with --victim-command");
    if (!o.victim_argv.empty())
      throw InputError("unexpected argument \"" + printable(o.victim_argv[0], 40) +
                       "\" (a program to measure goes after --victim-command --)");
    return;
  }
  if (o.victim_argv.empty())
    throw InputError("--victim-command: expected the command after -- (e.g. --victim-command -- python3 train.py)");
  if (!o.scenario.empty() || !o.suite.empty())
    throw InputError("--victim-command: not with --scenario or --suite (its scenarios are the command beside each of "
                     "--aggressors)");
}

// Loads and validates every scenario before anything runs.
std::vector<Scenario> load_scenarios(const RunOptions& o, const Registry& registry, Backend backend, Meta& meta) {
  ScenarioOverrides ov;
  const bool all_modes = o.mode == "all";
  if (!o.mode.empty() && !all_modes) ov.mode = parse_mode(o.mode);
  ov.lenient_placement = all_modes;  // placement keys of the other modes are kept for their mode
  ov.duration_s = o.duration;
  ov.warmup_s = o.warmup;
  ov.repetitions = o.repeat;
  ov.cutoff = o.cutoff;
  ov.collective_timeout_s = o.collective_timeout;
  ValidationContext vctx{&registry, backend, available_cpus()};
  std::vector<Scenario> scenarios;
  if (o.victim_command) {
    VictimCommand v{o.victim_argv, o.victim_metric.empty() ? "heartbeat" : o.victim_metric, split_list(o.aggressors)};
    // "--aggressors ,,," names none: not a request for the defaults (issue 37 item 11)
    if (!o.aggressors.empty() && v.aggressors.empty())
      throw InputError("--aggressors: \"" + printable(o.aggressors, 40) + "\" names no workload");
    scenarios = victim_command_scenarios(v, ov, vctx);
  } else if (!o.scenario.empty()) {
    scenarios.push_back(load_scenario(o.scenario, ov, vctx));
  } else {
    const std::string suite_name = o.suite.empty() ? "quick" : o.suite;
    const SuiteInfo suite = load_suite(find_scenarios_dir(), suite_name);
    meta.suite = suite.name;
    if (!ov.repetitions) ov.repetitions = suite.repetitions;
    for (const auto& [b, files] : suite.scenarios_by_backend)
      if (b == backend_name(backend))
        for (const auto& f : files) scenarios.push_back(load_scenario(f, ov, vctx));
    if (scenarios.empty())
      throw InputError("--suite " + suite_name + ": no scenarios for the " + backend_name(backend) + " backend");
  }
  for (auto& s : scenarios)
    if (o.device) s.device = *o.device;
  check_unique_scenario_names(scenarios);
  return scenarios;
}

// What runs, in order: each scenario under its mode, or (--mode all) under every mode in turn, with the
// modes this machine cannot run waived (the reason, by mode).
std::vector<Scenario> prepare_plan(const RunOptions& o, Backend backend, const std::vector<Scenario>& scenarios,
                                   ModeSetup& setup, OrchestratorOptions& oo, std::map<Mode, std::string>& waived_modes) {
  const std::vector<Mode> all_mode_list = {Mode::timeslice, Mode::mps, Mode::mig, Mode::streams};
  const ModeRequest request{o.baseline, o.mig_create, o.mps_pipe_dir};
  if (o.mode != "all") {
    prepare_modes(request, backend, scenarios, setup, oo.modes, false);
    return scenarios;
  }
  for (Mode m : all_mode_list) {
    std::vector<Scenario> copies = scenarios;
    for (auto& s : copies) s.mode = m;
    try {
      prepare_modes(request, backend, copies, setup, oo.modes, true);
    } catch (const CannotRunError& e) {
      waived_modes[m] = e.what();
    } catch (const PlacementError& e) {
      // A placement MIG cannot give (more tenants than instances, allreduce across instances): the
      // other modes still run. (A bad --baseline is still bad input: exit 2.)
      waived_modes[m] = std::string("mode mig: ") + e.what();
    } catch (const NvmlError& e) {
      if (m != Mode::mig) throw;
      waived_modes[m] = std::string("mode mig: ") + e.what();
    }
  }
  std::vector<Scenario> plan;
  for (const auto& s : scenarios)
    for (Mode m : all_mode_list) {
      plan.push_back(s);
      plan.back().mode = m;
    }
  return plan;
}

// The MIG instances the mig scenarios' tenants (and exclusive phases) use: the foreign-load probe asks only
// those, each through its own handle (none without a mig scenario: the whole GPU is asked). A run that mixes
// mig and other modes (--mode all) is probed on those instances in every mode.
std::vector<MigInstance> mig_scope(const ModeContext& ctx) {
  std::vector<MigInstance> scope;
  const auto add = [&scope](const MigInstance& m) {
    if (std::none_of(scope.begin(), scope.end(), [&m](const MigInstance& x) { return x.uuid == m.uuid; }))
      scope.push_back(m);
  };
  for (const auto& [name, plan] : ctx.mig_plans) {
    for (std::size_t k : plan.tenant_instance) add(plan.instances.at(k));
    if (ctx.baseline.empty() && !plan.instances.empty()) add(plan.instances.at(plan.largest));
  }
  return scope;
}

// NVML telemetry beside every block (DESIGN.md section 5) and the GPU side of the foreign-load check,
// where NVML answers.
void attach_nvml(const RunOptions& o, Backend backend, int device, ModeSetup& setup, OrchestratorOptions& oo, Meta& meta) {
  const double hz = o.telemetry_hz.value_or(backend == Backend::cuda ? 10.0 : 0.0);
  meta.telemetry = {{"hz", hz}};
  if (hz <= 0.0 && backend != Backend::cuda) return;
  ensure_nvml(setup, device);
  if (!setup.nvml) {
    meta.telemetry["source"] = "unavailable: " + setup.nvml_error;
    if (hz > 0.0) std::cerr << "interference-bench: no telemetry (" << setup.nvml_error << ")\n";
    return;
  }
  if (hz > 0.0) {
    oo.nvml = setup.nvml.get();
    oo.telemetry_device = static_cast<unsigned>(device);
    oo.telemetry_hz = hz;
    meta.telemetry["source"] = setup.nvml->library_path();
  }
  // The host backend checks the GPU too once it reads NVML (--telemetry-hz > 0): a rehearsal of the
  // GPU side (fake NVML, fake MPS server) with no idle gap to wait for, since its workloads leave the GPU alone.
  const std::vector<MigInstance> scope = mig_scope(oo.modes);
  if (backend == Backend::cuda)
    oo.gpu_load_probe = make_gpu_load_probe(*setup.nvml, static_cast<unsigned>(device), 0.2, scope);
  else if (hz > 0.0)
    oo.gpu_load_probe = make_gpu_load_probe(*setup.nvml, static_cast<unsigned>(device), 0.0, scope);
}

std::vector<int> scenario_devices(const std::vector<Scenario>& scenarios) {
  std::vector<int> devices;
  for (const auto& s : scenarios) devices.push_back(s.device);
  return devices;
}

// Recomputes the aggregate of the (scenario, mode) that `run` belongs to, over its repetitions so far.
void update_aggregates(Results& results, const RunResult& run, std::uint64_t seed, int resamples, const StopCheck& stop) {
  std::vector<const RunResult*> reps;
  for (const auto& r : results.runs)
    if (r.scenario == run.scenario && r.mode == run.mode) reps.push_back(&r);
  auto fresh = aggregate_repetitions(reps, seed, resamples, stop);
  auto& all = results.aggregates;
  all.erase(std::remove_if(all.begin(), all.end(),
                           [&](const TenantAggregate& a) { return a.scenario == run.scenario && a.mode == run.mode; }),
            all.end());
  all.insert(all.end(), fresh.begin(), fresh.end());
}

// Where the run's results go, and the writers that put them there (reports/results_writer.h): a new
// output is one more writer here. The folder is made and locked before anything touches the GPU.
struct OutputFiles {
  std::unique_ptr<OutputDir> folder;
  std::string dir, json, markdown;
  ResultsWriters writers;
};

// The run's outputs against the one rule for written files (core/output_paths.h): its own results.json
// and summary.md, the extra outputs, the history it appends to; its inputs the scenario files and the
// baseline. Before the folder is made, so a refusal leaves nothing.
void check_run_outputs(const RunOptions& o, const std::string& dir, const std::vector<Scenario>& scenarios) {
  OutputPlan plan;
  plan.own_folder = dir;
  plan.force = o.force;
  plan.outputs = {{"--out", dir + "/results.json"}, {"--out", dir + "/summary.md"}};
  for (const auto& [option, path] : {std::pair<const char*, const std::string&>{"--junit", o.junit},
                                     {"--prometheus", o.prometheus}, {"--html", o.html}})
    if (!path.empty()) plan.outputs.push_back({option, path});
  if (!o.history.empty()) {
    require_history("--history");
    plan.outputs.push_back({"--history", o.history, true});
  }
  if (!o.victim_command)  // the one-line form's scenarios are built in memory: no file to protect
    for (const Scenario& s : scenarios) plan.inputs.push_back({o.scenario.empty() ? "--suite" : "--scenario", s.file});
  if (!o.baseline.empty()) plan.inputs.push_back({"--baseline", o.baseline});
  check_output_paths(plan);
}

OutputFiles make_output_files(const RunOptions& o, const std::vector<Scenario>& scenarios) {
  OutputFiles out;
  out.dir = o.out.empty() ? OutputDir::unique_default("interference-bench-results/") : o.out;
  check_run_outputs(o, out.dir, scenarios);
  out.folder = std::make_unique<OutputDir>("--out", out.dir, std::vector<std::string>{"results.json", "summary.md"}, o.force);
  make_dirs(out.dir + "/logs");
  out.json = out.dir + "/results.json";
  out.markdown = out.dir + "/summary.md";
  out.writers.add(std::make_unique<JsonResultsFile>(out.json, !o.no_raw));
  out.writers.add(std::make_unique<MarkdownSummaryFile>(out.markdown));
  if (!o.junit.empty()) out.writers.add(std::make_unique<JunitResultsFile>(o.junit));
  if (!o.prometheus.empty()) out.writers.add(std::make_unique<PrometheusResultsFile>(o.prometheus));
  if (!o.html.empty()) out.writers.add(std::make_unique<HtmlReportFile>(o.html));
  out.writers.add(std::make_unique<TerminalSummary>(std::cout, out.json));
  return out;
}

// finalize_run on a copy, so that a stop signal during its bootstrap leaves `run` whole: it is then
// finalized without resampling (point estimates, no confidence interval, so no verdict settles on it)
// and says so. False when that happened.
bool finalize_or_interrupt(RunResult& run, std::uint64_t seed, int resamples, const StopCheck& stop) {
  RunResult attempt = run;
  try {
    finalize_run(attempt, seed, resamples, stop);
    run = std::move(attempt);
    return true;
  } catch (const Interrupted&) {
    finalize_run(run, seed, 0);
    if (run.message.empty()) run.message = "interrupted during the analysis: no confidence intervals computed";
    return false;
  }
}

// The aggregate of `run`'s (scenario, mode); without resampling when a stop signal ends the bootstrap.
void aggregate_or_interrupt(Results& results, const RunResult& run, std::uint64_t seed, int resamples,
                            const StopCheck& stop) {
  try {
    update_aggregates(results, run, seed, resamples, stop);
  } catch (const Interrupted&) {
    update_aggregates(results, run, seed, 0, {});
  }
}

StoppingOptions stopping_options(const RunOptions& o, const Scenario& s) {
  StoppingOptions st;
  // exclusive mode measures baselines only: nothing to decide
  st.until = o.until == "fixed" || s.mode == Mode::exclusive ? StopRule::fixed : StopRule::decided;
  st.rounds = o.rounds;
  st.duration_s = s.duration_s;
  st.max_duration_s = o.max_duration.value_or(0.0);
  st.resolution = o.resolution;
  st.resamples = o.resamples;
  return st;
}

// The repetitions of `run`'s (scenario, mode) in `results`, in order.
std::vector<const RunResult*> repetitions_of(const Results& results, const std::string& scenario, const std::string& mode) {
  std::vector<const RunResult*> reps;
  for (const auto& r : results.runs)
    if (r.scenario == scenario && r.mode == mode) reps.push_back(&r);
  return reps;
}

// The plan's longest wall time: every repetition's workers warming up one at a time and every round of
// its budget, each block with its re-warm (a bound to plan a nightly job by, printed before starting).
double worst_case_seconds(const RunOptions& o, const std::vector<Scenario>& plan) {
  double total = 0.0;
  for (const Scenario& s : plan) {
    const StoppingOptions st = stopping_options(o, s);
    const int last_rounds = st.until == StopRule::fixed ? st.rounds : budget_rounds(st);
    const double n = static_cast<double>(s.tenants.size());
    // exclusive blocks and one colocated block per round; MPS and MIG add each tenant's alone block
    const double blocks = s.mode == Mode::mps || s.mode == Mode::mig ? 2 * n + 1 : n + 1;
    const double block_s = s.duration_s / st.rounds + 0.05;
    total += s.repetitions * 2 * n * s.warmup_s +
             ((s.repetitions - 1) * st.rounds + last_rounds) * blocks * block_s;
  }
  return total;
}

// Runs every repetition of every planned scenario; the files are rewritten after each one. Stops
// early (keeping what finished) once `stop` says so. The last repetition of each scenario runs until
// its verdicts are decided (deciding.h), looking at the aggregate of all its repetitions so far.
void execute(const RunOptions& o, const std::vector<Scenario>& plan, const std::map<Mode, std::string>& waived_modes,
             Orchestrator& orchestrator, Results& results, ResultsWriter& out, const StopCheck& stop) {
  // Bootstrap seeds: repetition `rep` of the k-th planned scenario uses seed + (k << 16) + (rep - 1) * 977,
  // its tenant i that + i; the aggregate of the scenario the first repetition's seed, so that with one
  // repetition the aggregate is that repetition's estimate exactly (and a look's figures are the
  // results'). A run is reproducible from meta.bootstrap.seed.
  std::uint64_t index = 0;
  const auto stopped = [&] { return orchestrator.interrupted() || stop(); };
  const auto add = [&](RunResult run) {
    results.runs.push_back(std::move(run));
    aggregate_or_interrupt(results, results.runs.back(), o.seed + (index << 16), o.resamples, stop);
    results.summary = summarize_results(results.aggregates, static_cast<int>(results.runs.size()), stopped());
    out.runs(results);  // after every repetition: an interrupted run keeps what it finished
  };
  for (const auto& s : plan) {
    if (const auto w = waived_modes.find(s.mode); w != waived_modes.end()) {
      add(waived_run(s, w->second));
      ++index;
      continue;
    }
    int earlier_rounds = 0;
    for (int rep = 1; rep <= s.repetitions && !stopped(); ++rep) {
      const Stopping plan_of_rep = plan_stopping(stopping_options(o, s), rep, s.repetitions, earlier_rounds);
      const LookSettings look_settings{o.seed + (index << 16), o.resamples, o.resolution};
      const LookFn look = [&, look_settings](const RunResult& so_far, int) {
        return look_at(repetitions_of(results, so_far.scenario, so_far.mode), so_far, so_far.stopping.z, look_settings, stop);
      };
      RunResult run;
      try {
        run = orchestrator.run(s, rep, plan_of_rep, s.mode == Mode::exclusive ? LookFn{} : look);
      } catch (const CannotRunError&) {  // e.g. the MPS daemon would not start: keep what finished
        out.runs(results);
        throw;
      }
      earlier_rounds += run.rounds;
      finalize_or_interrupt(run, o.seed + (index << 16) + static_cast<std::uint64_t>(rep - 1) * 977, o.resamples, stop);
      add(std::move(run));
    }
    ++index;
    if (stopped()) break;
  }
}

// The orchestrator's settings from the options, the output folder and the run's temporary folder.
void configure_orchestrator(const RunOptions& o, Backend backend, const OutputFiles& out, const std::string& run_dir,
                            StopSignals& stop, OrchestratorOptions& oo) {
  oo.backend = backend;
  oo.modes.run_dir = run_dir;
  oo.modes.log_dir = out.dir + "/logs";
  oo.modes.mps_pipe_dir = o.mps_pipe_dir;
  oo.worker_exe = self_exe_path();
  oo.log_dir = out.dir + "/logs";
  oo.timeout_margin_s = o.timeout_margin;
  oo.stop_requested = stop.check();
  oo.rounds = o.rounds;
  oo.round_order = o.round_order == "shuffle" ? RoundOrder::shuffle : RoundOrder::abba;
  oo.seed = o.seed;
  oo.max_reruns = o.max_reruns;
  oo.limits.max_foreign_cpus = o.max_foreign_cpus;
  oo.limits.max_steal_cpus = o.max_steal_cpus;
  if (isatty(STDERR_FILENO)) oo.progress = [](const std::string& line) { std::cerr << "\r\033[K" << line << std::flush; };
}

// A file that could not be written at the end is named (the summary went to stdout all the same) and
// the run exits 3: a nightly job must not take a missing results.json for a pass.
int report_write_failures(const ResultsWriters& writers, int exit_code) {
  const auto failures = writers.failures();
  for (const auto& f : failures) std::cerr << "interference-bench: " << f << " (the results are in the summary above)\n";
  return failures.empty() ? exit_code : kExitCannotRun;
}

// Order matters: every input and the output folder are checked before set-up changes anything
// (--mig-create, an MPS daemon); a stop signal in any stage ends the run through the same clean-up
// (ModeSetup destroys created MIG instances, TempDir its folder) with what finished written, exit 130.
int run_benchmarks(const RunOptions& o, const std::vector<std::string>& argv, const Registry& registry,
                   StopSignals& stop) {
  signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe gives EPIPE, not death
  if (!o.html.empty()) check_html_available("--html");
  Backend backend = Backend::host;
  Meta meta = make_meta(o, argv, backend);
  check_victim_command_options(o);
  const std::vector<Scenario> scenarios = load_scenarios(o, registry, backend, meta);
  stop.throw_if_requested();  // nothing made yet: nothing to keep
  OutputFiles out = make_output_files(o, scenarios);
  Journal journal(default_state_dir());  // outlives what it records: removed once all is undone
  OrchestratorOptions oo;
  oo.modes.journal = &journal;
  ModeSetup setup;  // destroys MIG instances made by --mig-create on every way out of this function
  setup.journal = &journal;
  std::map<Mode, std::string> waived_modes;
  Results results;
  results.meta = meta;
  results.summary = summarize_results({}, 0, false);
  std::vector<Scenario> plan;
  if (!stop.requested()) plan = prepare_plan(o, backend, scenarios, setup, oo, waived_modes);
  if (!stop.requested()) attach_nvml(o, backend, scenarios.front().device, setup, oo, results.meta);
  results.meta.devices = describe_run_devices(backend, scenario_devices(scenarios), setup.nvml.get(), setup.nvml_error);
  const TempDir run_dir(journal);
  out.writers.context(results.meta);
  out.writers.runs(results);  // before anything runs: the folder takes files
  out.folder->keep();
  if (const auto failed = out.writers.failures(); !failed.empty()) return fail(kExitCannotRun, failed.front());
  configure_orchestrator(o, backend, out, run_dir.path, stop, oo);
  if (results.meta.until == StopRule::decided && !plan.empty())
    std::cerr << "interference-bench: each scenario runs until its verdicts are decided, at most "
              << (o.max_duration ? formatted("%g s", *o.max_duration) : formatted("%g x", kDefaultBudgetFactor) + " --duration")
              << " per phase; worst case about " << formatted("%.0f", worst_case_seconds(o, plan) / 60.0 + 0.5)
              << " min (--until fixed: exactly --duration)\n";
  ProcessLauncher launcher;  // workers are processes; a signal ends the orchestrator's waits at once
  SystemClock clock(stop.fd());
  oo.launcher = &launcher;
  oo.clock = &clock;
  Orchestrator orchestrator(oo);
  try {
    execute(o, plan, waived_modes, orchestrator, results, out.writers, stop.check());
  } catch (const CannotRunError& e) {
    return fail(kExitCannotRun, e.what());
  }
  if (oo.progress) std::cerr << "\r\033[K";
  if (setup.created) {
    setup.created->destroy_all();
    for (const auto& p : setup.created->problems()) std::cerr << "interference-bench: " << p << "\n";
  }
  if (stop.requested() && !results.summary.interrupted)
    results.summary = summarize_results(results.aggregates, static_cast<int>(results.runs.size()), true);
  out.writers.finalize(results);
  // After results.json: the database can never cost the run its results, nor hide its verdict code.
  const int code = report_write_failures(out.writers, results.summary.exit_code);
  if (!o.history.empty()) return record_run_history(o.history, results, out.json, code);
  return code;
}

// `cleanup`: 0 when everything recorded was undone (or nothing was left), 3 when something could not be.
int cleanup_command(const std::string& state_dir, bool dry_run) {
  // A missing folder holds no journal (nothing to undo); anything else that is not a folder is a mistake.
  std::error_code ec;
  const auto st = std::filesystem::status(state_dir, ec);
  if (std::filesystem::exists(st) && !std::filesystem::is_directory(st))
    throw InputError("cleanup --state-dir " + printable_path(state_dir) + ": not a folder (give the folder runs keep their journals in)");
  const CleanupResult r = cleanup_left_behind(state_dir, [] { return Nvml::load(); }, dry_run);
  for (const auto& d : r.done) std::cout << d << "\n";
  for (const auto& p : r.problems) std::cerr << "interference-bench cleanup: " << p << "\n";
  std::cout << "cleanup: " << r.journals << " journal(s) in " << state_dir << ", " << r.live << " of running runs left alone"
            << (r.done.empty() ? ", nothing to undo" : "") << "\n";
  return r.ok() ? kExitPass : kExitCannotRun;
}

// `cleanup` and its options.
struct CleanupCommand {
  CLI::App* sub = nullptr;
  std::string state_dir = default_state_dir();
  bool dry_run = false;
};

void add_cleanup_command(CLI::App& app, CleanupCommand& c) {
  c.sub = app.add_subcommand("cleanup", "Undo what killed runs left: the MIG instances, MPS daemons and temporary "
                                        "folders their journals record (nothing else)");
  c.sub->add_option("--state-dir", c.state_dir, "Where runs keep their journals (default " + c.state_dir + ")")->check(non_empty());
  c.sub->add_flag("--dry-run", c.dry_run, "Say what would be undone, undo nothing");
}

// The hidden `worker` command, which the harness starts (run/worker.h); its tenants as JSON.
struct WorkerCommand {
  CLI::App* sub = nullptr;
  WorkerOptions options;
  std::string backend = "host";
  std::vector<std::string> tenants;
};

void add_worker_command(CLI::App& app, WorkerCommand& w) {
  w.sub = app.add_subcommand("worker", "")->group("");  // hidden: started by the harness only
  w.sub->add_option("--tenant", w.tenants, "{\"workload\": ..., \"params\": {...}, \"cpus\": [...]}, once per tenant")
      ->required();
  w.sub->add_option("--backend", w.backend);
  w.sub->add_option("--device", w.options.device);
  w.sub->add_option("--warmup", w.options.warmup_s);
  w.sub->add_option("--rewarm", w.options.rewarm_s);
  w.sub->add_option("--rank", w.options.rank.rank);
  w.sub->add_option("--world-size", w.options.rank.world_size);
  w.sub->add_option("--local-rank", w.options.rank.local_rank);
}

int worker_command(WorkerCommand& w, const Registry& registry) {
  w.options.backend = w.backend == "cuda" ? Backend::cuda : Backend::host;
  for (const auto& text : w.tenants) {
    const nlohmann::json t = nlohmann::json::parse(text);
    w.options.tenants.push_back({t.at("workload").get<std::string>(), t.value("params", nlohmann::json::object()).dump(),
                                 t.value("cpus", std::vector<int>{})});
  }
  return run_worker(w.options, registry);
}

// The files a run writes beside its output folder.
void add_run_output_options(CLI::App& app, RunOptions& o) {
  app.add_option("--junit", o.junit, "Also write JUnit XML here: one testcase per tenant verdict")->check(non_empty());
  app.add_option("--prometheus", o.prometheus,
                 "Also write Prometheus text here (node-exporter textfile collector format)")->check(non_empty());
  app.add_option("--history", o.history,
                 "Append this run to a history database (SQLite; created if missing) after results.json is written")->check(non_empty());
  app.add_option("--html", o.html, "Also write the HTML report (one self-contained file) here")->check(non_empty());
}

// The one-line form: --victim-command [--victim-metric M] [--aggressors A,B] -- PROGRAM ARGS...
void add_victim_command_options(CLI::App& app, RunOptions& o) {
  app.add_flag("--victim-command", o.victim_command,
               "Measure your own program (given after --) beside each of --aggressors, as a command tenant");
  app.add_option("--victim-metric", o.victim_metric,
                 "With --victim-command: heartbeat (default; the shipped clients), wall, or stdout:REGEX")
      ->check(non_empty());
  app.add_option("--aggressors", o.aggressors,
                 "With --victim-command: neighbours, comma-separated (default gemm,copy,latency; host: "
                 "host-compute,host-copy)")
      ->check(non_empty());
  app.add_option("command", o.victim_argv, "With --victim-command: the program and its arguments, after --");
}

// The options of `run` (the default command).
void add_run_options(CLI::App& app, RunOptions& o) {
  app.add_option("--mode", o.mode, "Sharing mode (overrides the scenario's); all: every mode side by side")
      ->check(CLI::IsMember([] {
        auto names = mode_names();
        names.push_back("all");
        return names;
      }()));
  auto* scen = app.add_option("--scenario", o.scenario, "Scenario file (JSON)")->check(CLI::ExistingFile);
  app.add_option("--suite", o.suite, "Suite name from scenarios/suites (default: quick)")->excludes(scen)->check(non_empty());
  app.add_option("--backend", o.backend, "cuda (default), host (CPU workloads) or auto (cuda if a GPU is usable, else host)")
      ->check(CLI::IsMember({"cuda", "host", "auto"}));
  app.add_option("--device", o.device, "CUDA device index (overrides the scenario's)")->check(CLI::Range(0, 63));
  app.add_option("--duration", o.duration, "Seconds of measurement per phase")->check(number_in(kMinDurationS, kMaxDurationS));
  app.add_option("--warmup", o.warmup, "Seconds of warm-up per worker")->check(number_in(kMinWarmupS, kMaxWarmupS));
  app.add_option("--repeat", o.repeat, "Repetitions (separate process restarts)")->check(CLI::Range(1, kMaxRepetitions));
  app.add_option("--cutoff", o.cutoff, "P95 slowdown cutoff (default 0.40)")->check(number_in(0.0, kMaxCutoff, true));
  app.add_option("--collective-timeout", o.collective_timeout,
                 "Seconds a collective tenant's longest stall is held against (default 600, PyTorch's)")
      ->check(number_in(0.001, 86400));
  app.add_option("--out", o.out, "Output folder (default interference-bench-results/<UTC time>)")->check(non_empty());
  app.add_flag("--no-raw", o.no_raw, "Leave the raw per-sample arrays out of the JSON");
  app.add_flag("--force", o.force, "Replace the results (and logs) an existing --out folder holds");
  app.add_option("--timeout-margin", o.timeout_margin,
                 "Seconds a worker may overrun its warm-up or measurement before it is killed (default 60)")
      ->check(number_in(0.0, 86400.0, true));
  app.add_option("--seed", o.seed, "Bootstrap (and --round-order shuffle) seed (default 1)")->check(unsigned_integer());
  app.add_option("--rounds", o.rounds,
                 "Rounds before the first look (all of them with --until fixed): each holds one block of every phase, "
                 "--duration is split over them (default 10)")
      ->check(CLI::Range(1, 100));
  app.add_option("--until", o.until,
                 "decided (default): after --rounds, add pairs of rounds until every verdict is decided, --resolution is "
                 "reached or --max-duration is spent; fixed: --rounds rounds")
      ->check(CLI::IsMember({"decided", "fixed"}));
  app.add_option("--max-duration", o.max_duration,
                 "Most seconds of measurement per phase when running until decided (default 2 x --duration)")
      ->check(number_in(kMinDurationS, kMaxDurationS));
  app.add_option("--resolution", o.resolution,
                 "Stop also when every undecided verdict's P95 slowdown interval is this narrow (half-width, e.g. 0.05 "
                 "= 5 points; default 0: only decided verdicts stop a run)")
      ->check(number_in(0.0, 10.0));
  app.add_option("--round-order", o.round_order, "Block order from round to round: abba (default) or shuffle (seeded)")
      ->check(CLI::IsMember({"abba", "shuffle"}));
  app.add_option("--max-reruns", o.max_reruns, "Contaminated blocks re-run per repetition, at most (default 2)")
      ->check(CLI::Range(0, 100));
  app.add_option("--max-foreign-cpus", o.max_foreign_cpus,
                 "A block is contaminated when processes that are not this run's used more CPUs than this (default 0.25)")
      ->check(number_in(0.0, 4096.0));
  app.add_option("--max-steal-cpus", o.max_steal_cpus,
                 "A block is contaminated when the hypervisor stole more CPUs than this, summed over the machine's "
                 "CPUs (default 5% of them, at least 0.10: " + significant(o.max_steal_cpus, 2) + " here)")
      ->check(number_in(0.0, 4096.0));
  app.add_option("--resamples", o.resamples, "Bootstrap resamples for the P95 CI (default 1000)")->check(CLI::Range(0, 100000));
  app.add_option("--telemetry-hz", o.telemetry_hz,
                 "NVML telemetry rate beside every phase (default 10 with --backend cuda, off with host; 0: off)")
      ->check(number_in(0.0, 1000.0));
  app.add_option("--mps-pipe-dir", o.mps_pipe_dir, "mode mps: use the MPS daemon already running there (never stopped)")
      ->check(CLI::ExistingDirectory)->check(non_empty());
  app.add_option("--baseline", o.baseline, "mode mig: take the exclusive phase from this results.json of an exclusive run")
      ->check(non_empty())->check(CLI::ExistingFile);
  app.add_option("--mig-create", o.mig_create,
                 "mode mig (root): create these MIG instances (e.g. 3g.71gb,3g.71gb) and destroy exactly them at the end")
      ->delimiter(',')
      ->check(mig_profile_name());  // each profile: an option that follows is never taken for one
  add_run_output_options(app, o);
  add_victim_command_options(app, o);
}

}  // namespace

namespace {

// Every command's options, filled by the parse; `run` is the default command.
struct Commands {
  RunOptions run;
  CLI::App* list = nullptr;
  std::string what;  // list's argument
  PlatformCommands platform;
  HistoryCommand history;
  CompareCommand compare;
  ReportCommand report;
  MergeCommand merge;
  CleanupCommand cleanup;
  WorkerCommand worker;
};

void add_commands(CLI::App& app, Commands& c, const std::vector<std::string>& args) {
  add_run_options(app, c.run);
  c.list = app.add_subcommand("list", "List workloads, scenarios (suites) or modes");
  c.list->add_option("what", c.what, "workloads | scenarios | modes")
      ->required()
      ->check(CLI::IsMember({"workloads", "scenarios", "modes"}));
  add_platform_commands(app, c.platform);
  c.platform.options.version = IB_VERSION;
  c.platform.options.git_sha = IB_GIT_SHA;
  c.platform.options.argv = args;
  add_history_command(app, c.history);
  add_compare_command(app, c.compare);
  add_report_command(app, c.report);
  add_merge_command(app, c.merge);
  add_cleanup_command(app, c.cleanup);
  add_worker_command(app, c.worker);
}

}  // namespace

int run_app(int argc, char** argv) {
  // The stop signals are blocked before anything else, so one sent in the first milliseconds (while
  // the options are parsed) is answered like any other: exit 130, not its default action.
  std::optional<StopSignals> stop_signals;
  try {
    stop_signals.emplace();
  } catch (const std::exception& e) {
    return fail(kExitCannotRun, std::string("cannot watch for stop signals: ") + e.what());
  }
  StopSignals& stop = *stop_signals;
  // A measuring step of `vet`/`sustain` ends (gracefully, via SIGTERM) when its parent does.
  if (std::getenv("INTERFERENCE_BENCH_CHILD")) prctl(PR_SET_PDEATHSIG, SIGTERM);
  std::vector<std::string> args(argv, argv + argc);
  // `interference-bench run ...` and `interference-bench ...` are the same command.
  std::vector<char*> cargv(argv, argv + argc);
  if (argc > 1 && std::string(argv[1]) == "run") cargv.erase(cargv.begin() + 1);

  CLI::App app{"interference-bench: how much GPU workloads slow each other down when they share a GPU.\n"
               "Runs each tenant alone (exclusive) and co-located, and reports P95 slowdown against a cutoff."};
  app.set_version_flag("--version", std::string("interference-bench ") + IB_VERSION + " (" + IB_GIT_SHA + ")");
  app.require_subcommand(0, 1);

  Commands c;
  add_commands(app, c, args);

  try {
    app.parse(static_cast<int>(cargv.size()), cargv.data());
  } catch (const CLI::ParseError& e) {
    if (stop.requested()) return fail(kExitInterrupted, "interrupted by " + Interrupted::signal_name(stop.signal()));
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return fail(kExitBadInput, e.what());            // one line, like every other refusal
  }

  try {
    stop.throw_if_requested();  // nothing has started: nothing to clean up
    const bool stops_itself = *c.worker.sub || *c.list || *c.cleanup.sub || *c.history.sub ||
                              (c.compare.command && *c.compare.command) || (c.report.command && *c.report.command) ||
                              *c.merge.sub;
    // A worker is stopped by its harness, which waits for it; the commands over saved files change
    // nothing outside them (their files are written atomically): a stop signal ends them with its
    // default action. Every other command answers it in every stage (exit 130 after clean-up).
    if (stops_itself) stop.release();
    const Registry registry = make_registry();
    if (*c.worker.sub) return worker_command(c.worker, registry);
    if (*c.list) return list_command(c.what, registry);
    if (*c.cleanup.sub) return cleanup_command(c.cleanup.state_dir, c.cleanup.dry_run);
    if (*c.history.sub) return history_command(c.history);
    if (*c.merge.sub) return merge_command(c.merge, args);
    if (const auto rc = run_result_command(c.compare, c.report)) return *rc;
    if (const auto rc = run_platform_command(c.platform, stop, registry)) return *rc;
    return run_benchmarks(c.run, args, registry, stop);
  } catch (const Interrupted& e) {
    return fail(kExitInterrupted, e.what());
  } catch (const InputError& e) {
    return fail(kExitBadInput, e.what());
  } catch (const CannotRunError& e) {
    return fail(kExitCannotRun, e.what());
  } catch (const std::exception& e) {
    return fail(kExitInternalError, std::string("internal error (please report it): ") + e.what());
  }
}

}  // namespace ib
