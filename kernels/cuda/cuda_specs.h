// The CUDA workloads' specs (names, descriptions, parameters), known to every build of the binary,
// and the factory that checks and makes them: the CUDA module's, loaded on first use (harness/exec/
// cuda_module.h), or the workloads' own in a program linked with them (kernels/cuda/cuda_workloads.h).
#pragma once

#include "kernels/workload.h"

#include <functional>
#include <memory>
#include <string>

namespace ib {

// Whether a CUDA device can be used. no_gpu: nothing to run on here (no module, driver or GPU, a bad
// index); `--backend auto` then falls back to the host. unusable: a GPU is there but this build cannot
// run on it (no kernels for its architecture); refused with exit 3 whatever the backend asked.
struct Availability {
  enum class State { usable, no_gpu, unusable };
  State state = State::usable;
  std::string reason;  // why not, when not usable
};

}  // namespace ib

namespace ib::cuda {

struct CudaFactory {
  // Can the named workload run here with these (validated) params?
  std::function<Support(const std::string& name, const Params&, const ExecContext&)> supported;
  // Makes it (throws WorkloadError when it cannot).
  std::function<std::unique_ptr<Workload>(const std::string& name, const Params&)> create;
};

// Adds gemm, copy, h2d, latency, serve, train-step and allreduce, each bound to `factory`.
void add_cuda_workload_specs(Registry& registry, const CudaFactory& factory);

}  // namespace ib::cuda
