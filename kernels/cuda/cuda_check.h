// Error checking for CUDA runtime, cuBLAS(Lt) and NCCL calls: every failure becomes an
// ib::WorkloadError that names the file:line, the call and the library's own message.
// Plain C++ (no nvcc needed), so host-compiled sources can use it too.
#pragma once

#include "kernels/cuda/nccl_api.h"
#include "kernels/workload.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

namespace ib::cuda {

[[noreturn]] void throw_cuda(const char* file, int line, const char* call, cudaError_t e);
[[noreturn]] void throw_cublas(const char* file, int line, const char* call, cublasStatus_t s);
[[noreturn]] void throw_nccl(const char* file, int line, const char* call, nccl::Result r);

inline void check(cudaError_t e, const char* file, int line, const char* call) {
  if (e != cudaSuccess) throw_cuda(file, line, call, e);
}
inline void check(cublasStatus_t s, const char* file, int line, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) throw_cublas(file, line, call, s);
}
inline void check(nccl::Result r, const char* file, int line, const char* call) {
  if (r != nccl::Result::success) throw_nccl(file, line, call, r);
}

}  // namespace ib::cuda

// IB_CHECK(call): works for cudaError_t, cublasStatus_t and nccl::Result (NCCL loaded at run time,
// kernels/cuda/nccl_api.h).
#define IB_CHECK(call) ::ib::cuda::check((call), __FILE__, __LINE__, #call)
// After every kernel launch: catches bad launch configurations at once.
#define IB_CHECK_LAUNCH() ::ib::cuda::check(cudaGetLastError(), __FILE__, __LINE__, "kernel launch")
