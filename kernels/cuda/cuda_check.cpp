#include "kernels/cuda/cuda_check.h"

#include <string>

namespace ib::cuda {

namespace {
std::string where(const char* file, int line, const char* call) {
  return std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: ";
}
}  // namespace

void throw_cuda(const char* file, int line, const char* call, cudaError_t e) {
  throw WorkloadError(where(file, line, call) + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

void throw_cublas(const char* file, int line, const char* call, cublasStatus_t s) {
  throw WorkloadError(where(file, line, call) + "cuBLAS status " + std::to_string(static_cast<int>(s)) + " (" +
                      cublasLtGetStatusString(s) + ")");
}

void throw_nccl(const char* file, int line, const char* call, ncclResult_t r) {
  throw WorkloadError(where(file, line, call) + "NCCL " + ncclGetErrorString(r));
}

}  // namespace ib::cuda
