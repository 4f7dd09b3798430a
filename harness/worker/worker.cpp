#include "harness/worker/worker.h"

#include "harness/process/process.h"
#include "harness/worker/protocol.h"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <memory>
#include <thread>

namespace ib {

using nlohmann::json;

bool WorkerControl::apply(const ControlMessage& m) {
  switch (m.type()) {
    case ControlMessageType::go: {
      const GoCommand& go = std::get<GoCommand>(m.body);
      std::lock_guard<std::mutex> lock(mutex_);
      for (std::size_t slot : go.slots)
        if (slot < pending_.size()) pending_[slot] = go;
      cv_.notify_all();
      return true;
    }
    case ControlMessageType::stop: stop_block_ = std::get<StopCommand>(m.body).block; return true;
    case ControlMessageType::end: end(); return false;
    case ControlMessageType::kv: {
      const KvCommand& kv = std::get<KvCommand>(m.body);
      std::lock_guard<std::mutex> lock(mutex_);
      kv_[kv.key] = kv.value;
      cv_.notify_all();
      return true;
    }
  }
  return false;
}

std::optional<std::string> WorkerControl::kv_wait(const std::string& key, std::int64_t deadline_ns, const NowFn& now) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (const auto it = kv_.find(key); it != kv_.end()) return it->second;
    const std::int64_t left = deadline_ns - now();
    if (ended_ || left <= 0) return std::nullopt;
    cv_.wait_for(lock, std::chrono::nanoseconds(std::min<std::int64_t>(left, 100'000'000)));
  }
}

void WorkerRendezvous::put(const std::string& key, const std::string& value) {
  if (!valid_kv_key(key) || value.size() > kMaxKvValueBytes)
    throw WorkloadError("rendezvous: cannot publish \"" + key.substr(0, 60) + "\" (" + std::to_string(value.size()) +
                        " bytes): a key is 1-200 characters of [A-Za-z0-9_-./:], a value at most 64 KiB");
  sink_.send({slot_, KvPutMessage{key, value}});
}

std::string WorkerRendezvous::get(const std::string& key, double timeout_s) {
  if (!valid_kv_key(key)) throw WorkloadError("rendezvous: \"" + key.substr(0, 60) + "\" is not a key");
  sink_.send({slot_, KvGetMessage{key}});
  const auto value = control_.kv_wait(key, now_() + static_cast<std::int64_t>(timeout_s * 1e9), now_);
  if (!value)
    throw WorkloadError("rendezvous: no rank published \"" + key + "\" within " + std::to_string(timeout_s) +
                        " s (a rank that never joined?)");
  return *value;
}

void WorkerControl::sleep_until(std::int64_t at_ns, int block, const NowFn& now) const {
  std::unique_lock<std::mutex> lock(mutex_);
  // cv_ is notified at the end; a stop is seen at the next wake-up (at most 10 ms on).
  for (std::int64_t left = at_ns - now(); left > 0 && !stopped(block); left = at_ns - now())
    cv_.wait_for(lock, std::chrono::nanoseconds(std::min<std::int64_t>(left, 10'000'000)));
}

void WorkerControl::end() {
  {
    std::lock_guard<std::mutex> lock(mutex_);  // so that a slot cannot miss it between its check and its wait
    ended_ = true;
  }
  cv_.notify_all();
}

std::optional<GoCommand> WorkerControl::next_block(std::size_t slot) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return ended_ || pending_[slot].has_value(); });
  if (ended_) return std::nullopt;
  GoCommand c = std::move(*pending_[slot]);
  pending_[slot].reset();
  return c;
}

void read_control(int fd, WorkerControl& control) {
  LineReader reader(2 * kMaxKvValueBytes + 512);  // a few words, or a rendezvous value in hex
  std::vector<std::string> lines;
  for (bool open = true; open;) {
    char buf[4096];
    ssize_t n;
    do n = ::read(fd, buf, sizeof(buf));
    while (n < 0 && errno == EINTR);
    lines.clear();
    const ReadStatus status = n > 0 ? reader.feed(buf, static_cast<std::size_t>(n), lines) : reader.finish(lines);
    open = status == ReadStatus::open;
    for (const auto& line : lines) {
      const auto m = parse_control_message(line);
      if (!m || !control.apply(*m)) {
        open = false;
        break;
      }
    }
  }
  control.end();
}

SampleBatcher::SampleBatcher(MessageSink& sink, std::size_t slot, int block, NowFn now)
    : sink_(sink), slot_(slot), now_(std::move(now)), last_flush_ns_(now_()) {
  batch_.block = block;
}

