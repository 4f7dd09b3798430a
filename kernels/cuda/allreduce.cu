// allreduce: NCCL sum-allreduce of float32 buffers, out of place, over `gpus` GPUs (devices
// ctx.device .. ctx.device+gpus-1) driven by this one process: one communicator per GPU from
// ncclCommInitAll, one rank per GPU, the ranks' calls issued together in an NCCL group. Rank 0
// runs on the harness stream; the other ranks on their own streams, forked from and joined back
// to the harness stream with events, so the executor's events bracket the whole collective.
// Work per sample: iters x bytes (message size per rank), so throughput = algbw as nccl-tests
// defines it; busbw = algbw x 2(n-1)/n (acct::allreduce_busbw_factor): each sample reports
// counters["bus_bytes"] = iters x bytes x 2(n-1)/n, whose rate is busbw. With one GPU the
// communicator has one rank (a local copy) and bus bandwidth is not meaningful (factor 0).
// Correctness (setup): rank r's input is x_r[i] = ((7i + 13r) mod 17) - 8, small integers whose
// sum is exact in float32; after one allreduce into a NaN-poisoned output, every element on every
// rank must equal sum_r x_r[i] exactly. The inputs never change, so every later allreduce
// computes the same verified result.
// Timeout: every collective is watched; if one has not finished `timeout_s` after it was enqueued,
// every communicator is aborted (ncclCommAbort) and the workload fails with that reason.
#include "kernels/cuda/accounting.h"
#include "kernels/cuda/device_info.h"
#include "kernels/cuda/device_util.cuh"
#include "kernels/cuda/workloads_internal.h"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ib::cuda {
namespace {

__host__ __device__ inline float rank_value(std::size_t i, int r) {
  return static_cast<float>(static_cast<int>((7 * (i % 17) + 13 * static_cast<std::size_t>(r)) % 17) - 8);
}

__global__ void fill_rank_kernel(float* p, std::size_t n, int r) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = rank_value(i, r);
}

__global__ void check_sum_kernel(const float* p, std::size_t n, int nranks, unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float expect = 0.0f;
    for (int r = 0; r < nranks; ++r) expect += rank_value(i, r);
    if (p[i] != expect) ++local;
  }
  if (local) atomicAdd(bad, local);
}

struct AllreduceConfig {
  int gpus;
  std::size_t bytes;
  int iters;
  double timeout_s;
  explicit AllreduceConfig(const Params& p)
      : gpus(static_cast<int>(p_int(p, "gpus"))),
        bytes(static_cast<std::size_t>(p_int(p, "mib")) << 20),
        iters(static_cast<int>(p_int(p, "iters"))),
        timeout_s(p_num(p, "timeout_s")) {}
};

struct Rank {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;  // rank 0: the harness stream (not owned)
  cudaEvent_t join = nullptr;     // ranks > 0
  DeviceBuffer send, recv;
};

class Allreduce final : public Workload {
 public:
  explicit Allreduce(const Params& p) : cfg_(p) {}
  ~Allreduce() override { release(); }

