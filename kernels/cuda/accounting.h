// Work accounting of the CUDA workloads as pure functions: plain C++ with no CUDA, so the
// formulas are unit-tested on any machine (tests/gpu/accounting_test.cpp) and the workloads,
// the microbenchmark and the docs all use the same definitions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// Bus bytes of one allreduce of `bytes` per rank, as nccl-tests counts them: bytes x 2(n-1)/n, so
// (bus bytes / time) is busbw. 0 for one rank.
double allreduce_bus_bytes(double bytes, int nranks);

// Requests whose latency is <= slo_s (the numerator of goodput). NaN latencies never count.
std::size_t count_within(const std::vector<double>& latencies_s, double slo_s);

// Synthetic transformer layer (train-step): T = seq x batch tokens, hidden h, `heads` heads of
// d = h / heads, feed-forward width f. Linear layers QKV (h->3h), attention output (h->h), FFN up
// (h->f), FFN down (f->h); attention per (sequence, head): scores S = K^T Q (s x s x d) and context
// O = V P (d x s x s). Forward GEMM FLOP per layer:
//   linear    2T(4h^2 + 2hf)
//   attention 2 x 2 s^2 d x batch x heads = 4 batch s^2 h
// Backward = 2 x forward (for every forward GEMM one dgrad and one wgrad GEMM of the same size; for
// the attention products dV, dP and dQ, dK). Step = 3 x forward x layers. Only GEMM FLOP are counted
// (layernorm, softmax, GELU, residual adds and the optimizer are memory-bound and not counted).
struct TrainShape {
  std::int64_t hidden = 4096, heads = 32, seq = 2048, batch = 2, ffn = 16384, layers = 2;
  std::int64_t tokens() const { return seq * batch; }
  std::int64_t head_dim() const { return heads > 0 ? hidden / heads : 0; }
};
double transformer_linear_params(std::int64_t hidden, std::int64_t ffn);  // sum(in*out) = 4h^2 + 2hf
double train_linear_forward_flop(const TrainShape& s);     // per layer
double train_attention_forward_flop(const TrainShape& s);  // per layer
double train_step_flop(const TrainShape& s);               // 3 x (linear + attention) x layers
// Parameters of the model (weights only: no biases, layernorm without affine): layers x (4h^2 + 2hf).
double train_params(const TrainShape& s);
// Why the shape cannot be run (heads must divide hidden, head_dim and ffn multiples of 8 for
// 16-byte aligned bf16 tensor-core operands), or nullopt.
std::optional<std::string> train_shape_error(const TrainShape& s);
// Device memory of one replica: weights and gradients bf16, fp32 master weights and optimizer state
// (Adam: m and v; SGD with momentum: m), saved activations per layer, backward scratch, workspace.
double train_device_bytes(const TrainShape& s, bool adam, double workspace_bytes);

// Offsets (in elements) of blocks of the given sizes packed one after another in one buffer, each
// offset rounded up to a multiple of `align_elems`; one entry per block plus a last one, the end of
// the last block (the buffer's size in elements). train-step packs its weights and gradients so with
// 128 bf16 elements (256 bytes): cuBLASLt's algorithms assume 256-byte aligned pointers unless told
// otherwise, and a block of e.g. 1032 x 3096 bf16 would leave the next one only 128-byte aligned.
std::vector<std::size_t> packed_offsets(const std::vector<std::size_t>& sizes, std::size_t align_elems);

// An inference request through `layers` square (hidden x hidden) linear layers on `rows` rows.
double request_flop(std::int64_t rows, std::int64_t hidden, std::int64_t layers);

}  // namespace ib::acct
