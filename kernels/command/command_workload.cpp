#include "kernels/command/command_workload.h"

#include "kernels/command/command_process.h"
#include "kernels/command/command_spec.h"
#include "kernels/command/heartbeat.h"
#include "kernels/command/line_samples.h"
#include "kernels/command/step_pattern.h"
#include "kernels/open_loop.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

namespace ib {

namespace {


std::int64_t ns(double s) { return static_cast<std::int64_t>(s * 1e9); }

// What a step of a user's program may be (issue 37 items 5 and 6): at least 1 ns (the clock's resolution: a
// step that rounds to 0 ns is no step) and at most 1e6 s (11 days; a bigger value is a unit mistake, and
// beyond ~9.2e9 s its nanoseconds would not fit the clock's int64); work finite, >= 0 and at most 1e15 a
// step, so a phase's total stays finite. A step outside is the program's error, naming what it sent.
constexpr double kMinStepS = 1e-9, kMaxStepS = 1e6, kMaxStepWork = 1e15;
std::string step_problem(double seconds) {
  if (seconds >= kMinStepS && seconds <= kMaxStepS) return "";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3g", seconds);
  return "a step of " + std::string(buf) + " s, outside [1 ns, 1e6 s]";
}
std::string secs(double s) {
  std::string t = std::to_string(s);
  t.erase(t.find_last_not_of('0') + 1);
  if (!t.empty() && t.back() == '.') t.pop_back();
  return t + " s";
}

// What every metric shares: the spec, the running program, and the error text with its output.
class CommandBase : public Workload {
 public:
  explicit CommandBase(CommandSpec spec) : spec_(std::move(spec)) {}
  Work work_per_sample() const override { return {1.0, spec_.step_unit}; }
  std::size_t escaped_processes() const override { return ledger_->escaped(); }

 protected:
  [[noreturn]] void fail(const std::string& what) const {
    throw WorkloadError("command \"" + escaped_line(spec_.argv[0], 80) + "\" " + what + (proc_ ? proc_->tail_text() : ""));
  }
  // The program ended while we waited for it: fail with how.
  void fail_if_exited(const char* when) {
    const ProgramExit e = proc_->poll_exit();
    if (e.exited) fail(std::string("ended ") + when + " (" + e.describe + ")");
  }
  // SIGTERM to the group, SIGKILL after stop_timeout_s; a program that needed SIGKILL is a fault.
  void end_program() {
    if (!proc_) return;
    const bool on_term = proc_->terminate(spec_.stop_timeout_s);
    const std::string tail = proc_->tail_text();
    proc_.reset();
    if (!on_term)
      throw WorkloadError("command \"" + escaped_line(spec_.argv[0], 80) + "\" ignored SIGTERM for " + secs(spec_.stop_timeout_s) +
                          " and was killed" + tail);
  }

  CommandSpec spec_;
  std::shared_ptr<ProgramLedger> ledger_ = std::make_shared<ProgramLedger>();  // every start of the program
  std::unique_ptr<CommandProcess> proc_;
};

// Steps reported over the heartbeat socket; the program blocks between blocks on "pause".
class HeartbeatCommand final : public CommandBase {
 public:
  using CommandBase::CommandBase;

  void setup(const ExecContext&) override {
    server_ = std::make_unique<HeartbeatServer>();
    auto env = spec_.env;
    env[kHeartbeatEnv] = server_->address();
    started_ns_ = open_loop_now_ns();
    proc_ = std::make_unique<CommandProcess>(spec_.argv, spec_.cwd, env, STDOUT_FILENO, CommandProcess::LineSink{},
                                             /*release_cpus=*/true, ledger_);
    const std::int64_t deadline = started_ns_ + ns(spec_.ready_timeout_s);
    while (!server_->accept_from(proc_->pid(), 100)) {
      fail_if_exited("before it connected to the heartbeat socket");
      if (open_loop_now_ns() > deadline)
        fail("did not connect to " + std::string(kHeartbeatEnv) + " within ready_timeout_s " +
             secs(spec_.ready_timeout_s) + " (does it use the heartbeat client?)");
    }
    std::string line;
    if (!next_message(line, deadline, "before its hello")) fail("did not say hello within ready_timeout_s");
    std::string error;
    const auto m = parse_heartbeat_line(line, error);
    if (!m || !std::holds_alternative<HeartbeatHello>(*m))
      fail("sent \"" + escaped_line(line, 60) + "\" instead of hello" + (error.empty() ? "" : ": " + error));
    paused_ = true;  // the client waits for its first "go"
  }

