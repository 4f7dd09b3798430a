// The command line (CLI11): every command and its options, the dispatch to the command the parse chose, and the
// one-line refusals (exit 2 for bad input, 3 for what cannot run, 130 when stopped). `run`'s options are in
// run_options.cpp, the run itself in run_command.cpp.
#include "harness/cli/app.h"

#include "harness/cli/result_commands.h"
#include "harness/cli/history_command.h"
#include "harness/cli/merge_command.h"
#include "harness/cli/run_options.h"
#include "harness/cli/validators.h"

#include "build_info.h"
#include "harness/core/stop_signals.h"
#include "harness/core/text.h"
#include "harness/modes/cleanup.h"
#include "harness/modes/journal.h"
#include "harness/modes/mode_table.h"
#include "harness/nvml/nvml.h"
#include "harness/cli/platform_commands.h"
#include "harness/scenario/scenario.h"
#include "harness/worker/worker.h"
#include "harness/exec/cuda_module.h"
#include "kernels/command/command_workload.h"
#include "kernels/host/host_workloads.h"

#include <CLI/CLI.hpp>
#include <signal.h>
#include <sys/prctl.h>

#include <filesystem>
#include <optional>
#include <iostream>

namespace ib {

int fail(int code, const std::string& message) {
  std::string line = "interference-bench: " + printable(message, std::string::npos);
  if (code == kExitBadInput && line.size() > 200) line = line.substr(0, 197) + "...";
  std::cerr << line << "\n";
  return code;
}

namespace {

Registry make_registry() {
  Registry r;
  register_host_workloads(r);
  register_cuda_workloads(r);
  register_command_workload(r);
  return r;
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

// The hidden `worker` command, which the harness starts (worker/worker.h); its tenants as JSON.
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

// Every command's options, filled by the parse; `run` is the default command.
struct Commands {
  RunRequest run;
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
  c.list->add_option("what", c.what, "workloads (with their parameters and defaults), scenarios (the suites and their files) or modes")
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
               "Runs each tenant alone (exclusive) and co-located, and reports P95 slowdown against a cutoff.\n"
               "Without a command it runs `run`, with the options below; `interference-bench COMMAND --help` for the others.\n"
               "Exit: 0 pass, 1 a verdict failed, 2 bad input, 3 cannot run here, 4 a workload failed, 5 inconclusive,\n"
               "70 internal error, 130 interrupted."};
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
    return run_command(c.run, args, registry, stop);
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
