// Work accounting of the CUDA workloads as pure functions: plain C++ with no CUDA, so the
// formulas are unit-tested on any machine (tests/gpu/accounting_test.cpp) and the workloads,
// the microbenchmark and the docs all use the same definitions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ib::acct {

// GEMM data types. Inputs A and B have this type; the output D is bf16 for fp8 (cuBLASLt's
// fp8 GEMM writes a 16-bit result), otherwise the input type. tf32 stores fp32 and multiplies
// with the tensor cores' tf32 mode.
enum class DType { bf16, fp16, tf32, fp32, fp8 };
std::optional<DType> parse_dtype(const std::string& s);
const char* dtype_name(DType d);
std::size_t input_bytes(DType d);   // bytes per element of A and B
std::size_t output_bytes(DType d);  // bytes per element of D
// Minimum compute capability (major*10+minor) for the dtype on tensor cores: fp8 89, bf16/tf32 80.
int min_compute_capability(DType d);

// D(m x n) = A(m x k) B(k x n): one multiply and one add per term, 2mnk FLOP.
double gemm_flop(std::int64_t m, std::int64_t n, std::int64_t k);
// Bytes of one input set (A and B).
double gemm_set_bytes(DType d, std::int64_t m, std::int64_t n, std::int64_t k);
// Number of input sets the gemm workload rotates through: `requested` when > 0, otherwise the
// fewest sets whose total input bytes reach `l2_multiple` x L2, and never fewer than 2 (so that no
// GEMM reads the inputs the previous one just left in L2).
int gemm_input_sets(double set_bytes, double l2_bytes, int requested, double l2_multiple = 4.0);

// Device copy of `bytes`: counted as bytes read + bytes written (2 x bytes). The one-direction
// figure (bytes copied) is exactly half of it.
double copy_bytes_read_written(double bytes);
double copy_bytes_one_direction(double bytes);

// Allreduce, as nccl-tests defines it: algbw = bytes / time (bytes = message size per rank);
// busbw = algbw x 2(n-1)/n. For n = 1 the factor is 0: bus bandwidth means nothing on one rank.
double allreduce_busbw_factor(int nranks);

// Synthetic transformer layer, T tokens, hidden h, feed-forward width f: linear layers
// QKV (h->3h), attention output (h->h), FFN up (h->f), FFN down (f->h). Forward = 2T x sum(in*out);
// backward = 2x forward (dX and dW GEMMs). Attention score/value products are not included.
double transformer_linear_params(std::int64_t hidden, std::int64_t ffn);  // sum(in*out) = 4h^2 + 2hf
double train_step_flop(std::int64_t tokens, std::int64_t hidden, std::int64_t ffn);

// An inference request through `layers` square (hidden x hidden) linear layers on `rows` rows.
double request_flop(std::int64_t rows, std::int64_t hidden, std::int64_t layers);

}  // namespace ib::acct
