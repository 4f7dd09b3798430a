// CUDA workloads (gemm, copy, h2d, latency, allreduce, train-step, serve).
// Built only when the CUDA toolkit is found; without it nothing is registered and
// `--backend cuda` says the tool was built without CUDA.
#pragma once

#include "kernels/workload.h"

#include <optional>
#include <string>

namespace ib {

void register_cuda_workloads(Registry& registry);

// Why CUDA `device` cannot be used (no driver, no GPU, bad index), or nullopt when it can.
std::optional<std::string> cuda_unavailable_reason(int device);

}  // namespace ib
