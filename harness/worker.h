// The worker side: `interference-bench worker ...` (started by the orchestrator, never by hand).
// One process runs one tenant, or, in mode streams, several tenants on threads of one process
// (each with its own executor, hence its own CUDA stream in the process's one context). Each tenant
// sets up its workload, warms up, reports ready; all wait at the barrier, measure for the phase
// duration and stream their samples back (protocol.h, messages tagged with the tenant's slot).
#pragma once

#include "kernels/workload.h"

#include <string>
#include <vector>

namespace ib {

struct WorkerTenant {
  std::string workload;
  std::string params_json = "{}";
  std::vector<int> cpus;  // affinity of this tenant's thread (empty: inherit)
};

struct WorkerOptions {
  std::vector<WorkerTenant> tenants;
  Backend backend = Backend::host;
  int device = 0;
  double warmup_s = 1.0;
  double duration_s = 1.0;
};

// Returns the process exit code: 0 after done or waived, 1 when a workload failed.
int run_worker(const WorkerOptions& options, const Registry& registry);

}  // namespace ib