  void begin_block(std::int64_t) override {
    if (!paused_) return;
    if (!server_->send("go")) fail("closed the heartbeat connection");
    paused_ = false;
  }

  void run_sample(const ExecContext&, SampleOutput& out) override {
    const std::int64_t deadline = open_loop_now_ns() + ns(spec_.step_timeout_s);
    std::string line;
    if (!next_message(line, deadline, "during a step"))
      fail("reported no step for step_timeout_s " + secs(spec_.step_timeout_s) + " (hung?)");
    const auto m = parsed(line);
    if (!std::holds_alternative<HeartbeatStep>(m)) fail("sent \"" + escaped_line(line, 60) + "\" while running");
    const auto& step = std::get<HeartbeatStep>(m);
    check_clock(step);
    const std::string bad = step_problem(static_cast<double>(step.end_ns - step.start_ns) * 1e-9);
    if (!bad.empty()) fail("reported " + bad + ": \"" + escaped_line(line, 80) + "\"");
    if (step.work && !(*step.work >= 0.0 && *step.work <= kMaxStepWork))
      fail("reported work " + std::to_string(static_cast<long double>(*step.work)).substr(0, 40) + " for one step (at most 1e15): \"" + escaped_line(line, 80) + "\"");
    last_end_ns_ = step.end_ns;
    out.reported_time = SampleOutput::ReportedTime{step.start_ns, step.end_ns};
    if (step.work) out.counters[spec_.work_unit.empty() ? "work" : spec_.work_unit] = *step.work;
  }

  void end_block() override {
    if (paused_) return;
    if (!server_->send("pause")) fail("closed the heartbeat connection");
    const std::int64_t deadline = open_loop_now_ns() + ns(spec_.step_timeout_s);
    for (;;) {  // the step in flight is reported first: not this block's any more
      std::string line;
      if (!next_message(line, deadline, "while pausing"))
        fail("did not answer \"pause\" within step_timeout_s " + secs(spec_.step_timeout_s));
      const auto m = parsed(line);
      if (std::holds_alternative<HeartbeatPaused>(m)) break;
      if (!std::holds_alternative<HeartbeatStep>(m)) fail("sent \"" + escaped_line(line, 60) + "\" while pausing");
      last_end_ns_ = std::get<HeartbeatStep>(m).end_ns;
    }
    paused_ = true;
  }

  void teardown() override {
    server_->close_connection();  // the client ends on end of file; SIGTERM follows
    end_program();
  }

 private:
  // The next line before `deadline`; false on timeout. Fails when the program ended or closed the
  // connection, or sent an overlong line.
  bool next_message(std::string& line, std::int64_t deadline, const char* when) {
    for (;;) {
      const std::int64_t wait_ns = std::min<std::int64_t>(deadline - open_loop_now_ns(), 100'000'000);  // 100 ms ticks
      const int left = static_cast<int>(std::max<std::int64_t>(0, wait_ns) / 1000000);
      switch (server_->next_line(line, left)) {
        case HeartbeatServer::Read::line: return true;
        case HeartbeatServer::Read::overlong: fail("sent a heartbeat line longer than 256 bytes");
        case HeartbeatServer::Read::closed: {
          const ProgramExit e = proc_->wait_exit(1.0);
          fail(std::string("closed the heartbeat connection ") + when + (e.exited ? " (" + e.describe + ")" : " but runs on"));
        }
        case HeartbeatServer::Read::timeout:
          fail_if_exited(when);
          if (open_loop_now_ns() >= deadline) return false;
      }
    }
  }

  HeartbeatLine parsed(const std::string& line) const {
    std::string error;
    const auto m = parse_heartbeat_line(line, error);
    if (!m) fail("sent a malformed heartbeat line \"" + escaped_line(line, 60) + "\": " + error);
    return *m;
  }

