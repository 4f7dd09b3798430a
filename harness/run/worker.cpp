#include "harness/run/worker.h"

#include "harness/exec/executor.h"
#include "harness/process/process.h"
#include "harness/run/protocol.h"

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
#include <optional>
#include <sstream>
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

// What the harness asked for, set by the main thread from the control pipe (protocol.h): per slot the
// next block to measure, the block to stop early, and the end of the worker.
struct BlockCommand {
  int block = -1;
  double duration_s = 0.0;
};
struct Control {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::optional<BlockCommand>> pending;  // per slot
  bool ended = false;                                // "end" or end of file
  std::atomic<int> stop_block{-1};                   // "stop <block>"
  std::atomic<bool> stop_all{false};                 // set with ended
  bool stopped(int block) const { return stop_all || stop_block == block; }
};

// Streams samples in batches (256 samples or 50 ms) so a 10 kHz workload does not make 10k writes
// a second, while a worker that crashes loses at most the last 50 ms of samples.
class SampleBatcher {
 public:
  SampleBatcher(Reporter& r, std::size_t slot, int block) : reporter_(r), slot_(slot), block_(block) {}
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
    json msg = {{"type", "samples"}, {"block", block_}, {"start_ns", start_}, {"duration_s", duration_}};
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
  int block_;
  std::vector<std::int64_t> start_;
  std::vector<double> duration_;
  std::map<std::string, std::vector<double>> counters_;
  std::vector<std::uint32_t> latency_count_;
  std::vector<double> latencies_;
  std::int64_t last_flush_ns_ = monotonic_ns();
};

// Waits for this slot's next block; nullopt when the worker ends.
std::optional<BlockCommand> next_block(Control& control, std::size_t slot) {
  std::unique_lock<std::mutex> lock(control.mutex);
  control.cv.wait(lock, [&] { return control.ended || control.pending[slot].has_value(); });
  if (control.ended) return std::nullopt;
  const BlockCommand c = *control.pending[slot];
  control.pending[slot].reset();
  return c;
}

// One block: a short re-warm (unreported: clocks and caches after the idle gap), then the measurement.
void measure_block(const WorkerOptions& o, std::size_t slot, const BlockCommand& cmd, Workload& workload,
                   Executor& executor, Reporter& reporter, Control& control) {
  const std::int64_t rewarm_start = monotonic_ns();
  const std::int64_t rewarm_end = rewarm_start + static_cast<std::int64_t>(o.rewarm_s * 1e9);
  std::size_t rewarm_samples = 0;
  workload.begin_block(rewarm_start);  // an open-loop schedule idle since the last block starts afresh
  executor.run_samples(
      workload, [&] { return rewarm_samples == 0 || (monotonic_ns() < rewarm_end && !control.stopped(cmd.block)); },
      [&](TimedSample&&) { ++rewarm_samples; });
  const std::int64_t start = monotonic_ns();
  workload.begin_block(start);
  reporter.send({{"type", "started"}, {"block", cmd.block}, {"t_ns", start}}, slot);
  const std::int64_t end = start + static_cast<std::int64_t>(cmd.duration_s * 1e9);
  SampleBatcher batcher(reporter, slot, cmd.block);
  executor.run_samples(
      workload, [&] { return !control.stopped(cmd.block) && monotonic_ns() < end; },
      [&](TimedSample&& s) { batcher.add(std::move(s)); });
  const std::int64_t measure_end = monotonic_ns();
  batcher.flush();
  reporter.send({{"type", "done"}, {"block", cmd.block}, {"measure_start_ns", start}, {"measure_end_ns", measure_end},
                 {"stopped", control.stopped(cmd.block)}},
                slot);
}

