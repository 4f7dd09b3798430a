// The worker side: `interference-bench worker ...` (started by the orchestrator, never by hand).
// One process runs one tenant, or, in mode streams, several tenants on threads of one process
// (each with its own executor, hence its own CUDA stream in the process's one context). Each tenant
// sets up its workload, warms up, reports ready; then measures each block the harness releases it for
// (a short re-warm, then the block's duration) and streams the samples back (protocol.h, messages.h;
// messages tagged with the tenant's slot and the block), until "end".
#pragma once

#include "harness/exec/executor.h"
#include "harness/worker/messages.h"
#include "kernels/workload.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ib {

struct WorkerTenant {
  std::string workload;
  std::string params_json = "{}";
  std::vector<int> cpus;  // affinity of this tenant's thread (empty: inherit)
};

struct WorkerOptions {
  std::vector<WorkerTenant> tenants;
  RankInfo rank;  // IB_RANK, IB_WORLD_SIZE, IB_LOCAL_RANK (a tenant with ranks; else rank 0 of 1)
  Backend backend = Backend::host;
  int device = 0;
  double warmup_s = 1.0;
  double rewarm_s = 0.05;  // before each block, unreported (at least one sample)
};

// Returns the process exit code: 0 after done or waived, 1 when a workload failed. Control on stdin,
// reports on fd 3 (kWorkerReportFd); dies with the harness.
int run_worker(const WorkerOptions& options, const Registry& registry);
// The same on the given descriptors, without the process-wide settings of run_worker (tests).
int run_worker_on(const WorkerOptions& options, const Registry& registry, int control_fd, int report_fd);

// ---------------------------------------------------------------- the parts, tested on their own

// The worker's clock: monotonic_ns, or a fake in tests.
using NowFn = std::function<std::int64_t()>;

// Where a worker's messages go, one whole message at a time, from any tenant thread.
class MessageSink {
 public:
  virtual ~MessageSink() = default;
  virtual void send(const WorkerMessage& m) = 0;
};

// What the harness asked for, applied by the main thread from the control pipe: per slot the next
// block to measure, the block to stop early, the end of the worker. Read by the tenant threads.
class WorkerControl {
 public:
  explicit WorkerControl(std::size_t slots) : pending_(slots) {}
  // Applies one command; false after "end".
  bool apply(const ControlMessage& m);
  // "end" or end of file: every tenant finishes its block (stopped) and ends.
  void end();
  // Waits for this slot's next block; nullopt when the worker ends.
  std::optional<GoCommand> next_block(std::size_t slot);
  // The value the harness answered for `key` (a "kv" command), waiting until `deadline_ns` on `now`'s clock;
  // nullopt at the deadline or the end.
  std::optional<std::string> kv_wait(const std::string& key, std::int64_t deadline_ns, const NowFn& now);
  // The measurement of `block` must end now ("stop <block>" or the end).
  bool stopped(int block) const { return ended_ || stop_block_ == block; }
  // Sleeps until `at_ns` on `now`'s clock (a go's start time), or until `block` is stopped or the worker ends.
  void sleep_until(std::int64_t at_ns, int block, const NowFn& now) const;
  bool ended() const { return ended_; }

 private:
  mutable std::mutex mutex_;  // mutable: sleep_until waits on cv_ from the tenant threads' const view
  mutable std::condition_variable cv_;
  std::vector<std::optional<GoCommand>> pending_;  // per slot
  std::map<std::string, std::string> kv_;          // the rendezvous values the harness sent
  std::atomic<bool> ended_{false};                 // set under mutex_ (next_block waits on it)
  std::atomic<int> stop_block_{-1};
};

// A tenant's rendezvous through the harness: put and get as kv_put / kv_get reports of `slot`, the answers
// from the control pipe (WorkerControl::kv_wait).
class WorkerRendezvous final : public Rendezvous {
 public:
  WorkerRendezvous(MessageSink& sink, std::size_t slot, WorkerControl& control, NowFn now)
      : sink_(sink), slot_(slot), control_(control), now_(std::move(now)) {}
  void put(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key, double timeout_s) override;

 private:
  MessageSink& sink_;
  std::size_t slot_;
  WorkerControl& control_;
  NowFn now_;
};

// Reads control lines from `fd` (blocking) and applies them until "end", end of file or a line that
// is not a command (the harness is not talking to us); then ends `control`.
void read_control(int fd, WorkerControl& control);

// Streams samples in batches (kMaxSamples samples, kMaxLatencies requests or kMaxAge_ns of time,
// whichever comes first) so a 10 kHz workload does not make 10k writes a second, a batch stays far
// below the harness's line limit, and a worker that crashes loses at most the last 50 ms of samples.
class SampleBatcher {
 public:
  static constexpr std::size_t kMaxSamples = 256;
  static constexpr std::size_t kMaxLatencies = 1u << 17;  // ~3 MB of JSON
  static constexpr std::int64_t kMaxAge_ns = 50'000'000;

  SampleBatcher(MessageSink& sink, std::size_t slot, int block, NowFn now);
  void add(TimedSample&& s);
  // Sends what is batched (nothing when empty). The block's last batch must be flushed before "done".
  void flush();

 private:
  MessageSink& sink_;
  std::size_t slot_;
  SamplesMessage batch_;
  NowFn now_;
  std::int64_t last_flush_ns_;
};

// One block of one tenant: a short re-warm (unreported: clocks and caches after the idle gap), then
// "started", the measurement in batches until the block's duration passed or it was stopped, the last
// batch, and "done". A go with a start time (GoCommand::at_ns) re-warms until about then (no sample that
// would end past it is begun), sleeps out the rest and starts measuring at that time.
void measure_block(double rewarm_s, std::size_t slot, const GoCommand& cmd, Workload& workload, Executor& executor,
                   MessageSink& sink, const WorkerControl& control, const NowFn& now);

}  // namespace ib
