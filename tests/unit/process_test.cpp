// Real processes (harness/process, the ProcessLauncher of harness/run/launcher.h): a worker leads its
// own process group, and nothing it starts survives it, whether it is killed or exits by itself; the
// helper-command runner. The "workers" here are /bin/sh scripts that put a child in the background
// and report its pid on fd 3. That child holds fd 3 open, so the report pipe ends exactly when it is
// gone: the tests wait for that end of file (bounded), not for a time.
#include "harness/process/process.h"
#include "harness/run/launcher.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace ib {
namespace {

constexpr int kWaitMs = 100;
constexpr int kMaxWaits = 300;  // 30 s: a SIGKILLed process is gone long before

struct ShellWorker {
  ProcessLauncher launcher;
  SystemClock clock;
  std::unique_ptr<WorkerChannel> channel;
  std::vector<std::string> lines;
  ReadStatus status = ReadStatus::open;
  pid_t child = -1;

  explicit ShellWorker(const std::string& script) {
    channel = launcher.start(SpawnSpec{"/bin/sh", {"-c", script}, {}, "", {}});
  }
  ~ShellWorker() {
    if (child > 0 && ::kill(child, 0) == 0) ::kill(child, SIGKILL);  // a failed test leaves nothing behind
  }
  // Reads reports until `n` lines came or the pipe ended.
  void read_until(std::size_t n) {
    for (int i = 0; i < kMaxWaits && status == ReadStatus::open && lines.size() < n; ++i) {
      std::vector<char> readable;
      clock.wait({channel.get()}, kWaitMs, readable);
      if (readable[0]) status = channel->read_reports(lines);
    }
  }
  std::optional<ExitStatus> wait_exit() {
    for (int i = 0; i < kMaxWaits; ++i) {
      if (auto st = channel->poll_exit()) return st;
      std::vector<char> readable;
      clock.wait({}, kWaitMs, readable);
    }
    return std::nullopt;
  }
};

// The script reports its background child's pid, then (unless `exits`) waits for ever.
std::string script(bool exits) { return std::string("sleep 600 & echo $! >&3; ") + (exits ? "exit 0" : "exec sleep 600"); }

TEST(ProcessLauncher, AKilledWorkerTakesWhatItStartedWithIt) {
  ShellWorker w(script(false));
  w.read_until(1);
  ASSERT_EQ(w.lines.size(), 1u);
  w.child = std::stoi(w.lines[0]);
  const pid_t pid = w.channel->pid();
  EXPECT_EQ(getpgid(pid), pid) << "the worker leads its own process group";
  EXPECT_EQ(getpgid(w.child), pid) << "and what it starts is in it";
  w.channel->kill();
  const auto st = w.wait_exit();
  ASSERT_TRUE(st);
  EXPECT_EQ(st->signal, SIGKILL);
  w.read_until(2);  // end of file once the child, which holds the pipe, is gone too
  EXPECT_EQ(w.status, ReadStatus::closed) << "the worker's child outlived it";
  EXPECT_EQ(w.lines.size(), 1u);
}

TEST(ProcessLauncher, AWorkerThatExitsLeavesNothingBehind) {
  ShellWorker w(script(true));
  w.read_until(1);
  ASSERT_EQ(w.lines.size(), 1u);
  w.child = std::stoi(w.lines[0]);
  const auto st = w.wait_exit();  // reaping it kills what is left in its group
  ASSERT_TRUE(st);
  EXPECT_EQ(st->exit_code, 0);
  w.read_until(2);
  EXPECT_EQ(w.status, ReadStatus::closed) << "the worker's child outlived it";
}

TEST(ProcessLauncher, ALastReportWithoutANewlineIsRead) {
  ShellWorker w("printf '{\"a\":1}\\n{\"b\":2}' >&3");
  w.read_until(3);
  EXPECT_EQ(w.status, ReadStatus::closed);
  EXPECT_EQ(w.lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
  EXPECT_EQ(w.wait_exit()->exit_code, 0);
}

TEST(ProcessLauncher, ControlLinesReachTheWorker) {
  ShellWorker w("read line; echo \"got $line\" >&3; read rest || echo eof >&3");
  ASSERT_TRUE(w.channel->send("go 0 1 0\n"));
  w.channel->close_control();
  w.read_until(2);
  EXPECT_EQ(w.lines, (std::vector<std::string>{"got go 0 1 0", "eof"}));
  EXPECT_EQ(w.wait_exit()->exit_code, 0);
  EXPECT_FALSE(w.channel->send("end\n")) << "no control pipe left";
}

TEST(ProcessLauncher, AnExeThatCannotStartThrows) {
  ProcessLauncher launcher;
  EXPECT_THROW(launcher.start(SpawnSpec{"/nonexistent/worker", {}, {}, "", {}}), std::runtime_error);
}

TEST(HelperCommand, CapturesOutputFeedsInputAndReportsTheExit) {
  const CommandResult r = run_helper_command({"sh", "-c", "echo out; cat; echo err >&2; exit 3"}, {"IB_X=1"}, "in\n", 30.0);
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.status.exit_code, 3);
  EXPECT_EQ(r.output, "out\nin\nerr\n");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(run_helper_command({"sh", "-c", "printf %s \"$IB_X\""}, {"IB_X=set"}, "", 30.0).output, "set");
}

TEST(HelperCommand, NotOnPathIsNotStarted) {
  const CommandResult r = run_helper_command({"interference-bench-no-such-helper"}, {}, "", 1.0);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.output, "interference-bench-no-such-helper: not found on PATH");
}

TEST(HelperCommand, OneThatOutlivesItsTimeoutIsKilled) {
  const CommandResult r = run_helper_command({"sleep", "600"}, {}, "", 0.2);
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.status.signal, SIGKILL);
}

}  // namespace
}  // namespace ib
