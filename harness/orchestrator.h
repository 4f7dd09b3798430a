// Runs one scenario repetition: the phases (exclusive, alone, colocated) of DESIGN.md section 3,
// one worker process per tenant, barrier release, watchdog, and stopping on SIGINT/SIGTERM.
#pragma once

#include "harness/results.h"
#include "harness/scenario.h"

#include <functional>
#include <string>

namespace ib {

struct OrchestratorOptions {
  Backend backend = Backend::host;
  std::string worker_exe;         // this binary; workers run `<exe> worker ...`
  std::string log_dir;            // worker logs go here
  double timeout_margin_s = 60.0; // a worker may exceed warm-up or duration by this much, then it is killed
  double stop_grace_s = 3.0;      // after "stop", how long a worker has to exit before SIGKILL
  int signal_fd = -1;             // signalfd for SIGINT/SIGTERM (or -1)
  std::function<void(const std::string&)> progress;  // one-line status, or empty
};

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
  GroupResult run_group(const Scenario& s, RunResult& run, const std::vector<std::size_t>& tenants,
                        const std::string& phase);
  bool poll_signal(int timeout_ms);

  OrchestratorOptions o_;
  bool interrupted_ = false;
};

}  // namespace ib