  void setup(const ExecContext& ctx) override {
    auto s0 = static_cast<cudaStream_t>(ctx.stream);
    const std::size_t count = cfg_.bytes / sizeof(float);
    ranks_.resize(static_cast<std::size_t>(cfg_.gpus));
    std::vector<int> devs;
    for (int r = 0; r < cfg_.gpus; ++r) devs.push_back(ctx.device + r);
    std::vector<ncclComm_t> comms(devs.size());
    IB_CHECK(ncclCommInitAll(comms.data(), cfg_.gpus, devs.data()));
    for (int r = 0; r < cfg_.gpus; ++r) {
      Rank& k = ranks_[r];
      k.device = devs[r];
      k.comm = comms[r];
      IB_CHECK(cudaSetDevice(k.device));
      if (r == 0) {
        k.stream = s0;
      } else {
        IB_CHECK(cudaStreamCreateWithFlags(&k.stream, cudaStreamNonBlocking));
        IB_CHECK(cudaEventCreateWithFlags(&k.join, cudaEventDisableTiming));
      }
      k.send = DeviceBuffer(cfg_.bytes);
      k.recv = DeviceBuffer(cfg_.bytes);
      fill_rank_kernel<<<grid_for(count), 256, 0, k.stream>>>(k.send.as<float>(), count, r);
      IB_CHECK_LAUNCH();
      IB_CHECK(cudaMemsetAsync(k.recv.get(), 0xFF, cfg_.bytes, k.stream));  // NaN poison
      IB_CHECK(cudaStreamSynchronize(k.stream));
    }
    IB_CHECK(cudaSetDevice(ctx.device));
    IB_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    for (auto& e : done_) IB_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));

    // One verified allreduce, waited for under the timeout.
    enqueue(s0, 1);
    IB_CHECK(cudaEventRecord(done_[0], s0));
    wait_or_abort(done_[0]);
    for (int r = 0; r < cfg_.gpus; ++r) {
      Rank& k = ranks_[r];
      IB_CHECK(cudaSetDevice(k.device));
      DeviceBuffer bad(sizeof(unsigned long long));
      IB_CHECK(cudaMemsetAsync(bad.get(), 0, sizeof(unsigned long long), k.stream));
      check_sum_kernel<<<grid_for(count), 256, 0, k.stream>>>(k.recv.as<float>(), count, cfg_.gpus,
                                                              bad.as<unsigned long long>());
      IB_CHECK_LAUNCH();
      unsigned long long host = 0;
      IB_CHECK(cudaMemcpyAsync(&host, bad.get(), sizeof(host), cudaMemcpyDeviceToHost, k.stream));
      IB_CHECK(cudaStreamSynchronize(k.stream));
      if (host)
        throw WorkloadError("allreduce: rank " + std::to_string(r) + ": " + std::to_string(host) + " of " +
                            std::to_string(count) + " elements differ from the exact sum");
    }
    IB_CHECK(cudaSetDevice(ctx.device));
    watchdog_ = std::thread([this] { watch(); });
  }

  void run_sample(const ExecContext& ctx, SampleOutput& out) override {
    if (aborted_.load()) throw WorkloadError(abort_reason());
    auto s0 = static_cast<cudaStream_t>(ctx.stream);
    enqueue(s0, cfg_.iters);
    std::lock_guard<std::mutex> lock(mu_);
    // Forget finished collectives before reusing their event (the ring is much longer than the
    // executor's two samples in flight).
    while (!pending_.empty() && cudaEventQuery(done_[pending_.front().slot]) == cudaSuccess) pending_.pop_front();
    const std::size_t slot = next_done_++ % done_.size();
    IB_CHECK(cudaEventRecord(done_[slot], s0));
    pending_.push_back({slot, std::chrono::steady_clock::now() + timeout()});
    cv_.notify_all();
    // Bus bytes as nccl-tests count them, so the harness's rate of this counter is busbw (0 on one rank).
    out.counters["bus_bytes"] = cfg_.iters * acct::allreduce_bus_bytes(static_cast<double>(cfg_.bytes), cfg_.gpus);
  }

  Work work_per_sample() const override { return {static_cast<double>(cfg_.iters) * cfg_.bytes, "B"}; }

  void teardown() override { release(); }

 private:
  struct Pending {
    std::size_t slot;
    std::chrono::steady_clock::time_point deadline;
  };

  std::chrono::steady_clock::duration timeout() const {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(cfg_.timeout_s));
  }
  std::string abort_reason() const {
    return "allreduce: a collective did not finish within timeout_s = " + std::to_string(cfg_.timeout_s) +
           " s; all " + std::to_string(cfg_.gpus) + " NCCL communicator(s) were aborted (ncclCommAbort)";
  }

  // Enqueues `iters` allreduces: fork the other ranks' streams from s0, one NCCL group per
  // allreduce, join them back into s0.
  void enqueue(cudaStream_t s0, int iters) {
    const std::size_t count = cfg_.bytes / sizeof(float);
    IB_CHECK(cudaEventRecord(fork_, s0));
    for (std::size_t r = 1; r < ranks_.size(); ++r) IB_CHECK(cudaStreamWaitEvent(ranks_[r].stream, fork_, 0));
    for (int it = 0; it < iters; ++it) {
      IB_CHECK(ncclGroupStart());
      for (auto& k : ranks_)
        IB_CHECK(ncclAllReduce(k.send.get(), k.recv.get(), count, ncclFloat, ncclSum, k.comm, k.stream));
      IB_CHECK(ncclGroupEnd());
    }
    for (std::size_t r = 1; r < ranks_.size(); ++r) {
      IB_CHECK(cudaEventRecord(ranks_[r].join, ranks_[r].stream));
      IB_CHECK(cudaStreamWaitEvent(s0, ranks_[r].join, 0));
    }
  }

  void abort_all() {
    bool expected = false;
    if (!aborted_.compare_exchange_strong(expected, true)) return;
    for (auto& k : ranks_)
      if (k.comm) {
        ncclCommAbort(k.comm);  // unblocks kernels waiting on peers; frees the communicator
        k.comm = nullptr;
      }
  }

  // Polls `e` until it completes; aborts and throws after timeout_s.
  void wait_or_abort(cudaEvent_t e) {
    const auto deadline = std::chrono::steady_clock::now() + timeout();
    for (;;) {
      const cudaError_t q = cudaEventQuery(e);
      if (q == cudaSuccess) return;
      if (q != cudaErrorNotReady) IB_CHECK(q);
      if (std::chrono::steady_clock::now() > deadline) {
        abort_all();
        throw WorkloadError(abort_reason());
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  // Watchdog thread: aborts every communicator when the oldest pending collective is overdue.
  void watch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(10));
      while (!pending_.empty()) {
        const cudaError_t q = cudaEventQuery(done_[pending_.front().slot]);
        if (q == cudaErrorNotReady) break;
        pending_.pop_front();  // finished (or failed: the executor reports the CUDA error)
      }
      if (!pending_.empty() && std::chrono::steady_clock::now() > pending_.front().deadline) {
        abort_all();
        pending_.clear();
      }
    }
  }

  void release() {
    if (watchdog_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
      }
      cv_.notify_all();
      watchdog_.join();
    }
    for (auto& k : ranks_) {
      if (k.stream && !aborted_.load()) cudaStreamSynchronize(k.stream);
      if (k.comm) ncclCommDestroy(k.comm);
      k.comm = nullptr;
    }
    for (std::size_t r = 1; r < ranks_.size(); ++r) {
      cudaSetDevice(ranks_[r].device);
      if (ranks_[r].join) cudaEventDestroy(ranks_[r].join);
      if (ranks_[r].stream) cudaStreamDestroy(ranks_[r].stream);
    }
    ranks_.clear();  // frees the buffers
    if (fork_) cudaEventDestroy(fork_);
    fork_ = nullptr;
    for (auto& e : done_) {
      if (e) cudaEventDestroy(e);
      e = nullptr;
    }
  }

  AllreduceConfig cfg_;
  std::vector<Rank> ranks_;
  cudaEvent_t fork_ = nullptr;
  std::array<cudaEvent_t, 16> done_{};
  std::size_t next_done_ = 1;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> pending_;
  bool stop_ = false;
  std::atomic<bool> aborted_{false};
  std::thread watchdog_;
};

}  // namespace

