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

// NCCL's own ncclGetErrorString needs the loaded library; the result's name says the same.
void throw_nccl(const char* file, int line, const char* call, nccl::Result r) {
  throw WorkloadError(where(file, line, call) + nccl::result_name(r));
}

}  // namespace ib::cuda