// Sets the workload up, warms it up and reports ready (with the placement environment as this process
// sees it); nullptr when the workload is waived here (reported).
std::unique_ptr<Workload> prepare_tenant(const WorkerOptions& o, std::size_t slot, const Registry& registry,
                                         Reporter& reporter, Executor& executor, const Control& control) {
  const WorkerTenant& t = o.tenants[slot];
  const WorkloadSpec* spec = registry.find(t.workload);
  if (!spec) throw WorkloadError("unknown workload " + t.workload);
  std::string perr;
  const auto params = validate_params(*spec, json::parse(t.params_json), perr);
  if (!params) throw WorkloadError("params." + perr);
  const std::int64_t t_setup = monotonic_ns();
  const ExecContext ctx = executor.context();
  const Support support = spec->supported(*params, ctx);
  if (!support.supported) {
    reporter.send({{"type", "waived"}, {"reason", support.reason}}, slot);
    return nullptr;
  }
  auto workload = spec->create(*params);
  workload->setup(ctx);
  const double setup_s = static_cast<double>(monotonic_ns() - t_setup) * 1e-9;
  // Warm-up: at least one sample, then until warmup_s has passed.
  const std::int64_t warm_start = monotonic_ns();
  const std::int64_t warm_end = warm_start + static_cast<std::int64_t>(o.warmup_s * 1e9);
  std::size_t warm_samples = 0;
  workload->begin_block(warm_start);
  executor.run_samples(
      *workload, [&] { return warm_samples == 0 || (monotonic_ns() < warm_end && !control.stop_all); },
      [&](TimedSample&&) { ++warm_samples; });
  const Work work = workload->work_per_sample();
  json env = json::object();
  for (const auto& [key, value] : current_environment())
    if (key == "CUDA_VISIBLE_DEVICES" || key.rfind("CUDA_MPS_", 0) == 0) env[key] = value;
  reporter.send({{"type", "ready"}, {"work", work.amount}, {"unit", work.unit}, {"setup_s", setup_s},
                 {"warmup_samples", warm_samples}, {"env", env}, {"resolved", workload->resolved_params()}},
                slot);
  return workload;
}

// One tenant, on its own thread: set up, warm up, ready, then every block the harness releases it
// for, until the end. Returns false when the workload failed (already reported).
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
    std::unique_ptr<Executor> executor =
        o.backend == Backend::cuda ? make_cuda_executor(o.device) : make_host_executor();
    std::unique_ptr<Workload> workload = prepare_tenant(o, slot, registry, reporter, *executor, control);
    if (!workload) return true;
    while (const auto cmd = next_block(control, slot)) measure_block(o, slot, *cmd, *workload, *executor, reporter, control);
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

// Applies one control line: "go <block> <seconds> <slot>[,<slot>...]", "stop <block>" or "end".
// Returns false at "end" or a line it does not understand (the harness is not talking to us).
bool apply_control_line(const std::string& line, Control& control) {
  std::istringstream in(line);
  std::string word;
  in >> word;
  if (word == "stop") {
    int block = -1;
    if (in >> block) control.stop_block = block;
    return true;
  }
  if (word != "go") return false;
  BlockCommand cmd;
  std::string slots;
  if (!(in >> cmd.block >> cmd.duration_s >> slots)) return false;
  std::lock_guard<std::mutex> lock(control.mutex);
  std::istringstream list(slots);
  for (std::string k; std::getline(list, k, ',');) {
    const std::size_t slot = std::stoul(k);
    if (slot < control.pending.size()) control.pending[slot] = cmd;
  }
  control.cv.notify_all();
  return true;
}

}  // namespace

int run_worker(const WorkerOptions& o, const Registry& registry) {
  // Die with the harness, whatever kills it; and never outlive a harness that is already gone.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 1;
  Reporter reporter;
  Control control;
  control.pending.resize(o.tenants.size());
  std::vector<char> ok(o.tenants.size(), 1);
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < o.tenants.size(); ++k)
    threads.emplace_back([&, k] { ok[k] = run_tenant(o, k, registry, reporter, control); });

  // The main thread owns the control pipe; "end", end of file or garbage ends the worker.
  std::string line;
  while (read_line(line)) {
    try {
      if (!apply_control_line(line, control)) break;
    } catch (const std::exception&) {
      break;
    }
  }
  {
    std::lock_guard<std::mutex> lock(control.mutex);
    control.ended = true;
    control.stop_all = true;
  }
  control.cv.notify_all();
  for (auto& t : threads) t.join();
  for (char k : ok)
    if (!k) return 1;
  return 0;
}

}  // namespace ib