void SampleBatcher::add(TimedSample&& s) {
  SamplesMessage& b = batch_;
  b.start_ns.push_back(s.start_ns);
  b.duration_s.push_back(s.duration_s);
  // Counters travel as one array per name, aligned with the samples (0 where a sample lacks it).
  for (const auto& [name, value] : s.counters) {
    auto& column = b.counters[name];
    column.resize(b.size() - 1, 0.0);
    column.push_back(value);
  }
  b.latency_count.push_back(static_cast<std::uint32_t>(s.latencies_s.size()));
  b.latencies_s.insert(b.latencies_s.end(), s.latencies_s.begin(), s.latencies_s.end());
  if (b.size() >= kMaxSamples || b.latencies_s.size() >= kMaxLatencies || now_() - last_flush_ns_ > kMaxAge_ns) flush();
}

void SampleBatcher::flush() {
  if (batch_.start_ns.empty()) return;
  for (auto& [name, column] : batch_.counters) column.resize(batch_.size(), 0.0);
  const int block = batch_.block;
  sink_.send({slot_, std::move(batch_)});
  batch_ = SamplesMessage{};
  batch_.block = block;
  last_flush_ns_ = now_();
}

void measure_block(double rewarm_s, std::size_t slot, const GoCommand& cmd, Workload& workload, Executor& executor,
                   MessageSink& sink, const WorkerControl& control, const NowFn& now) {
  const std::int64_t rewarm_start = now();
  const std::int64_t rewarm_end = cmd.at_ns > 0 ? cmd.at_ns : rewarm_start + static_cast<std::int64_t>(rewarm_s * 1e9);
  std::size_t rewarm_samples = 0;
  std::int64_t last_ns = 0;  // with a start time: the last re-warm sample's length, so none overruns it
  workload.begin_block(rewarm_start);  // an open-loop schedule idle since the last block starts afresh
  executor.run_samples(
      workload, [&] { return rewarm_samples == 0 || (now() + last_ns < rewarm_end && !control.stopped(cmd.block)); },
      [&](TimedSample&& s) {
        ++rewarm_samples;
        if (cmd.at_ns > 0) last_ns = static_cast<std::int64_t>(s.duration_s * 1e9);
      });
  if (cmd.at_ns > 0) control.sleep_until(cmd.at_ns, cmd.block, now);  // a late go starts at once
  const std::int64_t start = now();
  workload.begin_block(start);
  sink.send({slot, StartedMessage{cmd.block, start}});
  const std::int64_t end = start + static_cast<std::int64_t>(cmd.seconds * 1e9);
  SampleBatcher batcher(sink, slot, cmd.block, now);
  executor.run_samples(
      workload, [&] { return !control.stopped(cmd.block) && now() < end; },
      [&](TimedSample&& s) { batcher.add(std::move(s)); });
  const std::int64_t measure_end = now();
  workload.end_block();  // paused before "done": it must not run beside the next block's tenants
  batcher.flush();
  sink.send({slot, DoneMessage{cmd.block, start, measure_end, control.stopped(cmd.block)}});
}

namespace {

// Messages from several tenant threads go through one pipe, one whole line at a time.
class PipeSink final : public MessageSink {
 public:
  explicit PipeSink(int fd) : fd_(fd) {}
  void send(const WorkerMessage& m) override {
    const std::string line = to_line(m);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!write_all(fd_, line)) _exit(1);  // the harness is gone
  }

 private:
  int fd_;
  std::mutex mutex_;
};

// The placement environment as this process sees it (CUDA_VISIBLE_DEVICES, CUDA_MPS_*, and IB_RANKS_SHARE_GPU:
// another rank of its tenant is on its GPU, or on a MIG instance of it).
std::map<std::string, std::string> placement_environment() {
  std::map<std::string, std::string> env;
  for (const auto& [key, value] : current_environment())
    if (key == "CUDA_VISIBLE_DEVICES" || key.rfind("CUDA_MPS_", 0) == 0 || key == "IB_RANKS_SHARE_GPU") env[key] = value;
  return env;
}

