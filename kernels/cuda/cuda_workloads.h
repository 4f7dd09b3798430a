// CUDA workloads (gemm, copy, h2d, latency, allreduce, train-step, serve).
// Built only when the CUDA toolkit is found; without it nothing is registered and
// `--backend cuda` says the tool was built without CUDA.
#pragma once

#include "kernels/workload.h"

namespace ib {

void register_cuda_workloads(Registry& registry);

}  // namespace ib
