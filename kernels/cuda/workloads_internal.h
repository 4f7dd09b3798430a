// Factories and supported() checks of the CUDA workloads, defined in their own .cu files and
// registered with their ParamSpecs in register_cuda.cpp.
#pragma once

#include "kernels/workload.h"

#include <memory>

namespace ib::cuda {

#define IB_DECLARE_CUDA_WORKLOAD(fn)                                \
  std::unique_ptr<Workload> make_##fn(const Params& p);             \
  Support fn##_supported(const Params& p, const ExecContext& ctx);

IB_DECLARE_CUDA_WORKLOAD(gemm)
IB_DECLARE_CUDA_WORKLOAD(copy)
IB_DECLARE_CUDA_WORKLOAD(h2d)
IB_DECLARE_CUDA_WORKLOAD(latency)
IB_DECLARE_CUDA_WORKLOAD(allreduce)
IB_DECLARE_CUDA_WORKLOAD(train_step)
IB_DECLARE_CUDA_WORKLOAD(serve)

#undef IB_DECLARE_CUDA_WORKLOAD

}  // namespace ib::cuda
