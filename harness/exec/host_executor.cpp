// Host executor: steady-clock timing around each run_sample call on the calling thread.
#include "harness/exec/executor.h"

#include <time.h>

#include <chrono>

namespace ib {

namespace {
class HostExecutor final : public Executor {
 public:
  ExecContext context() const override { return {}; }

  void run_samples(Workload& w, const std::function<bool()>& keep_going,
                   const std::function<void(TimedSample&&)>& sink) override {
    const ExecContext ctx = context();
    w.begin_samples();
    while (w.continue_together(keep_going())) {
      SampleOutput out;
      // CLOCK_MONOTONIC (what start_ns is on every backend) also times the sample: steady and
      // shared by all processes on the host, so sample windows of different workers line up.
      const std::int64_t t0 = monotonic_ns();
      w.run_sample(ctx, out);
      const std::int64_t t1 = monotonic_ns();
      w.check_sample();  // as the CUDA executor does, so every backend can fail a finished sample
      const std::int64_t start = out.reported_time ? out.reported_time->start_ns : t0;
      const std::int64_t end = out.reported_time ? out.reported_time->end_ns : t1;
      sink(TimedSample{start, static_cast<double>(end - start) * 1e-9, std::move(out.latencies_s),
                       std::move(out.counters)});
    }
  }
};
}  // namespace

std::unique_ptr<Executor> make_host_executor() { return std::make_unique<HostExecutor>(); }

}  // namespace ib
