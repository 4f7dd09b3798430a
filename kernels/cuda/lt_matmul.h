// A planned cuBLASLt matmul, column-major: D(m x n) = alpha * op(A) op(B), beta = 0.
// A is stored m x k (opA = N) or k x m (opA = T); B is stored k x n (N) or n x k (T); leading
// dimension = stored rows. At construction the algorithm is cuBLASLt's first heuristic choice;
// candidates() lists more of them and use() switches to another (gemm times them and keeps the
// fastest), given directly or as the text of an LtAlgoConfig (an algorithm recorded in the results).
#pragma once

#include "kernels/cuda/accounting.h"
#include "kernels/cuda/cuda_check.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// An algorithm's configuration, as cuBLASLt's cublasLtMatmulAlgoConfigGetAttribute reports it: what
// is needed to build the same algorithm again (cublasLtMatmulAlgoInit + the attributes). Its text
// is "id=21,tile=18,stages=35,splitk=1,reduction=0,swizzle=0,custom=0,inner=0,cluster=0".
struct LtAlgoConfig {
  std::int32_t id = 0;
  std::uint32_t tile = 0, stages = 0, splitk = 1, reduction = 0, swizzle = 0, custom = 0;
  std::uint16_t inner = 0, cluster = 0;
  bool operator==(const LtAlgoConfig& o) const;
};
std::string to_text(const LtAlgoConfig& c);
// Parses to_text's form (every key once, any order); std::nullopt with `error` set otherwise.
std::optional<LtAlgoConfig> parse_algo_config(const std::string& text, std::string& error);
// Reads an algorithm's configuration (throws WorkloadError on a cuBLASLt error).
LtAlgoConfig algo_config(const cublasLtMatmulAlgo_t& algo);

class LtMatmul {
 public:
  LtMatmul(cublasLtHandle_t handle, acct::DType dtype, bool trans_a, bool trans_b, std::int64_t m,
           std::int64_t n, std::int64_t k, std::size_t workspace_bytes, float alpha = 1.0f, bool relu = false);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  // Enqueues D = alpha op(A) op(B) on `stream`; `workspace` must hold workspace_bytes.
  void run(const void* a, const void* b, void* d, void* workspace, cudaStream_t stream) const;

  // Up to `max` algorithms cuBLASLt's heuristic proposes for this problem, its best-ranked first
  // (those it marks as failing its own check are left out); throws when there is none.
  std::vector<cublasLtMatmulAlgo_t> candidates(int max) const;
  // Runs with `algo` from now on, after cublasLtMatmulAlgoCheck accepted it for this problem and its
  // workspace fits (throws WorkloadError otherwise).
  void use(const cublasLtMatmulAlgo_t& algo);
  // Builds the algorithm `config` describes for this problem's types and use()s it.
  void use(const LtAlgoConfig& config);
  const cublasLtMatmulAlgo_t& algo() const { return algo_; }

  std::int64_t m() const { return m_; }
  std::int64_t n() const { return n_; }
  std::int64_t k() const { return k_; }

 private:
  void plan(acct::DType dtype, bool trans_a, bool trans_b, bool relu);
  void release();
  std::string problem_text() const;

  cublasLtHandle_t handle_;
  std::int64_t m_, n_, k_;
  std::size_t workspace_bytes_;
  float alpha_;
  float beta_ = 0.0f;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, ld_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  acct::DType dtype_ = acct::DType::bf16;
  bool trans_a_ = false, trans_b_ = false;
};

// Recommended cuBLASLt workspace on Hopper.
constexpr std::size_t kLtWorkspaceBytes = 32u << 20;

}  // namespace ib::cuda
