// allreduce: NCCL sum-allreduce of float32 buffers, out of place, over `gpus` GPUs (devices
// ctx.device .. ctx.device+gpus-1) driven by this one process: one communicator per GPU from
// ncclCommInitAll, one rank per GPU, the ranks' calls issued together in an NCCL group. Rank 0
// runs on the harness stream; the other ranks on their own streams, forked from and joined back
// to the harness stream with events, so the executor's events bracket the whole collective.
// Work per sample: iters x bytes (message size per rank), so throughput = algbw as nccl-tests
// defines it; busbw = algbw x 2(n-1)/n (acct::allreduce_busbw_factor): each sample reports
// counters["bus_bytes"] = iters x bytes x 2(n-1)/n, whose rate is busbw. With one GPU the
// communicator has one rank: NCCL copies the buffer locally and nothing is communicated, so bus
// bandwidth is not meaningful (factor 0); each sample says so with counters["local_copy_bytes"]
// (iters x bytes with one rank, 0 otherwise) and the microbenchmark's label.
// NCCL is loaded at run time (nccl_api.h): without it the workload is waived with the places searched.
// Correctness (setup): rank r's input is x_r[i] = ((7i + 13r) mod 17) - 8, small integers whose
// sum is exact in float32; after one allreduce into a NaN-poisoned output, every element on every
// rank must equal sum_r x_r[i] exactly. The inputs never change, so every later allreduce
// computes the same verified result.
// Timeout: every sample's collectives are watched by a watchdog thread; if they have not finished
// `timeout_s` after they could start (enqueued, and the previous sample finished: the executor
// enqueues one sample ahead), every communicator is aborted (ncclCommAbort) and the workload fails
// with that reason: the aborted sample and every later one throw (check_sample, run_sample), so a
// collective whose kernels were unblocked by the abort never becomes a timed sample.
// Ranks as processes (a tenant with `ranks: N`, docs/design.md section 13): each worker process is one rank on
// its own GPU (gpus = 1), joined through the harness's rendezvous (nccl_comm.h, init_rank: non-blocking
// init under timeout_s); its input is x_r for its global rank r and the check sums over all N ranks. The
// communicator is non-blocking, so every ncclGroupEnd and the vote's lone ncclAllReduce may return
// ncclInProgress: each is settled (nccl::settle, under timeout_s, abort on expiry naming the rank) before the
// next NCCL call and before any event or copy on the stream; teardown finalizes (settled), then destroys
// (nccl::close_rank). The watchdog also polls NCCL's asynchronous error (a peer that died) and aborts with
// NCCL's reason. Ranks agree on every sample (continue_together): a one-int allreduce(min) of "I want
// another" on the harness stream, voted one sample ahead so that the next sample follows the vote on the GPU
// with no host in between.
// Locking: ncclCommAbort frees a communicator, so the watchdog aborts only under mu_, and the main
// thread holds mu_ for each allreduce's NCCL calls and never calls NCCL on an aborted communicator.
// If the main thread blocks inside an NCCL launch while holding mu_ (a stream's launch queue full
// behind a hung collective: hundreds of allreduces per sample), the watchdog cannot abort and the
// harness's worker timeout is the backstop.
#include "kernels/cuda/accounting.h"
#include "kernels/cuda/device_info.h"
#include "kernels/cuda/device_util.cuh"
#include "kernels/cuda/nccl_comm.h"
#include "kernels/cuda/workload_registration.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
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
  nccl::Comm comm = nullptr;
  cudaStream_t stream = nullptr;  // rank 0: the harness stream (not owned)
  cudaEvent_t join = nullptr;     // ranks > 0
  DeviceBuffer send, recv;
};

class Allreduce final : public Workload {
 public:
  explicit Allreduce(const Params& p) : cfg_(p) {}
  ~Allreduce() override { release(); }