  // Steps are on CLOCK_MONOTONIC, after the program started, in order, and not in the future.
  void check_clock(const HeartbeatStep& s) const {
    if (s.start_ns < last_end_ns_)
      fail("reported a step starting at " + std::to_string(s.start_ns) + " ns, before the previous one ended (" +
           std::to_string(last_end_ns_) + " ns): steps must not overlap");
    if (s.start_ns < started_ns_ || s.end_ns > open_loop_now_ns() + 1'000'000 || s.end_ns < last_end_ns_)
      fail("reported a step at " + std::to_string(s.end_ns) + " ns, not on CLOCK_MONOTONIC since its start (" +
           std::to_string(started_ns_) + " ns) and in order: use time.monotonic_ns() / clock_gettime(CLOCK_MONOTONIC)");
  }

  std::unique_ptr<HeartbeatServer> server_;
  bool paused_ = false;
  std::int64_t started_ns_ = 0;
  std::int64_t last_end_ns_ = 0;
};

// Steps (or intervals, metric interval_s) read from the program's output by a regular expression; between
// blocks its group is stopped.
class StdoutCommand final : public CommandBase {
 public:
  StdoutCommand(CommandSpec spec, StepPattern pattern)
      : CommandBase(std::move(spec)), pattern_(std::move(pattern)), lines_(spec_.interval_s) {}
  // The program (and its output thread, which calls on_line) goes before the members on_line uses.
  ~StdoutCommand() override { proc_.reset(); }

  void setup(const ExecContext&) override {
    proc_ = std::make_unique<CommandProcess>(spec_.argv, spec_.cwd, spec_.env, STDOUT_FILENO,
                                             [this](const std::string& line, std::int64_t at) { on_line(line, at); },
                                             /*release_cpus=*/true, ledger_);
    // Ready once the first matching line shows (a step stays queued: the warm-up's first sample; an interval
    // line opens the first interval).
    wait_for([this] { return matched_; }, spec_.ready_timeout_s, "before its first matching line",
             "printed no line matching metric.stdout within ready_timeout_s " + secs(spec_.ready_timeout_s));
  }

  void begin_block(std::int64_t) override {
    if (!paused_) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      samples_.clear();  // what it printed before the stop belongs to no block
      lines_.resumed();  // and the interval its next line reports straddles the stop
    }
    proc_->resume();
    paused_ = false;
  }

  void run_sample(const ExecContext&, SampleOutput& out) override {
    wait_for([this] { return !samples_.empty(); }, spec_.step_timeout_s, "during a step",
             "printed no matching line for step_timeout_s " + secs(spec_.step_timeout_s) + " (hung?)");
    std::lock_guard<std::mutex> lock(mutex_);
    const LineSample s = samples_.front();
    samples_.pop_front();
    out.reported_time = SampleOutput::ReportedTime{s.start_ns, s.end_ns};
    if (s.work) out.counters[kSampleWorkCounter] = *s.work;
    if (s.lines_in_burst > 0) out.counters[kLinesInBurstCounter] = s.lines_in_burst;
  }

  void end_block() override {
    proc_->pause();
    paused_ = true;
  }

  std::size_t lines_given_up() const override { return pattern_.lines_given_up(); }

  void teardown() override {
    if (const std::size_t n = pattern_.lines_given_up())  // on the worker's log, and in the results (GaveUpMessage)
      std::fprintf(stderr, "interference-bench worker: %zu line(s) of the program's output cost the step pattern more "
                   "than its match limit (%u backtracking steps) and were not read as steps: simplify the pattern\n",
                   n, static_cast<unsigned>(StepPattern::kMatchLimit));
    end_program();
  }

 private:
  // Waits (100 ms ticks) until `ready` holds under the lock; fails on a bad line, when the program ended
  // (`when` says while doing what) or after `timeout_s` (with `too_long`).
  template <class Ready>
  void wait_for(Ready ready, double timeout_s, const char* when, const std::string& too_long) {
    const std::int64_t deadline = open_loop_now_ns() + ns(timeout_s);
    std::unique_lock<std::mutex> lock(mutex_);
    while (!ready()) {
      if (!bad_line_.empty()) {
        const std::string why = bad_line_;
        lock.unlock();
        fail(why);
      }
      cv_.wait_for(lock, std::chrono::milliseconds(100));
      if (ready()) break;
      lock.unlock();
      fail_if_exited(when);
      if (open_loop_now_ns() > deadline) fail(too_long);
      lock.lock();
    }
  }

