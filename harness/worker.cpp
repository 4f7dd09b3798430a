#include "harness/worker.h"

#include "harness/executor.h"
#include "harness/process.h"
#include "harness/protocol.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>

namespace ib {

using nlohmann::json;

namespace {

void report(const json& msg) {
  if (!write_all(kWorkerReportFd, msg.dump() + "\n")) _exit(1);  // the harness is gone
}

// Non-blocking look at the control pipe: true when the harness said stop or went away.
bool stop_requested() {
  pollfd p{0, POLLIN, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  char buf[64];
  const ssize_t n = ::read(0, buf, sizeof(buf));
  return n <= 0 || std::string(buf, static_cast<std::size_t>(n)).find("stop") != std::string::npos;
}

// Blocks until the harness releases the barrier ("go"); false on "stop" or end of file.
bool wait_for_go() {
  std::string line;
  char c;
  for (;;) {
    const ssize_t n = ::read(0, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (c == '\n') return line == "go";
    line += c;
  }
}

// Streams samples in batches (256 samples or 50 ms) so a 10 kHz workload does not make 10k writes
// a second, while a worker that crashes loses at most the last 50 ms of samples.
class SampleBatcher {
 public:
  void add(TimedSample&& s) {
    start_.push_back(s.start_ns);
    duration_.push_back(s.duration_s);
    // Counters travel as one array per name, aligned with the samples (0 where a sample lacks it).
    for (const auto& [name, value] : s.counters) {
      auto& column = counters_[name];
      column.resize(start_.size() - 1, 0.0);
      column.push_back(value);
    }
    latency_count_.push_back(static_cast<std::uint32_t>(s.latencies_s.size()));
    latencies_.insert(latencies_.end(), s.latencies_s.begin(), s.latencies_s.end());
    if (start_.size() >= 256 || monotonic_ns() - last_flush_ns_ > 50'000'000) flush();
  }
  void flush() {
    if (start_.empty()) return;
    json msg = {{"type", "samples"}, {"start_ns", start_}, {"duration_s", duration_}};
    if (!latencies_.empty()) {
      msg["latency_count"] = latency_count_;
      msg["latencies_s"] = latencies_;
    }
    if (!counters_.empty()) {
      for (auto& [name, column] : counters_) column.resize(start_.size(), 0.0);
      msg["counters"] = counters_;
    }
    report(msg);
    counters_.clear();
    start_.clear();
    latency_count_.clear();
    duration_.clear();
    latencies_.clear();
    last_flush_ns_ = monotonic_ns();
  }

 private:
  std::vector<std::int64_t> start_;
  std::vector<double> duration_;
  std::map<std::string, std::vector<double>> counters_;
  std::vector<std::uint32_t> latency_count_;
  std::vector<double> latencies_;
  std::int64_t last_flush_ns_ = monotonic_ns();
};

}  // namespace

int run_worker(const WorkerOptions& o, const Registry& registry) {
  // Die with the harness, whatever kills it; and never outlive a harness that is already gone.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 1;
  try {
    if (!o.cpus.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int c : o.cpus) CPU_SET(c, &set);
      if (sched_setaffinity(0, sizeof(set), &set) != 0) throw WorkloadError("cannot pin to the requested CPUs");
    }
    const WorkloadSpec* spec = registry.find(o.workload);
    if (!spec) throw WorkloadError("unknown workload " + o.workload);
    std::string perr;
    const auto params = validate_params(*spec, json::parse(o.params_json), perr);
    if (!params) throw WorkloadError("params." + perr);

    const std::int64_t t_setup = monotonic_ns();
    std::unique_ptr<Executor> executor =
        o.backend == Backend::cuda ? make_cuda_executor(o.device) : make_host_executor();
    const ExecContext ctx = executor->context();
    const Support support = spec->supported(*params, ctx);
    if (!support.supported) {
      report({{"type", "waived"}, {"reason", support.reason}});
      return 0;
    }
    auto workload = spec->create(*params);
    workload->setup(ctx);
    const double setup_s = static_cast<double>(monotonic_ns() - t_setup) * 1e-9;

    // Warm-up: at least one sample, then until warmup_s has passed.
    const std::int64_t warm_end = monotonic_ns() + static_cast<std::int64_t>(o.warmup_s * 1e9);
    std::size_t warm_samples = 0;
    executor->run_samples(
        *workload, [&] { return warm_samples == 0 || monotonic_ns() < warm_end; },
        [&](TimedSample&&) { ++warm_samples; });
    const Work work = workload->work_per_sample();
    // The placement as this process sees it, so the results show what each worker really got.
    json env = json::object();
    for (const char* key : {"CUDA_VISIBLE_DEVICES", "CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY",
                            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"})
      if (const char* v = std::getenv(key)) env[key] = v;
    report({{"type", "ready"}, {"work", work.amount}, {"unit", work.unit}, {"setup_s", setup_s},
            {"warmup_samples", warm_samples}, {"env", env}});

    if (!wait_for_go()) return 0;  // the harness called the phase off
    const std::int64_t start = monotonic_ns();
    report({{"type", "started"}, {"t_ns", start}});
    const std::int64_t end = start + static_cast<std::int64_t>(o.duration_s * 1e9);
    bool stopped = false;
    SampleBatcher batcher;
    executor->run_samples(
        *workload,
        [&] {
          if (stop_requested()) stopped = true;
          return !stopped && monotonic_ns() < end;
        },
        [&](TimedSample&& s) { batcher.add(std::move(s)); });
    const std::int64_t measure_end = monotonic_ns();
    batcher.flush();
    report({{"type", "done"}, {"measure_start_ns", start}, {"measure_end_ns", measure_end}, {"stopped", stopped}});
    workload->teardown();
    return 0;
  } catch (const std::exception& e) {
    report({{"type", "error"}, {"message", e.what()}});
    std::fprintf(stderr, "worker %s: %s\n", o.workload.c_str(), e.what());
    return 1;
  }
}

}  // namespace ib
