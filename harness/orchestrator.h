// Runs one scenario repetition: the phases (exclusive, alone, colocated) of DESIGN.md section 3,
// one worker process per tenant, barrier release, watchdog, and stopping on SIGINT/SIGTERM.
#pragma once

#include "harness/nvml.h"
#include "harness/results.h"
#include "harness/scenario.h"

#include <functional>
#include <map>
#include <string>

namespace ib {

// Mode mig: where each tenant of a scenario runs (resolved and validated before anything runs).
struct MigPlan {
  std::vector<MigInstance> instances;        // every MIG device of the GPU
  std::vector<std::size_t> tenant_instance;  // per tenant: index into instances
  std::size_t largest = 0;                   // where the exclusive phase runs when there is no baseline
};

// An exclusive phase read from a saved results file, with the work per sample it was measured with.
struct BaselinePhase {
  std::string workload;
  PhaseResult phase;
  Work work;
};

struct OrchestratorOptions {
  Backend backend = Backend::host;
  std::string worker_exe;         // this binary; workers run `<exe> worker ...`
  std::string log_dir;            // worker logs go here
  double timeout_margin_s = 60.0; // a worker may exceed warm-up or duration by this much, then it is killed
  double stop_grace_s = 3.0;      // after "stop", how long a worker has to exit before SIGKILL
  int signal_fd = -1;             // signalfd for SIGINT/SIGTERM (or -1)
  std::function<void(const std::string&)> progress;  // one-line status, or empty
  std::string run_dir;            // private temporary folder of this invocation (MPS pipes and logs)
  std::string mps_pipe_dir;       // mode mps: attach to this daemon instead of starting one
  std::map<std::string, MigPlan> mig_plans;  // mode mig: by scenario name
  // Saved exclusive phases (--baseline), by "<scenario>/<tenant>": used instead of measuring.
  std::map<std::string, BaselinePhase> baseline;
  std::string baseline_file;
  nlohmann::json device;          // what was read about the device (compute mode, MIG mode), per run
  // Non-empty when the GPU is in MIG mode: modes other than mig then run on the one MIG instance CUDA
  // shows a worker, and this says so in each such run (mode_config.exclusive_source).
  std::string mig_instance_note;
  Nvml* nvml = nullptr;           // telemetry source; nullptr or telemetry_hz 0: no telemetry
  unsigned telemetry_device = 0;  // the physical GPU (also in mode mig)
  double telemetry_hz = 0.0;
};

// A run's result before any phase: the scenario's settings and one entry per tenant.
RunResult new_run_result(const Scenario& s, int repetition);

class Orchestrator {
 public:
  explicit Orchestrator(OrchestratorOptions options) : o_(std::move(options)) {}
  // Runs every phase the scenario's mode needs; samples only, no metrics (see analysis.h).
  RunResult run(const Scenario& scenario, int repetition);
  bool interrupted() const { return interrupted_; }

 private:
  struct GroupResult {
    bool ok = true;
    std::optional<double> barrier_skew_s;
    std::optional<std::int64_t> overlap_start_ns, overlap_end_ns;
  };
  // Runs `tenants` together for one phase and fills their PhaseResult in `run`.
  // env(i) is the environment the worker of tenant i gets on top of the harness's.
  GroupResult run_group(const Scenario& s, RunResult& run, const std::vector<std::size_t>& tenants,
                        const std::string& phase, const std::function<std::vector<std::string>(std::size_t)>& env);
  bool poll_signal(int timeout_ms);

  OrchestratorOptions o_;
  bool interrupted_ = false;
  int mps_starts_ = 0;
};

}  // namespace ib
