// A run assembled once from its request (assemble.h).
#include "harness/run/assemble.h"

#include "harness/analysis/deciding.h"
#include "harness/core/errors.h"
#include "harness/core/host.h"
#include "harness/core/output_dir.h"
#include "harness/core/text.h"
#include "harness/exec/cuda_module.h"
#include "harness/modes/mig_setup.h"
#include "harness/process/process.h"
#include "harness/scenario/single_rank.h"

#include <iostream>

namespace ib {

namespace {

// The results' meta as the request sets it, and the facts of this run.
Meta request_meta(const RunRequest& r, const std::vector<std::string>& argv) {
  Meta meta;
  meta.argv = argv;
  meta.start_time = utc_now("%Y-%m-%dT%H:%M:%SZ");
  meta.host = host_name();
  meta.scheduler = scheduler_from_env();
  meta.host_cpus = static_cast<int>(available_cpus().size());
  meta.backend_requested = r.backend;
  meta.bootstrap_seed = r.seed;
  meta.bootstrap_resamples = r.resamples;
  meta.max_foreign_cpus = r.max_foreign_cpus;
  meta.max_steal_cpus = r.max_steal_cpus;
  meta.max_reruns = r.max_reruns;
  meta.until = stop_rule(r.until, r.resamples);
  meta.rounds = r.rounds;
  meta.max_duration_s = r.max_duration;
  meta.resolution = r.resolution;
  return meta;
}

ScenarioOverrides scenario_overrides(const RunRequest& r) {
  ScenarioOverrides ov;
  ov.mode = r.mode;
  ov.lenient_placement = r.all_modes;  // placement keys of the other modes are kept for their mode
  ov.duration_s = r.duration;
  ov.warmup_s = r.warmup;
  ov.repetitions = r.repeat;
  ov.cutoff = r.cutoff;
  ov.collective_timeout_s = r.collective_timeout;
  return ov;
}

ConductSettings conduct_settings(const RunRequest& r) {
  ConductSettings c;
  c.seed = r.seed;
  c.resamples = r.resamples;
  c.resolution = r.resolution;
  c.until = stop_rule(r.until, r.resamples);
  c.rounds = r.rounds;
  c.max_duration = r.max_duration;
  return c;
}

OrchestratorOptions orchestrator_options(const RunRequest& r, const std::string& out_dir) {
  OrchestratorOptions oo;
  oo.modes.log_dir = out_dir + "/logs";
  oo.modes.mps_pipe_dir = r.modes.mps_pipe_dir;
  oo.worker_exe = self_exe_path();
  oo.log_dir = out_dir + "/logs";
  oo.timeout_margin_s = r.timeout_margin;
  oo.rounds = r.rounds;
  oo.round_order = r.round_order;
  oo.seed = r.seed;
  oo.max_reruns = r.max_reruns;
  oo.limits.max_foreign_cpus = r.max_foreign_cpus;
  oo.limits.max_steal_cpus = r.max_steal_cpus;
  return oo;
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

}  // namespace

RunParts assemble_run(const RunRequest& r, const NodeRole& role, const std::vector<std::string>& argv) {
  RunParts p;
  p.meta = request_meta(r, argv);
  p.out_dir = r.out.empty() ? OutputDir::unique_default("interference-bench-results/") : r.out;
  p.overrides = scenario_overrides(r);
  p.conduct = conduct_settings(r);
  p.orchestrator = orchestrator_options(r, p.out_dir);
  p.nodes = {role, r.join_timeout, p.orchestrator.worker_exe, p.out_dir + "/logs"};
  return p;
}

Backend resolve_backend(const RunRequest& r, RunParts& parts) {
  Backend backend = r.backend == "host" ? Backend::host : Backend::cuda;
  if (r.backend != "host") {
    const Availability cuda = cuda_availability(r.device.value_or(0));
    // A GPU this build cannot run on is refused whatever the backend: falling back to the host there
    // would answer a question nobody asked.
    if (cuda.state == Availability::State::unusable) throw CannotRunError(cuda.reason);
    if (cuda.state == Availability::State::no_gpu) {
      if (r.backend == "cuda") throw CannotRunError("--backend cuda: " + cuda.reason);
      backend = Backend::host;
      parts.meta.backend_note = "NO GPU FOUND (" + cuda.reason +
                                "). Running the host (CPU) workloads instead: these figures describe CPU and "
                                "memory-bandwidth sharing on this machine, not GPU sharing.";
      std::cerr << "\n*** " << parts.meta.backend_note << " ***\n\n";
    }
  }
  parts.meta.backend = backend_name(backend);
  parts.orchestrator.backend = backend;
  return backend;
}

std::vector<Scenario> load_run_scenarios(const RunRequest& r, const RunParts& parts, const Registry& registry,
                                         Backend backend, Meta& meta) {
  ScenarioOverrides ov = parts.overrides;
  ValidationContext vctx{&registry, backend, available_cpus()};
  std::vector<Scenario> scenarios;
  if (r.victim_command) {
    VictimCommand v{r.victim_argv, r.victim_metric.empty() ? "heartbeat" : r.victim_metric, split_list(r.aggressors)};
    // "--aggressors ,,," names none: not a request for the defaults (issue 37 item 11)
    if (!r.aggressors.empty() && v.aggressors.empty())
      throw InputError("--aggressors: \"" + printable(r.aggressors, 40) + "\" names no workload");
    scenarios = victim_command_scenarios(v, ov, vctx);
  } else if (!r.scenario.empty()) {
    scenarios.push_back(load_scenario(r.scenario, ov, vctx));
  } else {
    const std::string suite_name = r.suite.empty() ? "quick" : r.suite;
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
    if (r.device) s.device = *r.device;
  scenarios = with_single_rank_references(scenarios);  // amplification's references run after their scenarios
  check_unique_scenario_names(scenarios);
  return scenarios;
}

void attach_nvml(const RunRequest& r, Backend backend, int device, ModeSetup& setup, OrchestratorOptions& oo,
                 Meta& meta) {
  const double hz = r.telemetry_hz.value_or(backend == Backend::cuda ? 10.0 : 0.0);
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
  const std::vector<MigInstance> scope = mig_instances_in_use(oo.modes);
  if (backend == Backend::cuda)
    oo.gpu_load_probe = make_gpu_load_probe(*setup.nvml, static_cast<unsigned>(device), 0.2, scope);
  else if (hz > 0.0)
    oo.gpu_load_probe = make_gpu_load_probe(*setup.nvml, static_cast<unsigned>(device), 0.0, scope);
}

}  // namespace ib
