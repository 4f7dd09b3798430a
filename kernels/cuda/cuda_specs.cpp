// The CUDA workloads' names, descriptions and parameters: plain data, compiled into the binary, so
// that `list workloads` and scenario validation know them on a machine without the CUDA libraries.
// Checking and making one goes through a CudaFactory: the CUDA module's (loaded at run time by
// harness/exec/cuda_module.cpp) or, in a program linked with the workloads, their own.
#include "kernels/cuda/cuda_specs.h"

namespace ib::cuda {

namespace {

// The spec's supported() and create() ask the factory under the workload's name.
void bind(WorkloadSpec& spec, const CudaFactory& factory) {
  spec.supported = [f = factory.supported, name = spec.name](const Params& p, const ExecContext& ctx) {
    return f(name, p, ctx);
  };
  spec.create = [f = factory.create, name = spec.name](const Params& p) { return f(name, p); };
}

}  // namespace

void add_cuda_workload_specs(Registry& registry, const CudaFactory& factory) {
  using T = ParamSpec::Type;
  const auto add = [&](WorkloadSpec spec) {
    bind(spec, factory);
    registry.add(std::move(spec));
  };
  add({"gemm", Backend::cuda,
                "cuBLASLt GEMM D = A^T B (TN) or A B (NN), rotating among input sets larger than L2, the fastest of up "
                "to 8 heuristic algorithms (FLOP/s; 2mnk per GEMM)",
                {{"dtype", T::string, "bf16", {}, {}, {"bf16", "fp16", "tf32", "fp32", "fp8"},
                  "input type (fp8 = e4m3 inputs, bf16 output; needs compute capability 8.9)"},
                 {"layout", T::string, "tn", {}, {}, {"tn", "nn"},
                  "tn: A stored k x m (cuBLASLt's fp8 layout, the default for every dtype); nn: A stored m x k "
                  "(PyTorch's row-major matmul)"},
                 {"algo", T::string, "auto", {}, {}, {},
                  "auto: time up to 8 cuBLASLt heuristic candidates in setup and keep the fastest; or an algorithm "
                  "as recorded in worker.resolved (id=..,tile=..,stages=..,splitk=..,reduction=..,swizzle=..,"
                  "custom=..,inner=..,cluster=..), used as given"},
                 {"m", T::integer, 8192, 16, 65536, {}, "rows of D"},
                 {"n", T::integer, 8192, 16, 65536, {}, "columns of D"},
                 {"k", T::integer, 8192, 16, 65536, {}, "inner dimension"},
                 {"reps", T::integer, 1, 1, 10000, {}, "GEMMs per sample (raise for small sizes: 1-50 ms per sample)"},
                 {"input_sets", T::integer, 0, 0, 4096, {},
                  "input sets to rotate through (0: enough for 4x L2, at least 2)"}},
                {}, {}});
  add({"copy", Backend::cuda,
                "device-to-device copy, SM kernel (16-byte vectors) or copy engine (B/s counted read+written)",
                {{"engine", T::string, "sm", {}, {}, {"sm", "ce"}, "sm: copy kernel; ce: cudaMemcpyAsync"},
                 {"kernel", T::string, "v4", {}, {},
                  {"v4", "v8", "v4-stream", "v8-stream", "v4-b512", "v8-b512", "v4-stream-b512", "v8-stream-b512"},
                  "engine sm: 16-byte vectors in flight per thread (v4, v8), streaming cache hints on loads and "
                  "stores (-stream), 512 threads per block instead of 256 (-b512)"},
                 {"mib", T::integer, 1024, 1, 65536, {}, "buffer size in MiB (source and destination each)"},
                 {"reps", T::integer, 8, 1, 10000, {}, "copies per sample"}},
                {}, {}});
  add({"h2d", Backend::cuda,
                "host<->device copies over PCIe/C2C, pinned or pageable host memory (B/s, one direction)",
                {{"direction", T::string, "h2d", {}, {}, {"h2d", "d2h"}, "h2d: host to device; d2h: device to host"},
                 {"memory", T::string, "pinned", {}, {}, {"pinned", "pageable"}, "host buffer kind"},
                 {"mib", T::integer, 256, 1, 65536, {}, "transfer size in MiB"},
                 {"reps", T::integer, 1, 1, 10000, {}, "transfers per sample"}},
                {}, {}});
  add({"latency", Backend::cuda,
                "latency-sensitive inference loop: small bf16 GEMM-chain requests, open-loop Poisson or closed-loop; "
                "per-request latency incl. queueing (requests/s, P50/P95/P99)",
                {{"mode", T::string, "open", {}, {}, {"open", "closed"}, "open: Poisson arrivals; closed: fixed concurrency"},
                 {"load", T::number, 0.5, 0.01, 2.0, {},
                  "open loop: arrival rate as a fraction of the capacity measured at setup (used when rate is 0)"},
                 {"rate", T::number, 0.0, 0.0, 1e7, {},
                  "open loop: arrival rate in requests/s (0: use load; set it to compare phases at the same rate)"},
                 {"concurrency", T::integer, 1, 1, 1024, {}, "closed loop: requests outstanding"},
                 {"requests", T::integer, 500, 10, 100000, {},
                  "open loop: expected requests per sample, a sample being a slice of requests / rate seconds of one "
                  "continuous arrival schedule (the count in a slice is Poisson); closed loop: requests per sample"},
                 {"hidden", T::integer, 4096, 64, 16384, {}, "model width (weights hidden x hidden per layer)"},
                 {"batch", T::integer, 16, 1, 4096, {}, "rows (tokens) per request"},
                 {"layers", T::integer, 4, 1, 64, {}, "linear layers per request"},
                 {"seed", T::integer, 1, 0, 1e9, {}, "arrival-process seed"}},
                {}, {}});
  add({"serve", Backend::cuda,
                "inference serving mix: requests of random sizes, open-loop Poisson, dynamic batching into CUDA "
                "graphs; latency percentiles and goodput (requests within slo_ms per second)",
                {{"load", T::number, 0.7, 0.01, 2.0, {},
                  "arrival rate as a fraction of full-batch capacity measured at setup (used when rate is 0)"},
                 {"rate", T::number, 0.0, 0.0, 1e7, {}, "arrival rate in requests/s (0: use load)"},
                 {"slo_ms", T::number, 10.0, 0.01, 1e5, {}, "latency objective for goodput"},
                 {"requests", T::integer, 1000, 10, 100000, {},
                  "expected requests per sample: a sample is a slice of requests / rate seconds of one continuous "
                  "arrival schedule (the count in a slice is Poisson)"},
                 {"max_batch", T::integer, 64, 1, 4096, {}, "rows per batch (largest CUDA graph)"},
                 {"max_request_rows", T::integer, 8, 1, 4096, {}, "request sizes are uniform in 1..max_request_rows rows"},
                 {"inflight", T::integer, 2, 1, 16, {}, "batches on the GPU at once"},
                 {"hidden", T::integer, 4096, 64, 16384, {}, "model width"},
                 {"layers", T::integer, 4, 1, 64, {}, "linear layers"},
                 {"seed", T::integer, 1, 0, 1e9, {}, "arrival and size seed"}},
                {}, {}});
  add({"train-step", Backend::cuda,
                "synthetic transformer-layer training step: bf16 forward/backward GEMMs (cuBLASLt, attention as "
                "batched GEMMs), layernorm/softmax/GELU kernels, Adam or SGD on fp32 master weights, NCCL gradient "
                "allreduce when gpus > 1 (FLOP/s; steps/s via counter `steps`)",
                {{"dtype", T::string, "bf16", {}, {}, {"bf16"}, "weights, activations and gradients (fp32 master weights)"},
                 {"hidden", T::integer, 4096, 64, 16384, {}, "model width h"},
                 {"heads", T::integer, 32, 1, 256, {}, "attention heads (must divide hidden; hidden/heads a multiple of 8)"},
                 {"seq", T::integer, 2048, 16, 32768, {}, "sequence length (multiple of 8)"},
                 {"batch", T::integer, 2, 1, 1024, {}, "sequences per step (tokens = seq x batch)"},
                 {"ffn", T::integer, 0, 0, 65536, {}, "feed-forward width (0: 4 x hidden; a multiple of 8)"},
                 {"layers", T::integer, 2, 1, 64, {}, "transformer layers"},
                 {"steps", T::integer, 1, 1, 1000, {}, "training steps per sample"},
                 {"optimizer", T::string, "adam", {}, {}, {"adam", "sgd"}, "adam, or sgd with momentum 0.9"},
                 {"gpus", T::integer, 1, 1, 64, {}, "data-parallel ranks: devices device..device+gpus-1 (NCCL allreduce of gradients when > 1)"}},
                {}, {}});
  WorkloadSpec allreduce{"allreduce", Backend::cuda,
                "NCCL float32 sum-allreduce over the tenant's GPUs, one rank per GPU: in one process, or one process per "
                "rank with `ranks` (gpus = 1 each; NCCL >= 2.14) (algbw B/s; "
                "busbw = algbw x 2(n-1)/n); on one GPU a local copy, no communication (counter local_copy_bytes). "
                "NCCL is loaded at run time: without libnccl.so.2 it is waived",
                {{"gpus", T::integer, 1, 1, 64, {}, "ranks: devices device..device+gpus-1, one rank each"},
                 {"mib", T::integer, 256, 1, 65536, {}, "message size per rank in MiB"},
                 {"iters", T::integer, 16, 1, 10000, {},
                  "allreduces per sample (16 puts a 256 MiB sample in the 1-50 ms guideline on H200s: an estimated "
                  "~2.5 ms on one GPU, where the allreduce is a local copy, up to ~20 ms over 8 NVLink GPUs)"},
                 {"timeout_s", T::number, 60.0, 0.1, 3600, {}, "abort the communicators when a collective takes longer"}},
                {}, {}};
  // A tenant of it may have `ranks`: one process per rank, each on its own GPU (gpus = 1; allreduce.cu).
  allreduce.collective = true;
  add(std::move(allreduce));
}

}  // namespace ib::cuda
