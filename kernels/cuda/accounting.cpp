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

double transformer_linear_params(std::int64_t hidden, std::int64_t ffn) {
  const double h = static_cast<double>(hidden), f = static_cast<double>(ffn);
  return 3.0 * h * h + h * h + h * f + f * h;
}

double train_step_flop(std::int64_t tokens, std::int64_t hidden, std::int64_t ffn) {
  return 3.0 * 2.0 * static_cast<double>(tokens) * transformer_linear_params(hidden, ffn);
}

double request_flop(std::int64_t rows, std::int64_t hidden, std::int64_t layers) {
  return static_cast<double>(layers) * gemm_flop(hidden, rows, hidden);
}

}  // namespace ib::acct
