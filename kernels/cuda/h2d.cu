// h2d: host<->device copies over PCIe/C2C (the channel MIG does not partition), cudaMemcpyAsync
// on the harness stream, from pinned (cudaHostAlloc) or pageable (ordinary, pre-touched) memory.
// Work per sample: reps x bytes B, one direction (each byte crosses the link once).
// Correctness (setup): h2d copies a host pattern and checks it on the device against the
// generator; d2h copies a device pattern and checks every word on the host.
// Waived when the host buffer exceeds half of the host memory available: pinned memory cannot be
// swapped out (mib goes up to 64 GiB), and a pageable buffer that large would be paged during the
// measurement or get the process killed.
#include "kernels/cuda/accounting.h"
#include "kernels/cuda/device_info.h"
#include "kernels/cuda/device_util.cuh"
#include "kernels/cuda/workload_registration.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>

namespace ib::cuda {
namespace {

struct H2dConfig {
  bool to_device;
  bool pinned;
  std::size_t bytes;
  int reps;
  explicit H2dConfig(const Params& p)
      : to_device(p_str(p, "direction") == "h2d"),
        pinned(p_str(p, "memory") == "pinned"),
        bytes(static_cast<std::size_t>(p_int(p, "mib")) << 20),
        reps(static_cast<int>(p_int(p, "reps"))) {}
};

class H2d final : public Workload {
 public:
  explicit H2d(const Params& p) : cfg_(p) {}
  ~H2d() override { release_host(); }

  void setup(const ExecContext& ctx) override {
    query_device(ctx.device);  // makes the device current
    auto s = static_cast<cudaStream_t>(ctx.stream);
    dev_ = DeviceBuffer(cfg_.bytes);
    if (cfg_.pinned) {
      IB_CHECK(cudaHostAlloc(&host_, cfg_.bytes, cudaHostAllocDefault));
    } else {
      host_ = std::aligned_alloc(4096, cfg_.bytes);  // bytes is a multiple of 1 MiB
      if (!host_) throw WorkloadError("h2d: cannot allocate " + mib_text(static_cast<double>(cfg_.bytes)) + " of host memory");
    }
    const std::size_t words = cfg_.bytes / 4;
    auto* hw = static_cast<std::uint32_t*>(host_);
    const std::uint64_t seed = 0xB0B;
    if (cfg_.to_device) {
      for (std::size_t i = 0; i < words; ++i) hw[i] = word_at(seed, i);  // also touches every page
      IB_CHECK(cudaMemsetAsync(dev_.get(), 0xA5, cfg_.bytes, s));
      copy_once(s);
      const unsigned long long bad = count_words_not_matching(dev_.as<std::uint32_t>(), words, seed, s);
      if (bad) throw WorkloadError("h2d: " + std::to_string(bad) + " words differ after a host-to-device copy");
    } else {
      std::memset(host_, 0xA5, cfg_.bytes);  // poison, and touch every page
      fill_words(dev_.as<std::uint32_t>(), words, seed, s);
      copy_once(s);
      IB_CHECK(cudaStreamSynchronize(s));
      for (std::size_t i = 0; i < words; ++i)
        if (hw[i] != word_at(seed, i))
          throw WorkloadError("h2d: word " + std::to_string(i) + " differs after a device-to-host copy");
    }
    IB_CHECK(cudaStreamSynchronize(s));
  }

  void run_sample(const ExecContext& ctx, SampleOutput&) override {
    auto s = static_cast<cudaStream_t>(ctx.stream);
    for (int r = 0; r < cfg_.reps; ++r) copy_once(s);
  }

  Work work_per_sample() const override { return {static_cast<double>(cfg_.reps) * cfg_.bytes, "B"}; }

  void teardown() override {
    dev_ = DeviceBuffer();
    release_host();
  }

 private:
  void copy_once(cudaStream_t s) {
    if (cfg_.to_device)
      IB_CHECK(cudaMemcpyAsync(dev_.get(), host_, cfg_.bytes, cudaMemcpyHostToDevice, s));
    else
      IB_CHECK(cudaMemcpyAsync(host_, dev_.get(), cfg_.bytes, cudaMemcpyDeviceToHost, s));
  }

  void release_host() {
    if (!host_) return;
    if (cfg_.pinned)
      cudaFreeHost(host_);
    else
      std::free(host_);
    host_ = nullptr;
  }

  H2dConfig cfg_;
  DeviceBuffer dev_;
  void* host_ = nullptr;
};

// Host memory available without swapping: MemAvailable (free memory plus reclaimable page cache)
// from /proc/meminfo; without it, free pages only (sysconf), which ignores the page cache and so
// errs towards waiving. Infinity when neither can be read (nothing to check against).
double host_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, rest;
  double kib = 0.0;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, rest);  // " kB"
    if (key == "MemAvailable:") return kib * 1024.0;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<double>(pages) * static_cast<double>(page);
  return std::numeric_limits<double>::infinity();
}

std::unique_ptr<Workload> make_h2d(const Params& p) { return std::make_unique<H2d>(p); }

Support h2d_supported(const Params& p, const ExecContext& ctx) {
  const H2dConfig cfg(p);
  const double bytes = static_cast<double>(cfg.bytes), available = host_available_bytes();
  if (bytes > 0.5 * available) {
    return {false, "not enough host memory: h2d needs " + mib_text(bytes) + " of " +
                       (cfg.pinned ? "pinned" : "pageable") + " host memory, more than half of the " +
                       mib_text(available) + " available (" +
                       (cfg.pinned ? "pinned memory cannot be swapped out" : "it would be paged during the measurement") +
                       ")"};
  }
  if (Support s = cuda_support(ctx.device); !s.supported) return s;
  return memory_support(query_device(ctx.device), bytes, "h2d");
}

}  // namespace

IB_CUDA_WORKLOAD("h2d", h2d_supported, make_h2d);

}  // namespace ib::cuda
