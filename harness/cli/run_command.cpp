// The `run` command, wiring only: the request assembled (run/assemble.h: meta, scenarios, settings, the nodes' part),
// the output folder and its writers, the modes set up (modes/mode_setup.h: --mode all's waivers too), NVML attached,
// then the planned repetitions conducted by run/planned_scenarios.h, the modes torn down and the history appended.
#include "harness/cli/run_options.h"

#include "harness/cli/history_command.h"
#include "harness/cli/node_role.h"
#include "harness/cli/result_commands.h"
#include "harness/cli/run_nodes.h"

#include "build_info.h"
#include "harness/analysis/analysis.h"
#include "harness/analysis/deciding.h"
#include "harness/core/clock.h"
#include "harness/core/exit_codes.h"
#include "harness/core/files.h"
#include "harness/core/output_dir.h"
#include "harness/core/output_paths.h"
#include "harness/core/text.h"
#include "harness/history/history.h"
#include "harness/modes/journal.h"
#include "harness/modes/mode_setup.h"
#include "harness/process/process.h"
#include "harness/run/assemble.h"
#include "harness/run/planned_scenarios.h"
#include "harness/run/launcher.h"
#include "harness/run/orchestrator.h"
#include "harness/vet/devices.h"
#include "reports/html/results_html.h"
#include "reports/json/results_json.h"
#include "reports/junit/results_junit.h"
#include "reports/markdown/results_markdown.h"
#include "reports/prometheus/results_prometheus.h"
#include "reports/results_writer.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

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

