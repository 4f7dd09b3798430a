// The CUDA executor: owns the workload's stream and times every sample with CUDA events on it.
//
// Pipelining: sample k+1 is enqueued (start event, run_sample, end event) before the host waits
// for sample k's end event, so the GPU goes from one sample straight into the next with no idle
// gap while the host hands results to the sink. At most two samples are in flight.
//
// Timing: duration_s = cudaEventElapsedTime(start_k, end_k). start_ns (CLOCK_MONOTONIC) is
// derived on the GPU's own timeline, not from when the host happened to notice a sample:
//   * at the beginning of run_samples the stream is drained, an "anchor" event is recorded on the
//     idle stream and waited for; its host time is taken as the midpoint of the host clock read
//     just before the record and just after the wait returned. The error is at most half that
//     window and it is the same offset for every sample of the call, so the anchor is taken up to
//     five times and the narrowest window kept (cuda::anchor_event): one try alone would be off by
//     however long the thread happened to be preempted. The bound (Anchor::error_ns, normally a
//     few microseconds) is not reported: a per-sample counter would be summed like a rate;
//   * sample 0 starts at anchor_ns + elapsed(anchor, start_0); sample k starts at
//     start_ns(k-1) + elapsed(start_{k-1}, start_k). Chaining short intervals keeps the float
//     millisecond resolution of cudaEventElapsedTime at ~nanoseconds per step instead of losing
//     precision over a long phase; it still tracks real idle gaps (a start event's timestamp is
//     taken when the stream reaches it). Drift between the GPU timer and CLOCK_MONOTONIC is
//     ppm-level, i.e. microseconds over a phase.
// Reading host time when the end event is observed would instead put every sample late by the
// host's wake-up latency and by however long the host was busy enqueuing the next sample.
#include "harness/exec/cuda_module_api.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_workloads.h"
#include "kernels/cuda/device_info.h"

#include <array>
#include <string>

namespace ib {

namespace {

class CudaExecutor final : public Executor {
 public:
  explicit CudaExecutor(int device) : device_(device) {
    IB_CHECK(cudaSetDevice(device_));
    IB_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    for (auto& e : anchors_) IB_CHECK(cudaEventCreate(&e));
    for (auto& s : slots_) {
      IB_CHECK(cudaEventCreate(&s.start));
      IB_CHECK(cudaEventCreate(&s.end));
    }
  }

  ~CudaExecutor() override {
    // Best effort: never throw from a destructor; errors here were already reported.
    cudaStreamSynchronize(stream_);
    for (auto& s : slots_) {
      cudaEventDestroy(s.start);
      cudaEventDestroy(s.end);
    }
    for (auto& e : anchors_) cudaEventDestroy(e);
    cudaStreamDestroy(stream_);
  }

  ExecContext context() const override { return {device_, stream_, nullptr, {}}; }

  void run_samples(Workload& w, const std::function<bool()>& keep_going,
                   const std::function<void(TimedSample&&)>& sink) override {
    IB_CHECK(cudaSetDevice(device_));
    const ExecContext ctx = context();

    // Anchor the GPU timeline to CLOCK_MONOTONIC on an idle stream (see the comment at the top).
    std::int64_t prev_start_ns = cuda::anchor_event(anchors_, stream_).ns;
    cudaEvent_t prev_start = anchors_[0];

    // A collective's ranks agree on every sample (Workload::continue_together; others answer keep_going).
    w.begin_samples();
    if (!w.continue_together(keep_going())) return;
    std::size_t k = 0;  // sample being waited for; slot k % kSlots
    enqueue(w, ctx, slots_[0]);
    for (;;) {
      Slot& cur = slots_[k % kSlots];
      // Enqueue the next sample before waiting for this one: the GPU never idles between them.
      const bool more = w.continue_together(keep_going());
      if (more) enqueue(w, ctx, slots_[(k + 1) % kSlots]);

      IB_CHECK(cudaEventSynchronize(cur.end));
      w.check_sample();  // e.g. an aborted collective: its end event completes, its work did not
      float ms = 0.0f, gap_ms = 0.0f;
      IB_CHECK(cudaEventElapsedTime(&ms, cur.start, cur.end));
      IB_CHECK(cudaEventElapsedTime(&gap_ms, prev_start, cur.start));
      TimedSample s;
      s.start_ns = prev_start_ns + static_cast<std::int64_t>(static_cast<double>(gap_ms) * 1e6);
      s.duration_s = static_cast<double>(ms) * 1e-3;
      s.latencies_s = std::move(cur.out.latencies_s);
      s.counters = std::move(cur.out.counters);
      prev_start_ns = s.start_ns;
      prev_start = cur.start;  // still valid: slot k is only re-recorded at sample k + kSlots
      sink(std::move(s));
      if (!more) break;
      ++k;
    }
  }

 private:
  struct Slot {
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
    SampleOutput out;
  };
  // Two samples in flight plus the previous start event kept for chaining: three slots.
  static constexpr std::size_t kSlots = 3;

  void enqueue(Workload& w, const ExecContext& ctx, Slot& slot) {
    slot.out = SampleOutput{};
    IB_CHECK(cudaEventRecord(slot.start, stream_));
    w.run_sample(ctx, slot.out);
    IB_CHECK(cudaGetLastError());  // a launch error inside run_sample that it did not report
    IB_CHECK(cudaEventRecord(slot.end, stream_));
  }

  int device_;
  cudaStream_t stream_ = nullptr;
  std::array<cudaEvent_t, 2> anchors_{};  // [0]: the anchor (see cuda::anchor_event)
  std::array<Slot, kSlots> slots_{};
};

}  // namespace

}  // namespace ib

namespace ib::cuda {

std::unique_ptr<Executor> make_executor(int device) {
  if (auto why = unavailable_reason(device)) throw WorkloadError(*why);
  return std::make_unique<CudaExecutor>(device);
}

}  // namespace ib::cuda
