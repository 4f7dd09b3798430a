#include "harness/worker.h"

#include "harness/executor.h"
#include "harness/process.h"
#include "harness/protocol.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

namespace ib {

using nlohmann::json;

namespace {

// Messages from several tenant threads go through one pipe, one whole line at a time.
class Reporter {
 public:
  void send(json msg, std::size_t slot) {
    msg["slot"] = slot;
    const std::string line = msg.dump() + "\n";
    std::lock_guard<std::mutex> lock(mutex_);
    if (!write_all(kWorkerReportFd, line)) _exit(1);  // the harness is gone
  }

 private:
  std::mutex mutex_;
};

// The barrier and the stop flag, set by the main thread from the control pipe.
struct Control {
  std::mutex mutex;
  std::condition_variable cv;
  bool released = false;  // "go"
  bool called_off = false;  // "stop" or end of file before "go"
  std::atomic<bool> stop{false};  // "stop" or end of file during measurement
};

// Streams samples in batches (256 samples or 50 ms) so a 10 kHz workload does not make 10k writes
// a second, while a worker that crashes loses at most the last 50 ms of samples.
class SampleBatcher {
 public:
  SampleBatcher(Reporter& r, std::size_t slot) : reporter_(r), slot_(slot) {}
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
    reporter_.send(std::move(msg), slot_);
    start_.clear();
    duration_.clear();
    counters_.clear();
    latency_count_.clear();
    latencies_.clear();
    last_flush_ns_ = monotonic_ns();
  }

 private:
  Reporter& reporter_;
  std::size_t slot_;
  std::vector<std::int64_t> start_;
  std::vector<double> duration_;
  std::map<std::string, std::vector<double>> counters_;
  std::vector<std::uint32_t> latency_count_;
  std::vector<double> latencies_;
  std::int64_t last_flush_ns_ = monotonic_ns();
};

// One tenant, on its own thread: set up, warm up, ready, barrier, measure, done.
// Returns false when the workload failed (already reported).
bool run_tenant(const WorkerOptions& o, std::size_t slot, const Registry& registry, Reporter& reporter,
                Control& control) {
  const WorkerTenant& t = o.tenants[slot];
  try {
    if (!t.cpus.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int c : t.cpus) CPU_SET(c, &set);
      if (sched_setaffinity(0, sizeof(set), &set) != 0) throw WorkloadError("cannot pin to the requested CPUs");
    }
    const WorkloadSpec* spec = registry.find(t.workload);
    if (!spec) throw WorkloadError("unknown workload " + t.workload);
    std::string perr;
    const auto params = validate_params(*spec, json::parse(t.params_json), perr);
    if (!params) throw WorkloadError("params." + perr);

    const std::int64_t t_setup = monotonic_ns();
    std::unique_ptr<Executor> executor =
        o.backend == Backend::cuda ? make_cuda_executor(o.device) : make_host_executor();
    const ExecContext ctx = executor->context();
    const Support support = spec->supported(*params, ctx);
    if (!support.supported) {
      reporter.send({{"type", "waived"}, {"reason", support.reason}}, slot);
      return true;
    }
    auto workload = spec->create(*params);
    workload->setup(ctx);
    const double setup_s = static_cast<double>(monotonic_ns() - t_setup) * 1e-9;

    // Warm-up: at least one sample, then until warmup_s has passed.
    const std::int64_t warm_end = monotonic_ns() + static_cast<std::int64_t>(o.warmup_s * 1e9);
    std::size_t warm_samples = 0;
    workload->begin_block(monotonic_ns());
    executor->run_samples(
        *workload, [&] { return warm_samples == 0 || (monotonic_ns() < warm_end && !control.stop); },
        [&](TimedSample&&) { ++warm_samples; });
    const Work work = workload->work_per_sample();
    // The placement as this process sees it (CUDA_VISIBLE_DEVICES and every CUDA_MPS_* variable), so
    // the results show what each worker really got.
    json env = json::object();
    for (const auto& [key, value] : current_environment())
      if (key == "CUDA_VISIBLE_DEVICES" || key.rfind("CUDA_MPS_", 0) == 0) env[key] = value;
    reporter.send({{"type", "ready"}, {"work", work.amount}, {"unit", work.unit}, {"setup_s", setup_s},
                   {"warmup_samples", warm_samples}, {"env", env}, {"resolved", workload->resolved_params()}},
                  slot);
    {
      std::unique_lock<std::mutex> lock(control.mutex);
      control.cv.wait(lock, [&] { return control.released || control.called_off; });
      if (!control.released) return true;  // the harness called the phase off
    }
    const std::int64_t start = monotonic_ns();
    reporter.send({{"type", "started"}, {"t_ns", start}}, slot);
    workload->begin_block(start);
    const std::int64_t end = start + static_cast<std::int64_t>(o.duration_s * 1e9);
    SampleBatcher batcher(reporter, slot);
    executor->run_samples(
        *workload, [&] { return !control.stop && monotonic_ns() < end; },
        [&](TimedSample&& s) { batcher.add(std::move(s)); });
    const std::int64_t measure_end = monotonic_ns();
    batcher.flush();
    reporter.send({{"type", "done"}, {"measure_start_ns", start}, {"measure_end_ns", measure_end},
                   {"stopped", control.stop.load()}},
                  slot);
    workload->teardown();
    return true;
  } catch (const std::exception& e) {
    reporter.send({{"type", "error"}, {"message", e.what()}}, slot);
    std::fprintf(stderr, "worker %s: %s\n", t.workload.c_str(), e.what());
    return false;
  }
}

// Reads one line from the control pipe (stdin); false at end of file.
bool read_line(std::string& line) {
  line.clear();
  char c;
  for (;;) {
    const ssize_t n = ::read(0, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (c == '\n') return true;
    line += c;
  }
}

}  // namespace

int run_worker(const WorkerOptions& o, const Registry& registry) {
  // Die with the harness, whatever kills it; and never outlive a harness that is already gone.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 1;
  Reporter reporter;
  Control control;
  std::atomic<std::size_t> running{o.tenants.size()};
  std::vector<char> ok(o.tenants.size(), 1);
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < o.tenants.size(); ++k)
    threads.emplace_back([&, k] {
      ok[k] = run_tenant(o, k, registry, reporter, control);
      --running;
    });

  // The main thread owns the control pipe: "go" releases the barrier; "stop" or end of file
  // calls the phase off (before go) or stops the measurement (after go).
  std::string line;
  const bool go = read_line(line) && line == "go";
  {
    std::lock_guard<std::mutex> lock(control.mutex);
    (go ? control.released : control.called_off) = true;
    if (!go) control.stop = true;
  }
  control.cv.notify_all();
  while (go && running > 0) {
    pollfd p{0, POLLIN, 0};
    if (poll(&p, 1, 50) > 0) {
      char buf[64];
      const ssize_t n = ::read(0, buf, sizeof(buf));
      if (n <= 0 || std::string(buf, static_cast<std::size_t>(n)).find("stop") != std::string::npos) {
        control.stop = true;
        break;
      }
    }
  }
  for (auto& t : threads) t.join();
  for (char k : ok)
    if (!k) return 1;
  return 0;
}

}  // namespace ib
