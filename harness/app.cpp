#include "harness/app.h"

#include "build_info.h"
#include "harness/analysis.h"
#include "harness/clock.h"
#include "harness/executor.h"
#include "harness/mode_setup.h"
#include "harness/mps.h"
#include "harness/nvml.h"
#include "harness/orchestrator.h"
#include "harness/platform.h"
#include "harness/process.h"
#include "harness/scenario.h"
#include "harness/worker.h"
#include "kernels/cuda/cuda_workloads.h"
#include "kernels/host/host_workloads.h"
#include "reports/json_writer.h"
#include "reports/markdown_writer.h"

#include <CLI/CLI.hpp>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
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
  std::optional<double> duration, warmup, cutoff;
  std::optional<int> repeat;
  std::string out;
  bool no_raw = false;
  double timeout_margin = 60.0;
  std::uint64_t seed = 1;
  int resamples = 1000;
  std::string mps_pipe_dir;
  std::string baseline;
  std::vector<std::string> mig_create;
  std::optional<double> telemetry_hz;  // default: 10 with the cuda backend, off with host
};

Registry make_registry() {
  Registry r;
  register_host_workloads(r);
  register_cuda_workloads(r);
  return r;
}

void make_dirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw std::runtime_error("cannot create " + path + ": " + ec.message());
}

// A private temporary folder for this invocation (MPS pipes), removed when the run ends.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/ib-run-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error(std::string("cannot create a temporary folder: ") + std::strerror(errno));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// "- " line on stderr; the one-line error style for every refusal.
int fail(int code, const std::string& message) {
  std::cerr << "interference-bench: " << message << "\n";
  return code;
}