std::unique_ptr<Workload> make_allreduce(const Params& p) { return std::make_unique<Allreduce>(p); }

Support allreduce_supported(const Params& p, const ExecContext& ctx) {
  const AllreduceConfig cfg(p);
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (cfg.gpus > 1 && visible && std::strstr(visible, "MIG-")) {
    return {false, "NCCL cannot form a communicator across MIG instances (no P2P/NVLink between them; "
                   "DESIGN.md section 7): run allreduce with gpus = 1 inside a MIG instance"};
  }
  if (Support s = cuda_support(ctx.device); !s.supported) return s;
  int count = 0;
  IB_CHECK(cudaGetDeviceCount(&count));
  if (ctx.device + cfg.gpus > count) {
    return {false, "too few GPUs: allreduce over " + std::to_string(cfg.gpus) + " GPUs starting at device " +
                       std::to_string(ctx.device) + " needs devices up to " + std::to_string(ctx.device + cfg.gpus - 1) +
                       ", but " + std::to_string(count) + " are visible"};
  }
  std::vector<DeviceInfo> infos;
  for (int r = 0; r < cfg.gpus; ++r) {
    infos.push_back(query_device(ctx.device + r));
    for (int q = 0; q < r; ++q)
      if (std::memcmp(infos[q].uuid, infos[r].uuid, sizeof(infos[r].uuid)) == 0)
        return {false, "devices " + std::to_string(ctx.device + q) + " and " + std::to_string(ctx.device + r) +
                           " are the same physical GPU: NCCL allows one rank per GPU per communicator "
                           "(\"Duplicate GPU detected\"; DESIGN.md section 7)"};
    if (Support m = memory_support(infos.back(), 2.0 * static_cast<double>(cfg.bytes), "allreduce"); !m.supported) return m;
  }
  IB_CHECK(cudaSetDevice(ctx.device));
  return {};
}

}  // namespace ib::cuda
