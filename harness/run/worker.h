// The worker side: `interference-bench worker ...` (started by the orchestrator, never by hand).
// One process runs one tenant, or, in mode streams, several tenants on threads of one process
// (each with its own executor, hence its own CUDA stream in the process's one context). Each tenant
// sets up its workload, warms up, reports ready; then measures each block the harness releases it for
// (a short re-warm, then the block's duration) and streams the samples back (protocol.h, messages
// tagged with the tenant's slot and the block), until "end".
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
  double rewarm_s = 0.05;  // before each block, unreported (at least one sample)
};

// Returns the process exit code: 0 after done or waived, 1 when a workload failed.
int run_worker(const WorkerOptions& options, const Registry& registry);

}  // namespace ib