int list_command(const std::string& what, const Registry& registry) {
  if (what == "workloads") {
    for (const auto* w : registry.all()) {
      std::cout << w->name << "  [" << backend_name(w->backend) << "]  " << w->description << "\n";
      for (const auto& p : w->params)
        std::cout << "    " << p.name << " = " << p.default_value.dump() << "  " << p.help << "\n";
    }
    return kExitPass;
  }
  if (what == "modes") {
    std::cout << "exclusive  one tenant at a time on the whole device (the baseline)\n"
                 "timeslice  tenants as separate processes sharing the device (GPU time-slicing; OS scheduling on host)\n"
                 "mps        exclusive, then each tenant alone and all together as MPS clients of a private control daemon\n"
                 "mig        each tenant alone and all together, each on its own MIG instance (exclusive: --baseline)\n"
                 "streams    all tenants in one process, one stream (host: one thread) each: the in-process baseline\n";
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
  r.status = "waived";
  r.message = reason;
  for (auto& t : r.tenants) {
    t.verdict = Verdict::waived;
    t.verdict_reason = "mode " + r.mode + " waived: " + reason;
  }
  return r;
}

int run_command(const RunOptions& o, const std::vector<std::string>& argv, const Registry& registry) {
  // SIGINT/SIGTERM arrive through a signalfd the orchestrator polls; nothing runs in a handler.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  const int sfd = signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK);
  signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe gives EPIPE, not death

  // --mode all: every sharing mode side by side; scenarios are loaded once, placement keys of the
  // other modes are kept for the mode they belong to.
  const bool all_modes = o.mode == "all";
  ScenarioOverrides ov;
  if (!o.mode.empty() && !all_modes) ov.mode = parse_mode(o.mode);
  ov.lenient_placement = all_modes;
  ov.duration_s = o.duration;
  ov.warmup_s = o.warmup;
  ov.repetitions = o.repeat;
  ov.cutoff = o.cutoff;

  // Backend: cuda is the default so a broken GPU node fails instead of measuring the CPU.
  Meta meta;
  meta.argv = argv;
  meta.version = IB_VERSION;
  meta.git_sha = IB_GIT_SHA;
  meta.start_time = utc_now("%Y-%m-%dT%H:%M:%SZ");
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  meta.host = host;
  meta.host_cpus = static_cast<int>(available_cpus().size());
  meta.backend_requested = o.backend;
  meta.bootstrap_seed = o.seed;
  meta.bootstrap_resamples = o.resamples;
  Backend backend = o.backend == "host" ? Backend::host : Backend::cuda;
  if (o.backend != "host") {
    if (const auto why = cuda_unavailable_reason(o.device.value_or(0))) {
      if (o.backend == "cuda") return fail(kExitCannotRun, "--backend cuda: " + *why);
      backend = Backend::host;
      meta.backend_note = "NO GPU FOUND (" + *why +
                          "). Running the host (CPU) workloads instead: these figures describe CPU and "
                          "memory-bandwidth sharing on this machine, not GPU sharing.";
      std::cerr << "\n*** " << meta.backend_note << " ***\n\n";
    }
  }
  meta.backend = backend_name(backend);

  // Load and validate everything before anything runs.
  ValidationContext vctx{&registry, backend, available_cpus()};
  std::vector<Scenario> scenarios;
  if (!o.scenario.empty()) {
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
      return fail(kExitBadInput, "--suite " + suite_name + ": no scenarios for the " + backend_name(backend) + " backend");
  }
  for (auto& s : scenarios)
    if (o.device) s.device = *o.device;
  OrchestratorOptions oo;
  ModeSetup setup;  // destroys MIG instances made by --mig-create on every way out of this function
  // What runs, in order: each scenario under its mode, or (--mode all) under every mode in turn,
  // with the modes this machine cannot run waived with the reason.
  const std::vector<Mode> all_mode_list = {Mode::timeslice, Mode::mps, Mode::mig, Mode::streams};
  std::map<Mode, std::string> waived_modes;
  const ModeRequest request{o.baseline, o.mig_create, o.mps_pipe_dir};
  if (all_modes) {
    for (Mode m : all_mode_list) {
      std::vector<Scenario> copies = scenarios;
      for (auto& s : copies) s.mode = m;
      try {
        prepare_modes(request, backend, copies, setup, oo, true);
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
  } else {
    prepare_modes(request, backend, scenarios, setup, oo, false);
  }
  // Telemetry beside every phase (DESIGN.md section 5), where NVML answers.
  const double hz = o.telemetry_hz.value_or(backend == Backend::cuda ? 10.0 : 0.0);
  meta.telemetry = {{"hz", hz}};
  if (hz > 0.0) {
    ensure_nvml(setup, scenarios.front().device);
    if (setup.nvml) {
      oo.nvml = setup.nvml.get();
      oo.telemetry_device = static_cast<unsigned>(scenarios.front().device);
      oo.telemetry_hz = hz;
      meta.telemetry["source"] = setup.nvml->library_path();
    } else {
      meta.telemetry["source"] = "unavailable: " + setup.nvml_error;
      std::cerr << "interference-bench: no telemetry (" << setup.nvml_error << ")\n";
    }
  }
  std::vector<Scenario> plan;
  for (const auto& s : scenarios) {
    if (!all_modes) plan.push_back(s);
    for (Mode m : all_modes ? all_mode_list : std::vector<Mode>{}) {
      plan.push_back(s);
      plan.back().mode = m;
    }
  }
  const TempDir run_dir;

  const std::string out_dir = o.out.empty() ? "interference-bench-results/" + utc_now("%Y%m%d-%H%M%S") : o.out;
  make_dirs(out_dir + "/logs");
  const std::string json_path = out_dir + "/results.json";
  const std::string md_path = out_dir + "/summary.md";

  Results results;
  results.meta = meta;
  auto write_outputs = [&] {
    write_file_atomic(json_path, results_to_json(results, !o.no_raw).dump(1) + "\n");
    write_file_atomic(md_path, markdown_summary(results));
  };
  results.summary = summarize_results(results.runs, false);
  write_outputs();

  const bool tty = isatty(STDERR_FILENO);
  oo.backend = backend;
  oo.run_dir = run_dir.path;
  oo.mps_pipe_dir = o.mps_pipe_dir;
  oo.worker_exe = self_exe_path();
  oo.log_dir = out_dir + "/logs";
  oo.timeout_margin_s = o.timeout_margin;
  oo.signal_fd = sfd;
  if (tty) oo.progress = [](const std::string& line) { std::cerr << "\r\033[K" << line << std::flush; };
  Orchestrator orchestrator(oo);

  std::size_t index = 0;
  for (const auto& s : plan) {
    if (const auto w = waived_modes.find(s.mode); w != waived_modes.end()) {
      results.runs.push_back(waived_run(s, w->second));
      results.summary = summarize_results(results.runs, false);
      write_outputs();
      continue;
    }
    for (int rep = 1; rep <= s.repetitions && !orchestrator.interrupted(); ++rep) {
      RunResult run;
      try {
        run = orchestrator.run(s, rep);
      } catch (const CannotRunError& e) {  // e.g. the MPS daemon would not start: keep what finished
        write_outputs();
        return fail(kExitCannotRun, e.what());
      }
      finalize_run(run, o.seed + (static_cast<std::uint64_t>(index++) << 16), o.resamples);
      results.runs.push_back(std::move(run));
      results.summary = summarize_results(results.runs, orchestrator.interrupted());
      write_outputs();  // after every scenario: an interrupted run keeps what it finished
    }
    if (orchestrator.interrupted()) break;
  }
  if (tty) std::cerr << "\r\033[K";
  if (setup.created) {
    setup.created->destroy_all();
    for (const auto& p : setup.created->problems()) std::cerr << "interference-bench: " << p << "\n";
  }
  std::cout << markdown_summary(results) << "\nresults: " << json_path << "\n";
  if (sfd >= 0) close(sfd);
  return results.summary.exit_code;
}

}  // namespace

int run_app(int argc, char** argv) {
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

  RunOptions o;
  app.add_option("--mode", o.mode, "Sharing mode (overrides the scenario's); all: every mode side by side")
      ->check(CLI::IsMember([] {
        auto names = mode_names();
        names.push_back("all");
        return names;
      }()));
  auto* scen = app.add_option("--scenario", o.scenario, "Scenario file (JSON)")->check(CLI::ExistingFile);
  app.add_option("--suite", o.suite, "Suite name from scenarios/suites (default: quick)")->excludes(scen);
  app.add_option("--backend", o.backend, "cuda (default), host (CPU workloads) or auto (cuda if a GPU is usable, else host)")
      ->check(CLI::IsMember({"cuda", "host", "auto"}));
  app.add_option("--device", o.device, "CUDA device index (overrides the scenario's)")->check(CLI::Range(0, 63));
  app.add_option("--duration", o.duration, "Seconds of measurement per phase")->check(CLI::PositiveNumber);
  app.add_option("--warmup", o.warmup, "Seconds of warm-up per worker")->check(CLI::PositiveNumber);
  app.add_option("--repeat", o.repeat, "Repetitions (separate process restarts)")->check(CLI::Range(1, 1000));
  app.add_option("--cutoff", o.cutoff, "P95 slowdown cutoff (default 0.40)")->check(CLI::PositiveNumber);
  app.add_option("--out", o.out, "Output folder (default interference-bench-results/<UTC time>)");
  app.add_flag("--no-raw", o.no_raw, "Leave the raw per-sample arrays out of the JSON");
  app.add_option("--timeout-margin", o.timeout_margin,
                 "Seconds a worker may overrun its warm-up or measurement before it is killed (default 60)")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", o.seed, "Bootstrap seed (default 1)");
  app.add_option("--resamples", o.resamples, "Bootstrap resamples for the P95 CI (default 1000)")->check(CLI::Range(0, 100000));
  app.add_option("--telemetry-hz", o.telemetry_hz,
                 "NVML telemetry rate beside every phase (default 10 with --backend cuda, off with host; 0: off)")
      ->check(CLI::Range(0.0, 1000.0));
  app.add_option("--mps-pipe-dir", o.mps_pipe_dir, "mode mps: use the MPS daemon already running there (never stopped)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--baseline", o.baseline, "mode mig: take the exclusive phase from this results.json of an exclusive run")
      ->check(CLI::ExistingFile);
  app.add_option("--mig-create", o.mig_create,
                 "mode mig (root): create these MIG instances (e.g. 3g.71gb,3g.71gb) and destroy exactly them at the end")
      ->delimiter(',');

  auto* list = app.add_subcommand("list", "List workloads, scenarios (suites) or modes");
  std::string what;
  list->add_option("what", what, "workloads | scenarios | modes")->required()->check(CLI::IsMember({"workloads", "scenarios", "modes"}));

  PlatformCommands platform;
  add_platform_commands(app, platform);

  auto* worker = app.add_subcommand("worker", "")->group("");  // hidden: started by the harness only
  WorkerOptions wo;
  std::string wbackend = "host";
  std::vector<std::string> wtenants;
  worker->add_option("--tenant", wtenants, "{\"workload\": ..., \"params\": {...}, \"cpus\": [...]}, once per tenant")
      ->required();
  worker->add_option("--backend", wbackend);
  worker->add_option("--device", wo.device);
  worker->add_option("--warmup", wo.warmup_s);
  worker->add_option("--duration", wo.duration_s);

  try {
    app.parse(static_cast<int>(cargv.size()), cargv.data());
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitPass : kExitBadInput;
  }

  try {
    const Registry registry = make_registry();
    if (*worker) {
      wo.backend = wbackend == "cuda" ? Backend::cuda : Backend::host;
      for (const auto& text : wtenants) {
        const nlohmann::json t = nlohmann::json::parse(text);
        wo.tenants.push_back({t.at("workload").get<std::string>(), t.value("params", nlohmann::json::object()).dump(),
                              t.value("cpus", std::vector<int>{})});
      }
      return run_worker(wo, registry);
    }
    if (*list) return list_command(what, registry);
    if (const auto rc = run_platform_command(platform)) return *rc;
    return run_command(o, args, registry);
  } catch (const InputError& e) {
    return fail(kExitBadInput, e.what());
  } catch (const CannotRunError& e) {
    return fail(kExitCannotRun, e.what());
  } catch (const std::exception& e) {
    return fail(kExitCannotRun, e.what());
  }
}

}  // namespace ib
