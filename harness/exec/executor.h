// Executors own timing: they run a workload's samples back to back and time each one.
// The host executor uses the steady clock; the CUDA executor records CUDA events on a stream it
// owns, so workloads never time themselves.
#pragma once

#include "harness/core/clock.h"
#include "kernels/workload.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ib {

struct TimedSample {
  std::int64_t start_ns = 0;  // CLOCK_MONOTONIC at the start of the sample
  double duration_s = 0.0;    // host: steady clock; CUDA: event time on the workload's stream
  std::vector<double> latencies_s;
  std::map<std::string, double> counters;  // SampleOutput::counters of this sample
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual ExecContext context() const = 0;
  // Runs samples of `w` back to back while keep_going() is true; hands each finished sample to
  // `sink` in order. keep_going() is asked before each new sample is started.
  virtual void run_samples(Workload& w, const std::function<bool()>& keep_going,
                           const std::function<void(TimedSample&&)>& sink) = 0;
};

std::unique_ptr<Executor> make_host_executor();

// The CUDA executor, made by the CUDA module (harness/exec/cuda_module.h, loaded on first use). Throws
// WorkloadError when CUDA is unavailable (no module, driver or GPU; cuda_unavailable_reason says why).
std::unique_ptr<Executor> make_cuda_executor(int device);

}  // namespace ib
