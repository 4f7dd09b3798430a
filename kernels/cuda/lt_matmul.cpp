#include "kernels/cuda/lt_matmul.h"

#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>
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
cublasComputeType_t compute_type(acct::DType d) {
  return d == acct::DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

template <typename T>
void get_attr(const cublasLtMatmulAlgo_t& a, cublasLtMatmulAlgoConfigAttributes_t attr, T& v) {
  std::size_t written = 0;
  IB_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&a, attr, &v, sizeof(v), &written));
}
template <typename T>
void set_attr(cublasLtMatmulAlgo_t& a, cublasLtMatmulAlgoConfigAttributes_t attr, const T& v) {
  IB_CHECK(cublasLtMatmulAlgoConfigSetAttribute(&a, attr, &v, sizeof(v)));
}
}  // namespace

bool LtAlgoConfig::operator==(const LtAlgoConfig& o) const {
  return id == o.id && tile == o.tile && stages == o.stages && splitk == o.splitk && reduction == o.reduction &&
         swizzle == o.swizzle && custom == o.custom && inner == o.inner && cluster == o.cluster;
}

std::string to_text(const LtAlgoConfig& c) {
  std::ostringstream os;
  os << "id=" << c.id << ",tile=" << c.tile << ",stages=" << c.stages << ",splitk=" << c.splitk
     << ",reduction=" << c.reduction << ",swizzle=" << c.swizzle << ",custom=" << c.custom << ",inner=" << c.inner
     << ",cluster=" << c.cluster;
  return os.str();
}

std::optional<LtAlgoConfig> parse_algo_config(const std::string& text, std::string& error) {
  static const char* const kKeys[] = {"id", "tile", "stages", "splitk", "reduction", "swizzle", "custom", "inner", "cluster"};
  std::map<std::string, long long> got;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    char* end = nullptr;
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    const long long v = std::strtoll(value.c_str(), &end, 10);
    if (eq == std::string::npos || value.empty() || *end != '\0' || v < std::numeric_limits<std::int32_t>::min() ||
        v > std::numeric_limits<std::uint32_t>::max()) {
      error = "expected key=integer, got \"" + item + "\"";
      return std::nullopt;
    }
    if (!got.emplace(key, v).second) {
      error = "\"" + key + "\" given twice";
      return std::nullopt;
    }
  }
  for (const char* k : kKeys)
    if (!got.count(k)) {
      error = std::string("missing \"") + k + "=\" (expected " + to_text(LtAlgoConfig{}) + " with the recorded values)";
      return std::nullopt;
    }
  if (got.size() != std::size(kKeys)) {
    error = "unknown key (expected exactly the keys of " + to_text(LtAlgoConfig{}) + ")";
    return std::nullopt;
  }
  for (const auto& [key, v] : got) {
    const long long hi = key == "inner" || key == "cluster" ? 65535LL : key == "id" ? 2147483647LL : 4294967295LL;
    if (v < (key == "id" ? -2147483648LL : 0LL) || v > hi) {
      error = "\"" + key + "\" out of range: " + std::to_string(v);
      return std::nullopt;
    }
  }
  LtAlgoConfig c;
  c.id = static_cast<std::int32_t>(got["id"]);
  c.tile = static_cast<std::uint32_t>(got["tile"]);
  c.stages = static_cast<std::uint32_t>(got["stages"]);
  c.splitk = static_cast<std::uint32_t>(got["splitk"]);
  c.reduction = static_cast<std::uint32_t>(got["reduction"]);
  c.swizzle = static_cast<std::uint32_t>(got["swizzle"]);
  c.custom = static_cast<std::uint32_t>(got["custom"]);
  c.inner = static_cast<std::uint16_t>(got["inner"]);
  c.cluster = static_cast<std::uint16_t>(got["cluster"]);
  return c;
}

LtAlgoConfig algo_config(const cublasLtMatmulAlgo_t& a) {
  LtAlgoConfig c;
  get_attr(a, CUBLASLT_ALGO_CONFIG_ID, c.id);
  get_attr(a, CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile);
  get_attr(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages);
  get_attr(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.splitk);
  get_attr(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction);
  get_attr(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, c.swizzle);
  get_attr(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, c.custom);
  get_attr(a, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, c.inner);
  get_attr(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, c.cluster);
  return c;
}

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
  dtype_ = dtype;
  trans_a_ = trans_a;
  trans_b_ = trans_b;
  IB_CHECK(cublasLtMatmulDescCreate(&op_, compute_type(dtype), CUDA_R_32F));
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
  algo_ = candidates(1).front();
}

std::string LtMatmul::problem_text() const {
  return std::string(acct::dtype_name(dtype_)) + " GEMM m=" + std::to_string(m_) + " n=" + std::to_string(n_) +
         " k=" + std::to_string(k_) + (trans_a_ ? " opA=T" : " opA=N") + (trans_b_ ? " opB=T" : " opB=N");
}

std::vector<cublasLtMatmulAlgo_t> LtMatmul::candidates(int max) const {
  cublasLtMatmulPreference_t pref = nullptr;
  IB_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(max));
  int returned = 0;
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                           &workspace_bytes_, sizeof(workspace_bytes_));
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(handle_, op_, la_, lb_, ld_, ld_, pref, max, results.data(), &returned);
  cublasLtMatmulPreferenceDestroy(pref);  // cannot fail for a created preference; `st` is what matters
  IB_CHECK(st);
  std::vector<cublasLtMatmulAlgo_t> out;
  for (int i = 0; i < returned; ++i)
    if (results[static_cast<std::size_t>(i)].state == CUBLAS_STATUS_SUCCESS) out.push_back(results[static_cast<std::size_t>(i)].algo);
  if (out.empty()) throw WorkloadError("cuBLASLt has no algorithm for a " + problem_text());
  return out;
}

void LtMatmul::use(const cublasLtMatmulAlgo_t& algo) {
  cublasLtMatmulHeuristicResult_t check{};
  const cublasStatus_t st = cublasLtMatmulAlgoCheck(handle_, op_, la_, lb_, ld_, ld_, &algo, &check);
  if (st != CUBLAS_STATUS_SUCCESS)
    throw WorkloadError("cuBLASLt rejects algorithm " + to_text(algo_config(algo)) + " for a " + problem_text() +
                        ": cublasLtMatmulAlgoCheck returned " + cublasLtGetStatusString(st));
  if (check.workspaceSize > workspace_bytes_)
    throw WorkloadError("cuBLASLt algorithm " + to_text(algo_config(algo)) + " needs " +
                        std::to_string(check.workspaceSize) + " B of workspace, more than the " +
                        std::to_string(workspace_bytes_) + " B given");
  algo_ = algo;
}

void LtMatmul::use(const LtAlgoConfig& c) {
  cublasLtMatmulAlgo_t a{};
  IB_CHECK(cublasLtMatmulAlgoInit(handle_, compute_type(dtype_), CUDA_R_32F, ab_type(dtype_), ab_type(dtype_),
                                  d_type(dtype_), d_type(dtype_), c.id, &a));
  set_attr(a, CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile);
  set_attr(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages);
  set_attr(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.splitk);
  set_attr(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction);
  set_attr(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, c.swizzle);
  set_attr(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, c.custom);
  set_attr(a, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, c.inner);
  set_attr(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, c.cluster);
  use(a);
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