  void setup(const ExecContext& ctx) override {
    // A fresh start, also after an earlier setup/teardown (which stopped the watchdog, may have
    // aborted, and may have left pending entries). No watchdog runs yet: no lock needed.
    stop_ = false;
    aborted_ = false;
    async_reason_.clear();
    failure_.clear();
    pending_.clear();
    timed_.clear();
    next_done_ = 1;
    device_ = ctx.device;
    stream_ = static_cast<cudaStream_t>(ctx.stream);
    processes_ = ctx.rank.world_size > 1;
    first_rank_ = processes_ ? ctx.rank.rank : 0;
    nranks_ = processes_ ? ctx.rank.world_size : cfg_.gpus;
    auto s0 = stream_;
    const std::size_t count = cfg_.bytes / sizeof(float);
    ranks_.resize(static_cast<std::size_t>(cfg_.gpus));
    std::vector<int> devs;
    for (int r = 0; r < cfg_.gpus; ++r) devs.push_back(ctx.device + r);
    nccl_ = nccl::Library::load_from_environment();
    if (!nccl_.ok()) throw WorkloadError(nccl::not_found_reason(nccl_, "allreduce"));
    const std::vector<nccl::Comm> comms = make_comms(ctx, devs);
    for (int r = 0; r < cfg_.gpus; ++r) {  // owned by ranks_ at once: release() destroys them if we throw
      ranks_[r].device = devs[r];
      ranks_[r].comm = comms[r];
    }
    for (int r = 0; r < cfg_.gpus; ++r) {
      Rank& k = ranks_[r];
      IB_CHECK(cudaSetDevice(k.device));
      if (r == 0) {
        k.stream = s0;
      } else {
        IB_CHECK(cudaStreamCreateWithFlags(&k.stream, cudaStreamNonBlocking));
        IB_CHECK(cudaEventCreateWithFlags(&k.join, cudaEventDisableTiming));
      }
      k.send = DeviceBuffer(cfg_.bytes);
      k.recv = DeviceBuffer(cfg_.bytes);
      fill_rank_kernel<<<grid_for(count), 256, 0, k.stream>>>(k.send.as<float>(), count, first_rank_ + r);
      IB_CHECK_LAUNCH();
      IB_CHECK(cudaMemsetAsync(k.recv.get(), 0xFF, cfg_.bytes, k.stream));  // NaN poison
      IB_CHECK(cudaStreamSynchronize(k.stream));
    }
    IB_CHECK(cudaSetDevice(ctx.device));
    IB_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    for (auto& e : done_) IB_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    for (auto& set : marks_) {
      set.assign(static_cast<std::size_t>(cfg_.iters) + 1, nullptr);
      for (auto& e : set) IB_CHECK(cudaEventCreate(&e));
    }

    // One verified allreduce, waited for under the timeout.
    enqueue(s0, 1);
    IB_CHECK(cudaEventRecord(done_[0], s0));
    wait_or_abort(done_[0]);
    for (int r = 0; r < cfg_.gpus; ++r) {
      Rank& k = ranks_[r];
      IB_CHECK(cudaSetDevice(k.device));
      DeviceBuffer bad(sizeof(unsigned long long));
      IB_CHECK(cudaMemsetAsync(bad.get(), 0, sizeof(unsigned long long), k.stream));
      check_sum_kernel<<<grid_for(count), 256, 0, k.stream>>>(k.recv.as<float>(), count, nranks_,
                                                              bad.as<unsigned long long>());
      IB_CHECK_LAUNCH();
      unsigned long long host = 0;
      IB_CHECK(cudaMemcpyAsync(&host, bad.get(), sizeof(host), cudaMemcpyDeviceToHost, k.stream));
      IB_CHECK(cudaStreamSynchronize(k.stream));
      if (host)
        throw WorkloadError("allreduce: rank " + std::to_string(first_rank_ + r) + ": " + std::to_string(host) + " of " +
                            std::to_string(count) + " elements differ from the exact sum");
    }
    IB_CHECK(cudaSetDevice(ctx.device));
    watchdog_ = std::thread([this] { watch(); });
  }

  void run_sample(const ExecContext& ctx, SampleOutput& out) override {
    if (aborted_.load()) throw WorkloadError(abort_reason());
    auto s0 = static_cast<cudaStream_t>(ctx.stream);
    // Events between the collectives on rank 0's stream: check_sample reads the longest one into `out`.
    const std::size_t marks = next_marks_++ % kMarkSets;
    enqueue(s0, cfg_.iters, marks_[marks].data());
    timed_.push_back({marks, &out});
    std::lock_guard<std::mutex> lock(mu_);
    // Forget finished collectives before reusing their event (the ring is much longer than the
    // executor's two samples in flight).
    forget_finished_locked();
    const std::size_t slot = next_done_++ % done_.size();
    IB_CHECK(cudaEventRecord(done_[slot], s0));
    // Its deadline counts from now if nothing is pending, else from when its predecessor finishes.
    pending_.push_back({slot, std::chrono::steady_clock::now()});
    cv_.notify_all();
    // Bus bytes as nccl-tests count them, so the harness's rate of this counter is busbw (0 on one rank).
    out.counters["bus_bytes"] = cfg_.iters * acct::allreduce_bus_bytes(static_cast<double>(cfg_.bytes), nranks_);
    // One rank: a local copy, no communication. Named in the results so that nobody reads algbw as a link's.
    out.counters["local_copy_bytes"] = nranks_ == 1 ? cfg_.iters * static_cast<double>(cfg_.bytes) : 0.0;
  }