// The one-line form's options make sense only together, and not with a scenario or suite.
void check_victim_command_options(const RunRequest& o) {
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
void check_run_outputs(const RunRequest& o, const std::string& dir, const std::vector<Scenario>& scenarios) {
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
  if (!o.modes.baseline.empty()) plan.inputs.push_back({"--baseline", o.modes.baseline});
  check_output_paths(plan);
}

OutputFiles make_output_files(const RunRequest& o, const std::string& dir, const std::vector<Scenario>& scenarios) {
  OutputFiles out;
  out.dir = dir;
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

// A file that could not be written at the end is named (the summary went to stdout all the same) and
// the run exits 3: a nightly job must not take a missing results.json for a pass.
int report_write_failures(const ResultsWriters& writers, int exit_code) {
  const auto failures = writers.failures();
  for (const auto& f : failures) std::cerr << "interference-bench: " << f << " (the results are in the summary above)\n";
  return failures.empty() ? exit_code : kExitCannotRun;
}

// The orchestrator's parts made here: the run's temporary folder, the stop check, the progress line (on a terminal).
void wire_orchestrator(const std::string& run_dir, StopSignals& stop, OrchestratorOptions& oo) {
  oo.modes.run_dir = run_dir;
  oo.stop_requested = stop.check();
  if (isatty(STDERR_FILENO)) oo.progress = [](const std::string& line) { std::cerr << "\r\033[K" << line << std::flush; };
}

// Before the first repetition of a run that goes on until decided: its budget, and the plan's worst case.
void announce_until_decided(const RunRequest& o, const RunParts& parts, const std::vector<Scenario>& plan) {
  if (parts.meta.until != StopRule::decided || plan.empty()) return;
  std::cerr << "interference-bench: each scenario runs until its verdicts are decided, at most "
            << (o.max_duration ? formatted("%g s", *o.max_duration) : formatted("%g x", kDefaultBudgetFactor) + " --duration")
            << " per phase; worst case about " << formatted("%.0f", worst_case_seconds(parts.conduct, plan) / 60.0 + 0.5)
            << " min (--until fixed: exactly --duration)\n";
}

// The planned repetitions through the orchestrator, its workers processes here or (a run across nodes) started by
// the nodes; the results written after each. A refusal's exit code, or nothing once they ran (or were stopped).
std::optional<int> conduct_planned(RunParts& parts, RunModes& modes, OutputFiles& out, Results& results,
                                   StopSignals& stop) {
  OrchestratorOptions& oo = parts.orchestrator;
  ProcessLauncher launcher;  // workers are processes; a signal ends the orchestrator's waits at once
  SystemClock clock(stop.fd());
  oo.launcher = &launcher;
  std::unique_ptr<ConductedNodes> nodes;  // a run across nodes: theirs joined, each said "end" on the way out
  if (parts.nodes.role.nodes > 1) {
    try {
      nodes = conduct_nodes(parts.nodes, launcher, results.meta, stop);
    } catch (const CannotRunError& e) {
      if (!stop.requested()) return fail(kExitCannotRun, e.what());
      std::cerr << "interference-bench: " << e.what() << "\n";
      modes.plan.clear();  // a stop signal while the nodes were awaited: nothing runs, the empty results are written, 130
    }
  }
  if (nodes) {
    try {
      check_node_cpus(modes.plan, nodes->open.nodes);
    } catch (const InputError& e) {
      return fail(kExitBadInput, e.what());  // the nodes are told "end" as `nodes` goes
    }
    attach_nodes(*nodes, oo);
  }
  oo.clock = &clock;
  Orchestrator orchestrator(oo);
  try {
    run_planned_scenarios(parts.conduct, modes.plan, modes.waived, orchestrator, results,
                          [&out](const Results& r) { out.writers.runs(r); }, stop.check());
  } catch (const CannotRunError& e) {
    return fail(kExitCannotRun, e.what());
  }
  if (oo.progress) std::cerr << "\r\033[K";
  if (nodes) {
    for (const std::string& lost : nodes->launcher->lost()) std::cerr << "interference-bench: " << lost << "\n";
    record_node_clocks(*nodes->launcher, results.meta);
  }
  return std::nullopt;
}

}  // namespace

// Order matters: every input and the output folder are checked before set-up changes anything
// (--mig-create, an MPS daemon); a stop signal in any stage ends the run through the same clean-up
// (ModeSetup destroys created MIG instances, TempDir its folder) with what finished written, exit 130.
int run_command(const RunRequest& o, const std::vector<std::string>& argv, const Registry& registry,
                StopSignals& stop) {
  signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe gives EPIPE, not death
  if (!o.html.empty()) check_html_available("--html");
  const NodeRole role = resolve_node_role(o, current_environment());
  RunParts parts = assemble_run(o, role, argv);
  if (role.node_rank > 0) return serve_as_node(parts.nodes, stop);  // the conductor's workers say which backend
  parts.meta.version = IB_VERSION;
  parts.meta.git_sha = IB_GIT_SHA;
  const Backend backend = resolve_backend(o, parts);
  check_victim_command_options(o);
  const std::vector<Scenario> scenarios = load_run_scenarios(o, parts, registry, backend, parts.meta);
  check_placed_nodes(scenarios, role.nodes);
  stop.throw_if_requested();  // nothing made yet: nothing to keep
  OutputFiles out = make_output_files(o, parts.out_dir, scenarios);
  Journal journal(default_state_dir());  // outlives what it records: removed once all is undone
  OrchestratorOptions& oo = parts.orchestrator;
  oo.modes.journal = &journal;
  ModeSetup setup;  // destroys MIG instances made by --mig-create on every way out of this function
  setup.journal = &journal;
  Results results;
  results.meta = parts.meta;
  results.summary = summarize_results({}, 0, false);
  RunModes modes;
  if (!stop.requested()) modes = prepare_run_modes(o.modes, o.all_modes, backend, scenarios, setup, oo.modes);
  if (!stop.requested()) attach_nvml(o, backend, scenarios.front().device, setup, oo, results.meta);
  results.meta.devices = describe_run_devices(backend, scenario_devices(scenarios), setup.nvml.get(), setup.nvml_error);
  const TempDir run_dir(journal);
  out.writers.context(results.meta);
  out.writers.runs(results);  // before anything runs: the folder takes files
  out.folder->keep();
  if (const auto failed = out.writers.failures(); !failed.empty()) return fail(kExitCannotRun, failed.front());
  wire_orchestrator(run_dir.path, stop, oo);
  announce_until_decided(o, parts, modes.plan);
  if (const auto refused = conduct_planned(parts, modes, out, results, stop)) return *refused;
  for (const std::string& p : tear_down_modes(setup)) std::cerr << "interference-bench: " << p << "\n";
  if (stop.requested() && !results.summary.interrupted)
    results.summary = summarize_results(results.aggregates, static_cast<int>(results.runs.size()), true);
  out.writers.finalize(results);
  // After results.json: the database can never cost the run its results, nor hide its verdict code.
  const int code = report_write_failures(out.writers, results.summary.exit_code);
  if (!o.history.empty()) return record_run_history(o.history, results, out.json, code);
  return code;
}

}  // namespace ib
