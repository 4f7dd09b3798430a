// The worker side of a tenant: `interference-bench worker ...` (started by the orchestrator, never
// by hand). Sets up its workload, warms up, reports ready, waits at the barrier, measures for the
// phase duration and streams its samples back (protocol.h).
#pragma once

#include "kernels/workload.h"

#include <string>
#include <vector>

namespace ib {

struct WorkerOptions {
  std::string workload;
  std::string params_json = "{}";
  Backend backend = Backend::host;
  int device = 0;
  double warmup_s = 1.0;
  double duration_s = 1.0;
  std::vector<int> cpus;
};

// Returns the process exit code: 0 after done or waived, 1 when the workload failed.
int run_worker(const WorkerOptions& options, const Registry& registry);

}  // namespace ib