  // Ranks as processes: another sample only if every rank wants one (allreduce(min) of one int).
  // The vote runs one sample ahead, so that the host is never between a vote and the sample it allows: the
  // first call of a run of samples votes and waits (nothing is enqueued yet); every later call enqueues its
  // vote behind the sample just enqueued and answers with the previous vote, which lies before that sample on
  // the stream (long done, normally). The executor then enqueues the next sample right behind this vote, so
  // every rank's GPU goes from the vote, a collective that ends together on all ranks, straight into the next
  // sample: a sample never holds a peer's host wake-up (about 150 us before). A stop is heard one sample late:
  // every rank runs that sample (they all enqueued it) and it counts like any other. Every rank makes the same
  // calls, so every rank enqueues the same votes; the last one of a run, never read, is drained at the next.
  bool continue_together(bool mine) override {
    if (!processes_) return mine;
    if (!voting_ahead_) {
      if (votes_ > 0) (void)read_vote(votes_ - 1);  // the last run's unread vote (or a read one: done at once)
      const bool go = read_vote(enqueue_vote(mine));
      voting_ahead_ = go;
      return go;
    }
    const std::int64_t previous = votes_ - 1;
    (void)enqueue_vote(mine);
    return read_vote(previous);
  }

  // A run of samples begins: its first vote is waited for (continue_together).
  void begin_samples() override { voting_ahead_ = false; }

  // The abort unblocks the hung kernels, so the aborted sample's end event completes like a normal
  // one (after ~timeout_s): fail it rather than report it as a slow sample. Otherwise the sample's longest
  // single collective (its end event has completed, so every mark has), the stall a timeout would see.
  void check_sample() override {
    if (aborted_.load()) throw WorkloadError(abort_reason());
    if (timed_.empty()) return;
    const Timed t = timed_.front();
    timed_.pop_front();
    float longest_ms = 0.0f;
    for (int i = 0; i < cfg_.iters; ++i) {
      float ms = 0.0f;
      IB_CHECK(cudaEventElapsedTime(&ms, marks_[t.marks][i], marks_[t.marks][i + 1]));
      longest_ms = std::max(longest_ms, ms);
    }
    t.out->counters[kLongestCollectiveCounter] = static_cast<double>(longest_ms) * 1e-3;
  }

  Work work_per_sample() const override { return {static_cast<double>(cfg_.iters) * cfg_.bytes, "B"}; }

  void teardown() override { release(); }

 private:
  struct Pending {
    std::size_t slot;
    // When this sample's collectives could start: its enqueue, or, once it is the oldest pending,
    // the moment its predecessor was seen finished (watchdog poll: up to ~10 ms late, i.e. lenient).
    std::chrono::steady_clock::time_point start;
  };

