#include "kernels/cuda/lt_matmul.h"

#include <string>

namespace ib::cuda {

LtHandle::LtHandle() { IB_CHECK(cublasLtCreate(&h_)); }
LtHandle::~LtHandle() {
  if (h_) cublasLtDestroy(h_);
}

namespace {
cudaDataType_t ab_type(acct::DType d) {
  switch (d) {
    case acct::DType::bf16: return CUDA_R_16BF;
    case acct::DType::fp16: return CUDA_R_16F;
    case acct::DType::tf32:
    case acct::DType::fp32: return CUDA_R_32F;
    case acct::DType::fp8: return CUDA_R_8F_E4M3;
  }
  return CUDA_R_32F;
}
cudaDataType_t d_type(acct::DType d) {
  if (d == acct::DType::fp8) return CUDA_R_16BF;
  return ab_type(d);
}
}  // namespace

LtMatmul::LtMatmul(cublasLtHandle_t handle, acct::DType dtype, bool trans_a, bool trans_b, std::int64_t m,
                   std::int64_t n, std::int64_t k, std::size_t workspace_bytes, float alpha, bool relu)
    : handle_(handle), m_(m), n_(n), k_(k), workspace_bytes_(workspace_bytes), alpha_(alpha) {
  try {
    plan(dtype, trans_a, trans_b, relu);
  } catch (...) {
    release();  // the destructor does not run when a constructor throws
    throw;
  }
}

void LtMatmul::plan(acct::DType dtype, bool trans_a, bool trans_b, bool relu) {
  const std::int64_t m = m_, n = n_, k = k_;
  const cublasComputeType_t compute =
      dtype == acct::DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  IB_CHECK(cublasLtMatmulDescCreate(&op_, compute, CUDA_R_32F));
  const cublasOperation_t ta = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  IB_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  IB_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  if (relu) {
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_RELU;
    IB_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  }
  // Stored shapes (column-major, leading dimension = rows).
  const std::uint64_t a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
  const std::uint64_t b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
  IB_CHECK(cublasLtMatrixLayoutCreate(&la_, ab_type(dtype), a_rows, a_cols, static_cast<std::int64_t>(a_rows)));
  IB_CHECK(cublasLtMatrixLayoutCreate(&lb_, ab_type(dtype), b_rows, b_cols, static_cast<std::int64_t>(b_rows)));
  IB_CHECK(cublasLtMatrixLayoutCreate(&ld_, d_type(dtype), m, n, m));

  cublasLtMatmulPreference_t pref = nullptr;
  IB_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                           &workspace_bytes_, sizeof(workspace_bytes_));
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(handle_, op_, la_, lb_, ld_, ld_, pref, 1, &result, &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  IB_CHECK(st);
  if (returned == 0) {
    throw WorkloadError(std::string("cuBLASLt has no algorithm for a ") + acct::dtype_name(dtype) + " GEMM m=" +
                        std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                        (trans_a ? " opA=T" : " opA=N") + (trans_b ? " opB=T" : " opB=N"));
  }
  algo_ = result.algo;
}

LtMatmul::~LtMatmul() { release(); }

void LtMatmul::release() {
  if (ld_) cublasLtMatrixLayoutDestroy(ld_);
  if (lb_) cublasLtMatrixLayoutDestroy(lb_);
  if (la_) cublasLtMatrixLayoutDestroy(la_);
  if (op_) cublasLtMatmulDescDestroy(op_);
  ld_ = lb_ = la_ = nullptr;
  op_ = nullptr;
}

void LtMatmul::run(const void* a, const void* b, void* d, void* workspace, cudaStream_t stream) const {
  // C = D with beta = 0: C is not read.
  IB_CHECK(cublasLtMatmul(handle_, op_, &alpha_, a, la_, b, lb_, &beta_, d, ld_, d, ld_, &algo_, workspace,
                          workspace_bytes_, stream));
}

}  // namespace ib::cuda
