// copy: device-to-device bandwidth, either with an SM kernel (16-byte vector loads/stores, four
// independent loads in flight per thread, a grid sized to fill every SM) or with the copy engine
// path (cudaMemcpyAsync device-to-device; which hardware the driver uses for it is its choice).
// Kernel variants (param `kernel`, for the microbenchmark to compare on the H200): 8 vectors in flight
// per thread (v8), streaming cache hints (__ldcs/__stcs: each byte is touched once, so it need not
// stay in L2), 512 threads per block (-b512). The default stays v4 (the kernel the earlier review
// read) until a measurement on the H200 shows another variant ahead of it by more than the spread
// between repeated runs.
// Work per sample: reps x 2 x bytes B (bytes read + bytes written); the one-direction figure
// (bytes copied) is half of that. Buffers default to 1 GiB, about 20x the H200's L2.
// Correctness (setup): src gets a pseudo-random pattern, dst is poisoned, one copy of the
// configured engine runs, and dst must equal the pattern word for word (checked on the device
// against the generator, plus the first 4 KiB on the host).
#include "kernels/cuda/accounting.h"
#include "kernels/cuda/device_info.h"
#include "kernels/cuda/device_util.cuh"
#include "kernels/cuda/workload_registration.h"

#include <string>
#include <vector>

namespace ib::cuda {
namespace {

template <bool Stream>
__device__ __forceinline__ uint4 load16(const uint4* p) {
  if constexpr (Stream) return __ldcs(p);  // ld.global.cs: streaming, likely read once
  return *p;
}
template <bool Stream>
__device__ __forceinline__ void store16(uint4* p, uint4 v) {
  if constexpr (Stream) {
    __stcs(p, v);  // st.global.cs
  } else {
    *p = v;
  }
}

// Grid-stride copy of n 16-byte vectors; Unroll independent loads are issued before any store.
template <int Unroll, int Block, bool Stream>
__global__ void __launch_bounds__(Block) copy16_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                       std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * Block;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * Block + threadIdx.x;
  for (; i + (Unroll - 1) * stride < n; i += Unroll * stride) {
    uint4 v[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) v[u] = load16<Stream>(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) store16<Stream>(dst + i + u * stride, v[u]);
  }
  for (; i < n; i += stride) store16<Stream>(dst + i, load16<Stream>(src + i));
}

using CopyFn = void (*)(const uint4*, uint4*, std::size_t);
struct CopyKernel {
  CopyFn fn;
  int block;
};

// The kernel variant named by the `kernel` param (kernels/cuda/cuda_specs.cpp lists the names).
CopyKernel copy_kernel(const std::string& name) {
  if (name == "v8") return {copy16_kernel<8, 256, false>, 256};
  if (name == "v4-stream") return {copy16_kernel<4, 256, true>, 256};
  if (name == "v8-stream") return {copy16_kernel<8, 256, true>, 256};
  if (name == "v4-b512") return {copy16_kernel<4, 512, false>, 512};
  if (name == "v8-b512") return {copy16_kernel<8, 512, false>, 512};
  if (name == "v4-stream-b512") return {copy16_kernel<4, 512, true>, 512};
  if (name == "v8-stream-b512") return {copy16_kernel<8, 512, true>, 512};
  return {copy16_kernel<4, 256, false>, 256};  // "v4", the default
}

struct CopyConfig {
  bool sm;
  CopyKernel kernel;
  std::size_t bytes;
  int reps;
  explicit CopyConfig(const Params& p)
      : sm(p_str(p, "engine") == "sm"),
        kernel(copy_kernel(p_str(p, "kernel"))),
        bytes(static_cast<std::size_t>(p_int(p, "mib")) << 20),
        reps(static_cast<int>(p_int(p, "reps"))) {}
};

class Copy final : public Workload {
 public:
  explicit Copy(const Params& p) : cfg_(p) {}

  void setup(const ExecContext& ctx) override {
    const DeviceInfo info = query_device(ctx.device);
    auto s = static_cast<cudaStream_t>(ctx.stream);
    src_ = DeviceBuffer(cfg_.bytes);
    dst_ = DeviceBuffer(cfg_.bytes);
    int per_sm = 0;
    const int block = cfg_.kernel.block;
    IB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cfg_.kernel.fn, block, 0));
    if (per_sm < 1) per_sm = 1;
    const std::size_t vecs = cfg_.bytes / sizeof(uint4);
    const std::size_t max_useful = (vecs + block - 1) / block;
    grid_ = static_cast<unsigned>(std::min<std::size_t>(static_cast<std::size_t>(info.sms) * per_sm, max_useful));
    if (grid_ < 1) grid_ = 1;

    const std::size_t words = cfg_.bytes / 4;
    const std::uint64_t seed = 0xC0FFEE;
    fill_words(src_.as<std::uint32_t>(), words, seed, s);
    IB_CHECK(cudaMemsetAsync(dst_.get(), 0xA5, cfg_.bytes, s));
    copy_once(s);
    const unsigned long long bad = count_words_not_matching(dst_.as<std::uint32_t>(), words, seed, s);
    if (bad) throw WorkloadError("copy: " + std::to_string(bad) + " of " + std::to_string(words) + " words differ after one copy");
    const std::size_t head = std::min<std::size_t>(words, 1024);
    std::vector<std::uint32_t> host(head);
    IB_CHECK(cudaMemcpyAsync(host.data(), dst_.get(), head * 4, cudaMemcpyDeviceToHost, s));
    IB_CHECK(cudaStreamSynchronize(s));
    for (std::size_t i = 0; i < head; ++i)
      if (host[i] != word_at(seed, i)) throw WorkloadError("copy: word " + std::to_string(i) + " differs from the host reference");
  }

  void run_sample(const ExecContext& ctx, SampleOutput&) override {
    auto s = static_cast<cudaStream_t>(ctx.stream);
    for (int r = 0; r < cfg_.reps; ++r) copy_once(s);
  }

  Work work_per_sample() const override {
    return {cfg_.reps * acct::copy_bytes_read_written(static_cast<double>(cfg_.bytes)), "B"};
  }

  void teardown() override {
    src_ = DeviceBuffer();
    dst_ = DeviceBuffer();
  }

 private:
  void copy_once(cudaStream_t s) {
    if (cfg_.sm) {
      cfg_.kernel.fn<<<grid_, cfg_.kernel.block, 0, s>>>(src_.as<const uint4>(), dst_.as<uint4>(),
                                                          cfg_.bytes / sizeof(uint4));
      IB_CHECK_LAUNCH();
    } else {
      IB_CHECK(cudaMemcpyAsync(dst_.get(), src_.get(), cfg_.bytes, cudaMemcpyDeviceToDevice, s));
    }
  }

  CopyConfig cfg_;
  DeviceBuffer src_, dst_;
  unsigned grid_ = 1;
};

std::unique_ptr<Workload> make_copy(const Params& p) { return std::make_unique<Copy>(p); }

Support copy_supported(const Params& p, const ExecContext& ctx) {
  const CopyConfig cfg(p);
  if (Support s = cuda_support(ctx.device); !s.supported) return s;
  return memory_support(query_device(ctx.device), 2.0 * static_cast<double>(cfg.bytes), "copy");
}

}  // namespace

IB_CUDA_WORKLOAD("copy", copy_supported, make_copy);

}  // namespace ib::cuda