  std::chrono::steady_clock::duration timeout() const {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(cfg_.timeout_s));
  }
  std::string abort_reason() const {
    if (!failure_.empty()) return failure_;
    if (!async_reason_.empty())
      return "allreduce: rank " + std::to_string(first_rank_) + ": NCCL reported " + async_reason_ +
             "; its communicator was aborted (ncclCommAbort)";
    return "allreduce: a collective did not finish within timeout_s = " + std::to_string(cfg_.timeout_s) +
           " s; all " + std::to_string(cfg_.gpus) + " NCCL communicator(s) of this process were aborted (ncclCommAbort)";
  }

  // One communicator per GPU of this process: all of them from ncclCommInitAll, or this process's rank
  // of a tenant whose ranks are processes. The latter also allocates the vote's int.
  std::vector<nccl::Comm> make_comms(const ExecContext& ctx, const std::vector<int>& devs) {
    if (!processes_) return nccl::init_all(nccl_, devs);
    if (cfg_.gpus != 1) throw WorkloadError("allreduce: a tenant with ranks has one GPU per rank (gpus = 1)");
    if (!ctx.rendezvous) throw WorkloadError("allreduce: ranks as processes need the harness's rendezvous");
    IB_CHECK(cudaSetDevice(ctx.device));
    vote_ = DeviceBuffer(sizeof(int));
    IB_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&vote_host_), 4 * sizeof(int), cudaHostAllocDefault));
    for (auto& e : vote_done_) IB_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return {nccl::init_rank(nccl_, ctx.rank, *ctx.rendezvous, cfg_.timeout_s)};
  }

  // Enqueues `iters` allreduces: fork the other ranks' streams from s0, one NCCL group per
  // allreduce, join them back into s0.
  // `marks` (iters + 1 timing events, or null): recorded on s0 before the first and after each allreduce.
  void enqueue(cudaStream_t s0, int iters, cudaEvent_t* marks = nullptr) {
    const std::size_t count = cfg_.bytes / sizeof(float);
    IB_CHECK(cudaEventRecord(fork_, s0));
    if (marks) IB_CHECK(cudaEventRecord(marks[0], s0));
    for (std::size_t r = 1; r < ranks_.size(); ++r) IB_CHECK(cudaStreamWaitEvent(ranks_[r].stream, fork_, 0));
    for (int it = 0; it < iters; ++it) {
      // Per allreduce, not per sample, so that the watchdog can take mu_ between them.
      std::lock_guard<std::mutex> lock(mu_);
      if (aborted_.load()) throw WorkloadError(abort_reason());  // the communicators are freed
      const nccl::Api& api = nccl_.api();
      IB_CHECK(api.group_start());
      for (auto& k : ranks_)
        IB_CHECK(api.all_reduce(k.send.get(), k.recv.get(), count, nccl::DataType::float32, nccl::RedOp::sum, k.comm,
                                k.stream));
      if (processes_)
        settle_locked(api.group_end(), "ncclGroupEnd");  // non-blocking: ncclInProgress until NCCL has launched
      else
        IB_CHECK(api.group_end());  // ncclCommInitAll's communicators block
      if (marks) IB_CHECK(cudaEventRecord(marks[it + 1], s0));  // after the settle: NCCL's kernels are queued
    }
    for (std::size_t r = 1; r < ranks_.size(); ++r) {
      IB_CHECK(cudaEventRecord(ranks_[r].join, ranks_[r].stream));
      IB_CHECK(cudaStreamWaitEvent(s0, ranks_[r].join, 0));
    }
  }

  // Enqueues vote number votes_ ("I want another": `mine`) on the harness stream: the int copied from pinned
  // memory, allreduce(min) settled, copied back to pinned memory, its event recorded; returns its number. Two
  // slots alternate: vote n - 2, which used this slot, has been waited for (every call reads the vote before).
  // Pinned memory both ways: a copy to or from pageable memory would wait for the stream with no deadline.
  std::int64_t enqueue_vote(bool mine) {
    std::lock_guard<std::mutex> lock(mu_);
    if (aborted_.load()) throw WorkloadError(abort_reason());
    const std::size_t slot = static_cast<std::size_t>(votes_ % 2);
    vote_host_[slot] = mine ? 1 : 0;
    IB_CHECK(cudaMemcpyAsync(vote_.get(), &vote_host_[slot], sizeof(int), cudaMemcpyHostToDevice, stream_));
    settle_locked(nccl_.api().all_reduce(vote_.get(), vote_.get(), 1, nccl::DataType::int32, nccl::RedOp::min,
                                         ranks_[0].comm, stream_),
                  "the vote's ncclAllReduce");
    IB_CHECK(cudaMemcpyAsync(&vote_host_[2 + slot], vote_.get(), sizeof(int), cudaMemcpyDeviceToHost, stream_));
    IB_CHECK(cudaEventRecord(vote_done_[slot], stream_));
    return votes_++;
  }

  // Vote `n`'s outcome (one of the last two enqueued), waited for under the timeout.
  bool read_vote(std::int64_t n) {
    const std::size_t slot = static_cast<std::size_t>(n % 2);
    wait_or_abort(vote_done_[slot]);
    return vote_host_[2 + slot] == 1;
  }

  // mu_ held. Ranks as processes: waits until the communicator has left ncclInProgress after `call` (what
  // `what` returned), under timeout_s; on an error or past the deadline aborts and throws naming this rank.
  void settle_locked(nccl::Result call, const std::string& what) {
    const auto deadline = std::chrono::steady_clock::now() + timeout();
    const nccl::Result r = nccl::settle(nccl_, ranks_[0].comm, call, deadline);
    if (r == nccl::Result::success) return;
    const std::string rank = "allreduce: rank " + std::to_string(first_rank_) + ": ";
    const std::string detail = nccl_.last_error(ranks_[0].comm);
    if (r == nccl::Result::in_progress)
      failure_ = rank + what + " was still ncclInProgress after timeout_s = " + std::to_string(cfg_.timeout_s) +
                 " s; its communicator was aborted (ncclCommAbort)";
    else
      failure_ = rank + what + " failed: " + nccl::result_name(r) + (detail.empty() ? "" : " (" + detail + ")") +
                 "; its communicator was aborted (ncclCommAbort)";
    abort_all_locked();
    throw WorkloadError(failure_);
  }

  // mu_ held: no NCCL call of the main thread is under way.
  void abort_all_locked() {
    bool expected = false;
    if (!aborted_.compare_exchange_strong(expected, true)) return;
    for (auto& k : ranks_)
      if (k.comm) {
        // Unblocks kernels waiting on peers and frees the communicator; its result is not checked:
        // the workload fails with the timeout's reason either way.
        (void)nccl_.api().comm_abort(k.comm);
        k.comm = nullptr;
      }
  }

  // mu_ held. Drops the finished samples at the front of pending_; the new oldest one's deadline
  // starts no earlier than now, since its collectives queued behind the ones that just finished.
  void forget_finished_locked() {
    bool dropped = false;
    while (!pending_.empty()) {
      const cudaError_t q = cudaEventQuery(done_[pending_.front().slot]);
      if (q == cudaErrorNotReady) break;
      pending_.pop_front();  // finished (or failed: the executor reports the CUDA error)
      dropped = true;
    }
    if (dropped && !pending_.empty())
      pending_.front().start = std::max(pending_.front().start, std::chrono::steady_clock::now());
  }

  // Polls `e` until it completes; aborts and throws after timeout_s.
  void wait_or_abort(cudaEvent_t e) {
    const auto deadline = std::chrono::steady_clock::now() + timeout();
    for (;;) {
      const cudaError_t q = cudaEventQuery(e);
      if (q == cudaSuccess) return;
      if (q != cudaErrorNotReady) IB_CHECK(q);
      if (std::chrono::steady_clock::now() > deadline) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          abort_all_locked();
        }
        throw WorkloadError(abort_reason());
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  // Watchdog thread: aborts every communicator when the oldest pending sample is overdue.
  void watch() {
    // A new thread's current device is 0: without this its first CUDA call would create a context
    // on device 0, which may be another tenant's GPU. Best effort (a thread cannot report an
    // error): event queries work from any current device.
    (void)cudaSetDevice(device_);
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(10));
      forget_finished_locked();
      if (!pending_.empty() && std::chrono::steady_clock::now() > pending_.front().start + timeout()) {
        abort_all_locked();
        pending_.clear();
      } else if (processes_ && !aborted_.load() && ranks_[0].comm) {
        // A peer process that died or a broken connection: NCCL says so asynchronously.
        const nccl::Result e = nccl::async_error(nccl_, ranks_[0].comm);
        if (e != nccl::Result::success) {
          async_reason_ = nccl::result_name(e) + (nccl_.last_error(ranks_[0].comm).empty() ? "" : " (" + nccl_.last_error(ranks_[0].comm) + ")");
          abort_all_locked();
          pending_.clear();
        }
      }
    }
  }

  // Best effort (teardown and destructor): errors were reported when they happened.
  void release() {
    if (watchdog_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
      }
      cv_.notify_all();
      watchdog_.join();
    }
    if (ranks_.empty() && !fork_) return;  // nothing set up (done_ is created after fork_)
    int caller_device = -1;  // restored at the end: the ranks' loop below switches devices
    const bool restore = cudaGetDevice(&caller_device) == cudaSuccess;
    for (auto& k : ranks_) {
      if (k.stream && !aborted_.load()) cudaStreamSynchronize(k.stream);
      if (k.comm && processes_) {
        // Finalize (it waits for the node's other ranks), then destroy; abort on an error or past timeout_s.
        if (const std::string note = nccl::close_rank(nccl_, k.comm, cfg_.timeout_s); !note.empty())
          std::fprintf(stderr, "allreduce: rank %d: teardown: %s\n", first_rank_, note.c_str());
      } else if (k.comm) {
        (void)nccl_.api().comm_destroy(k.comm);
      }
      k.comm = nullptr;
    }
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      Rank& k = ranks_[r];
      cudaSetDevice(k.device);
      if (r > 0) {
        if (k.join) cudaEventDestroy(k.join);
        if (k.stream) cudaStreamDestroy(k.stream);
      }
      k.send = DeviceBuffer();
      k.recv = DeviceBuffer();
    }
    ranks_.clear();
    cudaSetDevice(device_);  // where the events below were created
    if (fork_) cudaEventDestroy(fork_);
    fork_ = nullptr;
    for (auto& e : done_) {
      if (e) cudaEventDestroy(e);
      e = nullptr;
    }
    for (auto& set : marks_) {
      for (cudaEvent_t e : set)
        if (e) cudaEventDestroy(e);
      set.clear();
    }
    timed_.clear();
    for (auto& e : vote_done_) {
      if (e) cudaEventDestroy(e);
      e = nullptr;
    }
    votes_ = 0;
    voting_ahead_ = false;
    vote_ = DeviceBuffer();
    if (vote_host_) cudaFreeHost(vote_host_);
    vote_host_ = nullptr;
    if (restore) cudaSetDevice(caller_device);
  }

  AllreduceConfig cfg_;
  nccl::Library nccl_;  // loaded in setup; outlives the communicators (release() destroys them first)
  int device_ = 0;  // rank 0's device (ctx.device)
  cudaStream_t stream_ = nullptr;  // the harness stream (not owned)
  bool processes_ = false;  // this process is one rank of a tenant with ranks
  int first_rank_ = 0;      // the global rank of ranks_[0]
  int nranks_ = 1;          // ranks of the communicator
  DeviceBuffer vote_;       // ranks as processes: continue_together's int, on the GPU
  int* vote_host_ = nullptr;  // and pinned on the host: [0..1] each slot's ballot, [2..3] each slot's outcome
  std::array<cudaEvent_t, 2> vote_done_{};
  std::int64_t votes_ = 0;      // votes enqueued since setup
  bool voting_ahead_ = false;   // this run of samples has voted once (continue_together)
  std::string async_reason_;  // NCCL's asynchronous error, when that is why it was aborted (under mu_)
  std::string failure_;       // a settled call's error or expiry, when that is why it was aborted (under mu_)
  std::vector<Rank> ranks_;
  cudaEvent_t fork_ = nullptr;
  std::array<cudaEvent_t, 16> done_{};
  // Per sample: timing events around each allreduce (marks_), reused after kMarkSets samples (the executor
  // has at most two in flight), and the samples whose longest collective check_sample has yet to read.
  static constexpr std::size_t kMarkSets = 4;
  std::array<std::vector<cudaEvent_t>, kMarkSets> marks_{};
  std::size_t next_marks_ = 0;
  struct Timed {
    std::size_t marks;
    SampleOutput* out;  // alive and unread until check_sample returns (Workload::check_sample)
  };
  std::deque<Timed> timed_;
  std::size_t next_done_ = 1;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> pending_;
  bool stop_ = false;
  std::atomic<bool> aborted_{false};
  std::thread watchdog_;
};