  void on_line(const std::string& line, std::int64_t at) {
    const auto v = pattern_.match(line);
    if (!v) return;
    std::lock_guard<std::mutex> lock(mutex_);
    matched_ = true;
    const std::string bad = spec_.interval_s ? "" : step_problem(v->duration_s());
    if (!bad.empty()) {
      if (bad_line_.empty()) bad_line_ = "printed " + bad + ": \"" + escaped_line(line, 80) + "\"";
      cv_.notify_one();
      return;
    }
    const auto s = lines_.line(*v, at);
    if (s && s->work && *s->work > kMaxStepWork) {
      if (bad_line_.empty()) bad_line_ = "printed work of more than 1e15 in one interval: \"" + escaped_line(line, 80) + "\"";
      cv_.notify_one();
      return;
    }
    if (!s) return;
    if (samples_.size() >= kMaxQueued) samples_.pop_front();  // bounded; the consumer keeps up at 10 kHz
    samples_.push_back(*s);
    cv_.notify_one();
  }

  static constexpr std::size_t kMaxQueued = 1u << 20;
  StepPattern pattern_;
  std::mutex mutex_;
  std::condition_variable cv_;
  LineSamples lines_;  // under mutex_
  std::deque<LineSample> samples_;
  bool matched_ = false;  // a line has matched (set-up's readiness)
  std::string bad_line_;  // the first step outside the bounds (step_problem), failing the next sample
  bool paused_ = false;
};

// One whole run of the program is one sample; `prepare` runs untimed before each, `cleanup` once.
class WallCommand final : public CommandBase {
 public:
  using CommandBase::CommandBase;

  void setup(const ExecContext&) override {}

  void run_sample(const ExecContext&, SampleOutput& out) override {
    if (!spec_.prepare.empty()) run_hook(spec_.prepare, "prepare");
    const std::int64_t t0 = open_loop_now_ns();
    proc_ = std::make_unique<CommandProcess>(spec_.argv, spec_.cwd, spec_.env, STDOUT_FILENO, CommandProcess::LineSink{},
                                             /*release_cpus=*/false, ledger_);
    const ProgramExit e = proc_->wait_exit(spec_.step_timeout_s);
    const std::int64_t t1 = open_loop_now_ns();
    if (!e.exited) fail("did not finish within step_timeout_s " + secs(spec_.step_timeout_s) + " (hung?)");
    if (e.code != 0) fail("failed (" + e.describe + ")");
    proc_.reset();  // what it left in its group goes with it
    out.reported_time = SampleOutput::ReportedTime{t0, t1};
  }

  void teardown() override {
    proc_.reset();
    if (!spec_.cleanup.empty()) run_hook(spec_.cleanup, "cleanup");
  }

 private:
  void run_hook(const std::vector<std::string>& argv, const char* what) {
    CommandProcess hook(argv, spec_.cwd, spec_.env, STDOUT_FILENO, CommandProcess::LineSink{}, false, ledger_);
    const ProgramExit e = hook.wait_exit(spec_.step_timeout_s);
    if (!e.exited || e.code != 0)
      throw WorkloadError(std::string(what) + " \"" + argv[0] + "\" " +
                          (e.exited ? "failed (" + e.describe + ")" : "did not finish within step_timeout_s") +
                          hook.tail_text());
  }
};

std::unique_ptr<Workload> make_command(const Params& params) {
  CommandSpec spec = command_from_params(params);
  switch (spec.metric) {
    case CommandMetric::heartbeat: return std::make_unique<HeartbeatCommand>(std::move(spec));
    case CommandMetric::wall: return std::make_unique<WallCommand>(std::move(spec));
    case CommandMetric::stdout_match: {
      std::string error;
      auto pattern = StepPattern::compile(spec.pattern, error);
      if (!pattern) throw WorkloadError("metric.stdout: " + error);
      return std::make_unique<StdoutCommand>(std::move(spec), std::move(*pattern));
    }
  }
  throw WorkloadError("unknown metric");
}

}  // namespace

void register_command_workload(Registry& registry) {
  WorkloadSpec spec;
  spec.name = "command";
  spec.backend = Backend::host;
  spec.any_backend = true;
  spec.description =
      "a user's program as a tenant (scenario key \"command\": argv, metric heartbeat | {stdout: REGEX} | wall)";
  spec.supported = [](const Params&, const ExecContext&) { return Support{}; };
  spec.create = make_command;
  spec.validate = validate_command;
  registry.add(std::move(spec));
}

}  // namespace ib
