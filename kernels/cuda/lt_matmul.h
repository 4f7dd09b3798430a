// A planned cuBLASLt matmul, column-major: D(m x n) = alpha * op(A) op(B), beta = 0.
// A is stored m x k (opA = N) or k x m (opA = T); B is stored k x n (N) or n x k (T); leading
// dimension = stored rows. The algorithm is chosen once, by cuBLASLt's heuristic, at construction.
#pragma once

#include "kernels/cuda/accounting.h"
#include "kernels/cuda/cuda_check.h"

#include <cstdint>

namespace ib::cuda {

// One cuBLASLt handle (RAII).
class LtHandle {
 public:
  LtHandle();
  ~LtHandle();
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
  cublasLtHandle_t get() const { return h_; }

 private:
  cublasLtHandle_t h_ = nullptr;
};

class LtMatmul {
 public:
  LtMatmul(cublasLtHandle_t handle, acct::DType dtype, bool trans_a, bool trans_b, std::int64_t m,
           std::int64_t n, std::int64_t k, std::size_t workspace_bytes, float alpha = 1.0f, bool relu = false);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  // Enqueues D = alpha op(A) op(B) on `stream`; `workspace` must hold workspace_bytes.
  void run(const void* a, const void* b, void* d, void* workspace, cudaStream_t stream) const;

  std::int64_t m() const { return m_; }
  std::int64_t n() const { return n_; }
  std::int64_t k() const { return k_; }

 private:
  void plan(acct::DType dtype, bool trans_a, bool trans_b, bool relu);
  void release();

  cublasLtHandle_t handle_;
  std::int64_t m_, n_, k_;
  std::size_t workspace_bytes_;
  float alpha_;
  float beta_ = 0.0f;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, ld_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

// Recommended cuBLASLt workspace on Hopper.
constexpr std::size_t kLtWorkspaceBytes = 32u << 20;

}  // namespace ib::cuda
