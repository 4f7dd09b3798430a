#include "kernels/cuda/accounting.h"

#include <algorithm>
#include <cmath>

namespace ib::acct {

std::optional<DType> parse_dtype(const std::string& s) {
  if (s == "bf16") return DType::bf16;
  if (s == "fp16") return DType::fp16;
  if (s == "tf32") return DType::tf32;
  if (s == "fp32") return DType::fp32;
  if (s == "fp8") return DType::fp8;
  return std::nullopt;
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::tf32: return "tf32";
    case DType::fp32: return "fp32";
    case DType::fp8: return "fp8";
  }
  return "?";
}

std::size_t input_bytes(DType d) {
  switch (d) {
    case DType::bf16:
    case DType::fp16: return 2;
    case DType::tf32:
    case DType::fp32: return 4;
    case DType::fp8: return 1;
  }
  return 0;
}

std::size_t output_bytes(DType d) { return d == DType::fp8 ? 2 : input_bytes(d); }

int min_compute_capability(DType d) {
  switch (d) {
    case DType::fp8: return 89;
    case DType::bf16:
    case DType::tf32: return 80;
    case DType::fp16:
    case DType::fp32: return 0;
  }
  return 0;
}

double gemm_flop(std::int64_t m, std::int64_t n, std::int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

double gemm_set_bytes(DType d, std::int64_t m, std::int64_t n, std::int64_t k) {
  return static_cast<double>(input_bytes(d)) * (static_cast<double>(m) * k + static_cast<double>(k) * n);
}

int gemm_input_sets(double set_bytes, double l2_bytes, int requested, double l2_multiple) {
  if (requested > 0) return requested;
  if (!(set_bytes > 0)) return 2;
  const double sets = std::ceil(l2_multiple * l2_bytes / set_bytes);
  return static_cast<int>(std::max(2.0, sets));
}

double copy_bytes_read_written(double bytes) { return 2.0 * bytes; }
double copy_bytes_one_direction(double bytes) { return bytes; }

double allreduce_busbw_factor(int nranks) {
  if (nranks <= 0) return 0.0;
  return 2.0 * (nranks - 1) / static_cast<double>(nranks);
}

double allreduce_bus_bytes(double bytes, int nranks) { return bytes * allreduce_busbw_factor(nranks); }

std::size_t count_within(const std::vector<double>& latencies_s, double slo_s) {
  std::size_t n = 0;
  for (double l : latencies_s)
    if (l <= slo_s) ++n;  // false for NaN
  return n;
}

double transformer_linear_params(std::int64_t hidden, std::int64_t ffn) {
  const double h = static_cast<double>(hidden), f = static_cast<double>(ffn);
  return 3.0 * h * h + h * h + h * f + f * h;
}

double train_linear_forward_flop(const TrainShape& s) {
  return 2.0 * static_cast<double>(s.tokens()) * transformer_linear_params(s.hidden, s.ffn);
}

double train_attention_forward_flop(const TrainShape& s) {
  const double per_head = 2.0 * 2.0 * static_cast<double>(s.seq) * static_cast<double>(s.seq) *
                          static_cast<double>(s.head_dim());  // S = K^T Q and O = V P
  return per_head * static_cast<double>(s.batch) * static_cast<double>(s.heads);
}

double train_step_flop(const TrainShape& s) {
  return 3.0 * (train_linear_forward_flop(s) + train_attention_forward_flop(s)) * static_cast<double>(s.layers);
}

double train_params(const TrainShape& s) {
  return static_cast<double>(s.layers) * transformer_linear_params(s.hidden, s.ffn);
}

std::optional<std::string> train_shape_error(const TrainShape& s) {
  if (s.heads <= 0 || s.hidden % s.heads != 0)
    return "heads (" + std::to_string(s.heads) + ") must divide hidden (" + std::to_string(s.hidden) + ")";
  if (s.head_dim() % 8 != 0)
    return "head dimension hidden/heads = " + std::to_string(s.head_dim()) +
           " must be a multiple of 8 (16-byte aligned bf16 operands)";
  if (s.ffn % 8 != 0) return "ffn (" + std::to_string(s.ffn) + ") must be a multiple of 8";
  if (s.seq % 8 != 0) return "seq (" + std::to_string(s.seq) + ") must be a multiple of 8";
  return std::nullopt;
}

double train_device_bytes(const TrainShape& s, bool adam, double workspace_bytes) {
  const double p = train_params(s);
  const double h = static_cast<double>(s.hidden), f = static_cast<double>(s.ffn), t = static_cast<double>(s.tokens());
  const double probs = static_cast<double>(s.batch) * s.heads * static_cast<double>(s.seq) * s.seq;
  // Saved per layer (bf16): x, ln1, ctx, x_mid, ln2 (h each), qkv (3h), up, act (f each), probabilities.
  const double act_per_layer = 2.0 * (t * (8 * h + 2 * f) + probs);
  // Scratch (bf16): output x, loss gradient, GEMM output before a residual add, dx x2, dx_mid, dln,
  // dctx (h each), dqkv (3h), dact (f), dprobabilities.
  const double scratch = 2.0 * (t * (8 * h + 3 * h + f) + probs);
  const double state = p * (2.0 /*w*/ + 2.0 /*grad*/ + 4.0 /*master*/ + 4.0 /*m*/ + (adam ? 4.0 : 0.0));
  return state + act_per_layer * static_cast<double>(s.layers) + scratch + workspace_bytes;
}

std::vector<std::size_t> packed_offsets(const std::vector<std::size_t>& sizes, std::size_t align_elems) {
  const std::size_t a = align_elems > 0 ? align_elems : 1;
  std::vector<std::size_t> off;
  off.reserve(sizes.size() + 1);
  std::size_t end = 0;
  for (std::size_t n : sizes) {
    const std::size_t start = (end + a - 1) / a * a;
    off.push_back(start);
    end = start + n;
  }
  off.push_back(end);
  return off;
}

double request_flop(std::int64_t rows, std::int64_t hidden, std::int64_t layers) {
  return static_cast<double>(layers) * gemm_flop(hidden, rows, hidden);
}

}  // namespace ib::acct
