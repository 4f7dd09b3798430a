// The binary's side of the CUDA module (cuda_module_api.h): found beside the binary
// (<bin>/libinterference-bench-cuda.so, or <bin>/../lib/interference-bench/ when installed) or at
// $IB_CUDA_MODULE, loaded on the first call that needs it, once per process. Without it (a build
// configured without nvcc, the file absent, its CUDA libraries missing) every CUDA device is
// no_gpu with the reason, and CUDA workloads are waived with it.
#pragma once

#include "harness/exec/executor.h"
#include "kernels/cuda/cuda_specs.h"
#include "kernels/workload.h"

#include <optional>
#include <string>

namespace ib {

// Whether CUDA `device` can be used (cuda_specs.h says what no_gpu and unusable mean).
Availability cuda_availability(int device);

// The reason of cuda_availability when not usable, else nullopt.
std::optional<std::string> cuda_unavailable_reason(int device);

// Adds the CUDA workloads' specs, checked and made by the module (loaded when first asked).
void register_cuda_workloads(Registry& registry);

}  // namespace ib