std::unique_ptr<Workload> make_allreduce(const Params& p) { return std::make_unique<Allreduce>(p); }

Support allreduce_supported(const Params& p, const ExecContext& ctx) {
  const AllreduceConfig cfg(p);
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (cfg.gpus > 1 && visible && std::strstr(visible, "MIG-")) {
    return {false, "NCCL cannot form a communicator across MIG instances (no P2P/NVLink between them; "
                   "docs/design.md section 7): run allreduce with gpus = 1 inside a MIG instance"};
  }
  // Decidable without a GPU, so first: NCCL is loaded at run time and may be missing.
  const nccl::Library lib = nccl::Library::load_from_environment();
  if (!lib.ok()) return {false, nccl::not_found_reason(lib, "allreduce")};
  if (const nccl::Placement where = nccl::placement_from_environment(); where.shares_gpu)  // NCCL's version decides
    if (std::string why = nccl::allow_ranks_on_one_gpu(lib, "allreduce", where.mig_instance); !why.empty())
      return {false, why};
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
                           "(\"Duplicate GPU detected\"; docs/design.md section 7)"};
    if (Support m = memory_support(infos.back(), 2.0 * static_cast<double>(cfg.bytes), "allreduce"); !m.supported) return m;
  }
  IB_CHECK(cudaSetDevice(ctx.device));
  std::vector<int> devs;
  for (int r = 0; r < cfg.gpus; ++r) devs.push_back(ctx.device + r);
  return nccl::support_for("allreduce", devs);  // under MPS or MIG: a trial communicator
}

}  // namespace

IB_CUDA_WORKLOAD("allreduce", allreduce_supported, make_allreduce);

}  // namespace ib::cuda
