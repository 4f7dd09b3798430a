// The `run` command: the options into scenarios and a plan (--mode all: every mode, the ones this machine cannot
// run waived), the output folder and its writers, the modes set up (MIG instances, MPS, the baseline), NVML
// attached, then the planned repetitions conducted by run/planned_scenarios.h and the history appended.
#include "harness/cli/run_options.h"

#include "harness/cli/history_command.h"
#include "harness/cli/result_commands.h"
#include "harness/cli/validators.h"

#include "build_info.h"
#include "harness/core/exit_codes.h"
#include "harness/core/files.h"
#include "harness/core/host.h"
#include "harness/core/output_dir.h"
#include "harness/core/output_paths.h"
#include "harness/scenario/single_rank.h"
#include "harness/core/stop_signals.h"
#include "harness/core/text.h"
#include "harness/analysis/analysis.h"
#include "harness/core/clock.h"
#include "harness/exec/executor.h"
#include "harness/modes/journal.h"
#include "harness/modes/mode_setup.h"
#include "harness/modes/mps_daemon.h"
#include "harness/nvml/nvml.h"
#include "harness/cli/node_role.h"
#include "harness/cli/run_nodes.h"
#include "harness/nodes/conductor.h"
#include "harness/run/launcher.h"
#include "harness/nodes/node_agent.h"
#include "harness/nodes/remote_launcher.h"
#include "harness/analysis/deciding.h"
#include "harness/run/planned_scenarios.h"
#include "harness/run/orchestrator.h"
#include "harness/vet/devices.h"
#include "harness/process/process.h"
#include "harness/scenario/scenario.h"
#include "harness/exec/cuda_module.h"
#include "harness/history/history.h"
#include "reports/html_writer.h"
#include "reports/json_writer.h"
#include "reports/junit_writer.h"
#include "reports/markdown_writer.h"
#include "reports/prometheus_writer.h"
#include "reports/results_writer.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <map>
#include <cstring>
#include <iostream>

namespace ib {

namespace {

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
  scenarios = with_single_rank_references(scenarios);  // amplification's references run after their scenarios
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
      // A placement the mode cannot give (MIG: more workers than instances, allreduce over several instances;
      // MPS or MIG: a worker on another node): the other modes still run. (A bad --baseline is still bad input.)
      waived_modes[m] = std::string("mode ") + mode_name(m) + ": " + e.what();
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
    for (const auto& ranks : plan.rank_instance)
      for (std::size_t k : ranks) add(plan.instances.at(k));
    if (ctx.baseline.empty() && !plan.instances.empty()) add(plan.instances.at(plan.largest));
  }
  return scope;
}

// NVML telemetry beside every block (docs/design.md section 5) and the GPU side of the foreign-load check,
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
  make_dirs(out.dir + "/logs", "--out");
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

// What the options say about the repetitions (run/planned_scenarios.h).
ConductSettings conduct_settings(const RunOptions& o) {
  ConductSettings c;
  c.seed = o.seed;
  c.resamples = o.resamples;
  c.resolution = o.resolution;
  c.until = o.until == "fixed" ? StopRule::fixed : StopRule::decided;
  c.rounds = o.rounds;
  c.max_duration = o.max_duration;
  return c;
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

}  // namespace

// Order matters: every input and the output folder are checked before set-up changes anything
// (--mig-create, an MPS daemon); a stop signal in any stage ends the run through the same clean-up
// (ModeSetup destroys created MIG instances, TempDir its folder) with what finished written, exit 130.
int run_command(const RunOptions& o, const std::vector<std::string>& argv, const Registry& registry,
                StopSignals& stop) {
  signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe gives EPIPE, not death
  if (!o.html.empty()) check_html_available("--html");
  Backend backend = Backend::host;
  const NodeRole role = resolve_node_role(o, current_environment());
  if (role.node_rank > 0) return serve_as_node(o, role, stop);  // the conductor's workers say which backend
  Meta meta = make_meta(o, argv, backend);
  check_victim_command_options(o);
  const std::vector<Scenario> scenarios = load_scenarios(o, registry, backend, meta);
  check_placed_nodes(scenarios, role.nodes);
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
              << " per phase; worst case about " << formatted("%.0f", worst_case_seconds(conduct_settings(o), plan) / 60.0 + 0.5)
              << " min (--until fixed: exactly --duration)\n";
  ProcessLauncher launcher;  // workers are processes; a signal ends the orchestrator's waits at once
  SystemClock clock(stop.fd());
  oo.launcher = &launcher;
  std::unique_ptr<ConductedNodes> nodes;  // a run across nodes: theirs joined, each said "end" on the way out
  if (role.nodes > 1) {
    try {
      nodes = conduct_nodes(o, role, launcher, results.meta, stop);
    } catch (const CannotRunError& e) {
      if (!stop.requested()) return fail(kExitCannotRun, e.what());
      std::cerr << "interference-bench: " << e.what() << "\n";
      plan.clear();  // a stop signal while the nodes were awaited: nothing runs, the empty results are written, 130
    }
  }
  if (nodes) attach_nodes(*nodes, oo);
  oo.clock = &clock;
  Orchestrator orchestrator(oo);
  try {
    run_planned_scenarios(conduct_settings(o), plan, waived_modes, orchestrator, results,
                          [&out](const Results& r) { out.writers.runs(r); }, stop.check());
  } catch (const CannotRunError& e) {
    return fail(kExitCannotRun, e.what());
  }
  if (oo.progress) std::cerr << "\r\033[K";
  if (nodes) {
    for (const std::string& lost : nodes->launcher->lost()) std::cerr << "interference-bench: " << lost << "\n";
    record_node_clocks(*nodes->launcher, results.meta);
  }
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

}  // namespace ib