// Sets the workload up, warms it up and reports ready; nullptr when the workload is waived here
// (reported).
std::unique_ptr<Workload> prepare_tenant(const WorkerOptions& o, std::size_t slot, const Registry& registry,
                                         MessageSink& sink, Executor& executor, const WorkerControl& control,
                                         Rendezvous& rendezvous) {
  // (run_tenant made sure the workload is known.)
  const WorkerTenant& t = o.tenants[slot];
  const WorkloadSpec* spec = registry.find(t.workload);
  std::string perr;
  const auto params = validate_params(*spec, json::parse(t.params_json), perr);
  if (!params) throw WorkloadError("params." + perr);
  const std::int64_t t_setup = monotonic_ns();
  const ExecContext ctx = executor.context();
  const Support support = spec->supported(*params, ctx);
  if (!support.supported) {
    sink.send({slot, WaivedMessage{support.reason}});
    return nullptr;
  }
  auto workload = spec->create(*params);
  ExecContext setup_ctx = ctx;
  setup_ctx.rendezvous = &rendezvous;
  setup_ctx.rank = o.rank;
  workload->setup(setup_ctx);
  const double setup_s = static_cast<double>(monotonic_ns() - t_setup) * 1e-9;
  // Warm-up: at least one sample, then until warmup_s has passed.
  const std::int64_t warm_start = monotonic_ns();
  const std::int64_t warm_end = warm_start + static_cast<std::int64_t>(o.warmup_s * 1e9);
  std::int64_t warm_samples = 0;
  workload->begin_block(warm_start);
  executor.run_samples(
      *workload, [&] { return warm_samples == 0 || (monotonic_ns() < warm_end && !control.ended()); },
      [&](TimedSample&&) { ++warm_samples; });
  workload->end_block();
  const Work work = workload->work_per_sample();
  sink.send({slot, ReadyMessage{work.amount, work.unit, setup_s, warm_samples, placement_environment(),
                                workload->resolved_params()}});
  return workload;
}

void pin_to(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) throw WorkloadError("cannot pin to the requested CPUs");
}

// One tenant, on its own thread: set up, warm up, ready, then every block the harness releases it
// for, until the end. Returns false when the workload failed (already reported).
bool run_tenant(const WorkerOptions& o, std::size_t slot, const Registry& registry, MessageSink& sink,
                WorkerControl& control) {
  const WorkerTenant& t = o.tenants[slot];
  try {
    pin_to(t.cpus);
    const WorkloadSpec* spec = registry.find(t.workload);
    if (!spec) throw WorkloadError("unknown workload " + t.workload);
    // A workload of every backend (a user's command) is timed on the host clock whatever the backend.
    std::unique_ptr<Executor> executor = o.backend == Backend::cuda && !spec->any_backend
                                             ? make_cuda_executor(o.device)
                                             : make_host_executor();
    WorkerRendezvous rendezvous(sink, slot, control, monotonic_ns);  // outlives the workload
    std::unique_ptr<Workload> workload = prepare_tenant(o, slot, registry, sink, *executor, control, rendezvous);
    if (!workload) return true;
    const NowFn now = monotonic_ns;
    while (const auto cmd = control.next_block(slot))
      measure_block(o.rewarm_s, slot, *cmd, *workload, *executor, sink, control, now);
    workload->teardown();
    if (const std::size_t n = workload->escaped_processes()) sink.send({slot, EscapedMessage{n}});
    if (const std::size_t n = workload->lines_given_up()) sink.send({slot, GaveUpMessage{n}});
    return true;
  } catch (const std::exception& e) {
    sink.send({slot, ErrorMessage{e.what()}});
    std::fprintf(stderr, "worker %s: %s\n", t.workload.c_str(), e.what());
    return false;
  }
}

}  // namespace

int run_worker_on(const WorkerOptions& o, const Registry& registry, int control_fd, int report_fd) {
  PipeSink sink(report_fd);
  WorkerControl control(o.tenants.size());
  std::vector<char> ok(o.tenants.size(), 1);
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < o.tenants.size(); ++k)
    threads.emplace_back([&, k] { ok[k] = run_tenant(o, k, registry, sink, control); });
  // The main thread owns the control pipe; "end", end of file or garbage ends the worker.
  read_control(control_fd, control);
  for (auto& t : threads) t.join();
  for (char k : ok)
    if (!k) return 1;
  return 0;
}

int run_worker(const WorkerOptions& o, const Registry& registry) {
  // Die with the harness, whatever kills it; and never outlive a harness that is already gone.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return 1;
  if (getppid() == 1) return 1;
  // A user's program's descendants stay ours whatever group or session they move to (command_process.h).
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return 1;
  return run_worker_on(o, registry, 0, kWorkerReportFd);
}

}  // namespace ib
