// The command tenant's parts (kernels/command): the command object's checks, the stdout metric's
// pattern, the heartbeat protocol (parser, server, the shipped C++ client), the program's process
// group and its keeper, the wall metric.
#include "clients/cpp/interference_bench_heartbeat.h"
#include "harness/exec/executor.h"
#include "kernels/command/command_process.h"
#include "kernels/command/command_spec.h"
#include "kernels/command/command_workload.h"
#include "kernels/command/heartbeat.h"
#include "kernels/command/line_samples.h"
#include "kernels/command/step_pattern.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

namespace ib {
namespace {

using nlohmann::json;

std::string command_error(const json& given) {
  std::string error;
  EXPECT_FALSE(validate_command(given, error).has_value()) << given.dump();
  return error;
}

TEST(CommandSpecTest, FillsEveryDefaultAndReadsBackTheSame) {
  std::string error;
  const auto p = validate_command({{"argv", {"python3", "train.py"}}}, error);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ((*p)["metric"], "heartbeat");
  EXPECT_EQ((*p)["ready_timeout_s"], 60.0);
  EXPECT_EQ((*p)["step_timeout_s"], 30.0);
  EXPECT_EQ((*p)["stop_timeout_s"], 2.0);
  EXPECT_EQ((*p)["step_unit"], "step");
  EXPECT_TRUE((*p)["run_length_h"].is_null());
  // The worker validates the normalised params again: they must pass unchanged.
  const auto again = validate_command(*p, error);
  ASSERT_TRUE(again) << error;
  EXPECT_EQ(*again, *p);
  const CommandSpec c = command_from_params(*p);
  EXPECT_EQ(c.argv, (std::vector<std::string>{"python3", "train.py"}));
  EXPECT_EQ(c.metric, CommandMetric::heartbeat);
  EXPECT_FALSE(c.run_length_h.has_value());
}

TEST(CommandSpecTest, ParsesTheStdoutMetricAndTheAdviceInputs) {
  std::string error;
  const auto p = validate_command({{"argv", {"srv"}},
                                   {"metric", {{"stdout", "(?P<rate>[0-9.]+) tokens/s"}}},
                                   {"run_length_h", 12},
                                   {"interruptible", false},
                                   {"price_per_hour", {{"exclusive", 4.0}, {"shared", 1.5}}}},
                                  error);
  ASSERT_TRUE(p) << error;
  const CommandSpec c = command_from_params(*p);
  EXPECT_EQ(c.metric, CommandMetric::stdout_match);
  EXPECT_EQ(c.pattern, "(?P<rate>[0-9.]+) tokens/s");
  EXPECT_EQ(c.run_length_h, 12.0);
  EXPECT_EQ(c.interruptible, false);
}

TEST(CommandSpecTest, RefusesWhatCannotRunWithTheKeyThatIsWrong) {
  EXPECT_EQ(command_error(json::object()), "argv: required (the program and its arguments)");
  EXPECT_EQ(command_error(json::array()).rfind(": expected an object", 0), 0u);
  EXPECT_NE(command_error({{"argv", json::array()}}).find("argv: expected a non-empty list"), std::string::npos);
  EXPECT_NE(command_error({{"argv", "python3 train.py"}}).find("argv: expected a non-empty list of strings"),
            std::string::npos);
  EXPECT_EQ(command_error({{"argv", {"a", 3}}}), "argv[1]: expected a string, got 3");
  EXPECT_EQ(command_error({{"argv", {""}}}), "argv[0]: expected a program name, got \"\"");
  EXPECT_NE(command_error({{"argv", {"a"}}, {"shell", true}}).find("shell: unknown key of a command"), std::string::npos);
  EXPECT_NE(command_error({{"argv", {"a"}}, {"metric", "tokens"}}).find("metric: expected \"heartbeat\""),
            std::string::npos);
  EXPECT_NE(command_error({{"argv", {"a"}}, {"metric", {{"stdout", "(?P<ms>[0-9"}}}}).find("metric.stdout: not a valid"),
            std::string::npos);
  EXPECT_NE(command_error({{"argv", {"a"}}, {"metric", {{"stdout", "([0-9]+) ms"}}}}).find("expected a named group"),
            std::string::npos);
  EXPECT_NE(command_error({{"argv", {"a"}}, {"metric", {{"stdout", "(?P<total>[0-9]+)|(?P<s>[0-9]+)s"}, {"interval_s", 1}}}})
                .find("a total (a running count of work) cannot be an alternative"),
            std::string::npos);
  EXPECT_EQ(command_error({{"argv", {"a"}}, {"metric", {{"stdout", "(?P<total>[0-9]+)"}}}}),
            "metric.interval_s: required with a total (the seconds between two of its lines): a running count is read per "
            "interval, the work of one is the difference of two totals");
  EXPECT_EQ(command_error({{"argv", {"a"}}, {"metric", {{"stdout", "(?P<rate>[0-9]+)"}, {"interval_s", 0}}}}),
            "metric.interval_s: expected the seconds between two of its lines in [0.001, 3600], got 0");
  EXPECT_EQ(command_error({{"argv", {"a"}}, {"metric", {{"stdout", "(?P<rate>[0-9]+)"}, {"every", 1}}}}),
            "metric.every: unknown key (known: stdout, interval_s)");
  EXPECT_NE(command_error({{"argv", {"a"}}, {"metric", {{"stdout", "(?P<time>[0-9]+)"}}}}).find("\"time\"; expected one of s"),
            std::string::npos);
  EXPECT_NE(command_error({{"argv", {"a"}}, {"prepare", {"make"}}}).find("prepare: only with metric \"wall\""),
            std::string::npos);
  EXPECT_NE(command_error({{"argv", {"a"}}, {"metric", "wall"}, {"work_unit", "token"}}).find("work_unit: only with"),
            std::string::npos);
  EXPECT_NE(command_error({{"argv", {"a"}}, {"stop_timeout_s", 10}}).find("stop_timeout_s: expected a number of seconds"),
            std::string::npos);
  EXPECT_NE(command_error({{"argv", {"a"}}, {"env", {{"A=B", "x"}}}}).find("is not an environment variable name"),
            std::string::npos);
  EXPECT_NE(command_error({{"argv", {"a"}}, {"env", {{"A", 1}}}}).find("env.A: expected a string"), std::string::npos);
  EXPECT_NE(command_error({{"argv", {"a"}}, {"price_per_hour", {{"shared", 0}}}}).find("price_per_hour.shared"),
            std::string::npos);
  EXPECT_NE(command_error({{"argv", {"a"}}, {"interruptible", "no"}}).find("interruptible: expected true or false"),
            std::string::npos);
}

// Issue 37 item 11: (1+)+$ on a line of n 1s and an x backtracks about 2^n times. With 18 (~260 000 steps,
// within PCRE2's default limit of 10 million, so without our limit it would run to "no match") the
// match limit gives up on the line and counts it; 30 (~10^9 steps: minutes unbounded) gives up at once.
TEST(StepPatternTest, ACatastrophicPatternGivesUpOnALineAndCountsIt) {
  std::string error;
  const auto p = StepPattern::compile("(?P<ms>(1+)+)$", error);
  ASSERT_TRUE(p) << error;
  EXPECT_FALSE(p->match(std::string(18, '1') + "x"));
  EXPECT_EQ(p->lines_given_up(), 1u);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(p->match(std::string(30, '1') + "x"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(p->lines_given_up(), 2u);
  EXPECT_TRUE(p->match("step 111"));  // an ordinary line still reads (111 ms)
  EXPECT_FALSE(p->match("no ones here"));  // no match is not giving up
  EXPECT_EQ(p->lines_given_up(), 2u);
}

TEST(StepPatternTest, ConvertsEachUnitToSecondsOrARate) {
  std::string error;
  const auto ms = StepPattern::compile("took (?P<ms>[0-9.]+) ms", error);
  ASSERT_TRUE(ms) << error;
  const auto v = ms->match("step 12 took 12.5 ms");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->kind, StepValueKind::seconds);
  EXPECT_DOUBLE_EQ(v->duration_s(), 0.0125);
  EXPECT_FALSE(ms->match("step 13 starting"));
  const auto us = StepPattern::compile("(?P<us>\\d+)us", error);
  ASSERT_TRUE(us);
  EXPECT_DOUBLE_EQ(us->match("lat 250us")->duration_s(), 250e-6);
  // tqdm's progress bar: a rate in steps per second; one step lasts its inverse.
  const auto rate = StepPattern::compile("(?P<rate>[0-9.]+)it/s", error);
  ASSERT_TRUE(rate);
  const auto r = rate->match(" 42%|####      | 21/50 [00:01<00:01, 20.00it/s]");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, StepValueKind::rate);
  EXPECT_DOUBLE_EQ(r->duration_s(), 0.05);
  EXPECT_FALSE(rate->match("  0%|          | 0/50 [00:00<?, 0.00it/s]"));  // no step yet
  const auto s = StepPattern::compile("(?P<s>\\S+) s/step", error);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->match("nan s/step"));
  EXPECT_FALSE(s->match("1e999 s/step"));
  EXPECT_DOUBLE_EQ(s->match("0.25 s/step")->duration_s(), 0.25);
}

// Issue 37 item 13 (surviving mutants "end < start" -> "<=", "work < 0" -> "<= 0"): the line's syntax takes
// a step that ends as it starts and a work of 0 (a step with no work); the workload then refuses a step
// under 1 ns (command_workload.cpp, step_problem), so the line's rule and the step's rule stay distinct.
TEST(HeartbeatLineTest, EachBoundaryOfAStepLineIsDecided) {
  std::string error;
  EXPECT_TRUE(parse_heartbeat_line("step 100 100", error)) << error;
  EXPECT_FALSE(parse_heartbeat_line("step 100 99", error));
  const auto zero = parse_heartbeat_line("step 100 200 0", error);
  ASSERT_TRUE(zero) << error;
  EXPECT_EQ(std::get<HeartbeatStep>(*zero).work, 0.0);
  EXPECT_FALSE(parse_heartbeat_line("step 100 200 -0.001", error));
}

TEST(HeartbeatLineTest, ParsesTheThreeClientLinesAndNamesWhatIsWrong) {
  std::string error;
  auto m = parse_heartbeat_line("hello 1", error);
  ASSERT_TRUE(m && std::holds_alternative<HeartbeatHello>(*m));
  m = parse_heartbeat_line("step 100 250", error);
  ASSERT_TRUE(m && std::holds_alternative<HeartbeatStep>(*m));
  EXPECT_EQ(std::get<HeartbeatStep>(*m).start_ns, 100);
  EXPECT_EQ(std::get<HeartbeatStep>(*m).end_ns, 250);
  EXPECT_FALSE(std::get<HeartbeatStep>(*m).work.has_value());
  m = parse_heartbeat_line("step 100 250 512.5", error);
  ASSERT_TRUE(m);
  EXPECT_EQ(std::get<HeartbeatStep>(*m).work, 512.5);
  m = parse_heartbeat_line("paused", error);
  ASSERT_TRUE(m && std::holds_alternative<HeartbeatPaused>(*m));
  EXPECT_FALSE(parse_heartbeat_line("hello 2", error));
  EXPECT_NE(error.find("version"), std::string::npos);
  EXPECT_FALSE(parse_heartbeat_line("step 250 100", error));
  EXPECT_NE(error.find("ends before it starts"), std::string::npos);
  EXPECT_FALSE(parse_heartbeat_line("step -5 100", error));
  EXPECT_FALSE(parse_heartbeat_line("step 1.5 100", error));
  EXPECT_FALSE(parse_heartbeat_line("step 1 2 -3", error));
  EXPECT_FALSE(parse_heartbeat_line("step 1 2 nan", error));
  EXPECT_FALSE(parse_heartbeat_line("step 1 2 3 4", error));
  EXPECT_FALSE(parse_heartbeat_line("stop it", error));
  EXPECT_NE(error.find("not a heartbeat line"), std::string::npos);
}

// The server and the shipped C++ client in one process: hello, go, steps that join end to start,
// pause answered by paused, go again.
TEST(HeartbeatTest, TheCppClientSpeaksTheProtocolAndBlocksWhilePaused) {
  HeartbeatServer server;
  std::atomic<int> steps_done{0};
  std::atomic<bool> stop{false};
  std::thread client([&] {
    interference_bench::Heartbeat hb(server.address().c_str());
    for (int i = 0; !stop; ++i) {
      hb.step(i == 0 ? 7.0 : -1.0);
      ++steps_done;
    }
    hb.step();  // one step after the pause
    ++steps_done;
  });
  ASSERT_TRUE(server.accept_from(getpgrp(), 5000));
  std::string line;
  ASSERT_EQ(server.next_line(line, 5000), HeartbeatServer::Read::line);
  EXPECT_EQ(line, "hello 1");
  ASSERT_TRUE(server.send("go"));
  std::string error;
  std::int64_t last_end = 0;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(server.next_line(line, 5000), HeartbeatServer::Read::line);
    const auto m = parse_heartbeat_line(line, error);
    ASSERT_TRUE(m && std::holds_alternative<HeartbeatStep>(*m)) << line;
    const auto& s = std::get<HeartbeatStep>(*m);
    if (i == 0) EXPECT_EQ(s.work, 7.0);
    if (i > 0) EXPECT_EQ(s.start_ns, last_end);  // contiguous: no step lost between two heartbeats
    last_end = s.end_ns;
  }
  ASSERT_TRUE(server.send("pause"));
  // The steps in flight (the client runs on while the server reads), then "paused".
  while (server.next_line(line, 5000) == HeartbeatServer::Read::line && line != "paused") {
    const auto m = parse_heartbeat_line(line, error);
    ASSERT_TRUE(m && std::holds_alternative<HeartbeatStep>(*m)) << line;
    EXPECT_EQ(std::get<HeartbeatStep>(*m).start_ns, last_end);
    last_end = std::get<HeartbeatStep>(*m).end_ns;
  }
  ASSERT_EQ(line, "paused");
  const int at_pause = steps_done.load();
  // Paused: no step comes until "go".
  EXPECT_EQ(server.next_line(line, 200), HeartbeatServer::Read::timeout);
  EXPECT_EQ(steps_done.load(), at_pause);
  stop = true;
  ASSERT_TRUE(server.send("go"));
  client.join();
  EXPECT_EQ(steps_done.load(), at_pause + 2);  // the step that was paused, and one more
  ASSERT_EQ(server.next_line(line, 5000), HeartbeatServer::Read::line);
  const auto after = parse_heartbeat_line(line, error);
  ASSERT_TRUE(after && std::holds_alternative<HeartbeatStep>(*after)) << line;
  EXPECT_GT(std::get<HeartbeatStep>(*after).start_ns, last_end);  // the pause is no step's time
  EXPECT_EQ(server.next_line(line, 5000), HeartbeatServer::Read::closed);
}

// A process of another group cannot talk for the program.
TEST(HeartbeatTest, RefusesAConnectionFromOutsideTheProgramsGroup) {
  HeartbeatServer server;
  const pid_t stranger = fork();
  if (stranger == 0) {
    setpgid(0, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string name = server.address().substr(6);  // after "unix:@"
    std::memcpy(addr.sun_path + 1, name.data(), name.size());
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())) == 0) {
      const char hello[] = "hello 1\n";
      (void)!send(fd, hello, sizeof(hello) - 1, MSG_NOSIGNAL);
      char c;
      (void)!read(fd, &c, 1);  // until the harness closes it
    }
    _exit(0);
  }
  EXPECT_FALSE(server.accept_from(getpgrp(), 1000));
  int status = 0;
  // It ends because the server closed its connection (a read that returns, not a hang).
  EXPECT_EQ(waitpid(stranger, &status, 0), stranger);
  EXPECT_TRUE(WIFEXITED(status));
}

bool group_alive(pid_t pgid) { return kill(-pgid, 0) == 0; }

// Polls a condition (not a sleep standing in for synchronisation), at most `seconds`.
template <class F>
bool eventually(F f, double seconds = 10.0) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return f();
}

TEST(CommandProcessTest, KeepsTheTailAndEndsOnSigterm) {
  pid_t pgid = -1;
  {
    CommandProcess p({"/bin/sh", "-c", "echo one; echo two >&2; printf 'three\\r'; exec sleep 30"}, "", {}, -1);
    pgid = p.pid();
    ASSERT_TRUE(eventually([&] { return p.tail().size() == 3; }));
    EXPECT_EQ(p.tail(), (std::vector<std::string>{"one", "two", "three"}));
    EXPECT_EQ(p.tail_text(), "; last output: | one | two | three");
    EXPECT_FALSE(p.poll_exit().exited);
    EXPECT_TRUE(p.terminate(2.0));
    EXPECT_TRUE(p.poll_exit().exited);
    EXPECT_EQ(p.poll_exit().code, 128 + SIGTERM);
  }
  EXPECT_FALSE(group_alive(pgid));
}

TEST(CommandProcessTest, AProgramThatIgnoresSigtermIsKilledWithItsChildren) {
  // The shell ignores TERM and so does the child it starts (SIG_IGN is inherited across exec).
  CommandProcess p({"/bin/sh", "-c", "trap '' TERM; echo ignoring; sleep 30 & sleep 30; wait"}, "", {}, -1);
  const pid_t pgid = p.pid();
  // Only once the trap is set: a TERM sent before it would end the shell (CI once saw that race).
  ASSERT_TRUE(eventually([&] { return p.tail().size() == 1; }));
  EXPECT_FALSE(p.terminate(0.3));
  EXPECT_TRUE(eventually([&] { return p.poll_exit().exited; }));
  EXPECT_TRUE(eventually([&] { return !group_alive(pgid) || p.poll_exit().exited; }));
}

TEST(CommandProcessTest, NamesAProgramThatCannotStart) {
  try {
    CommandProcess p({"no-such-program-ib"}, "", {}, -1);
    FAIL() << "started";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start \"no-such-program-ib\""), std::string::npos) << e.what();
  }
  try {
    CommandProcess p({"/bin/true"}, "/no/such/folder", {}, -1);
    FAIL() << "started";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("in /no/such/folder"), std::string::npos) << e.what();
  }
}

// The worker that started a program is SIGKILLed (the harness's watchdog, a crash): its keeper
// kills the program's group.
TEST(CommandProcessTest, TheKeeperKillsTheGroupWhenItsWorkerDies) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t worker = fork();
  if (worker == 0) {
    close(fds[0]);
    CommandProcess p({"/bin/sh", "-c", "sleep 30 & exec sleep 30"}, "", {}, -1);
    const pid_t pgid = p.pid();
    (void)!write(fds[1], &pgid, sizeof(pgid));
    pause();
    _exit(0);
  }
  close(fds[1]);
  pid_t pgid = -1;
  ASSERT_EQ(read(fds[0], &pgid, sizeof(pgid)), static_cast<ssize_t>(sizeof(pgid)));
  close(fds[0]);
  EXPECT_TRUE(group_alive(pgid));
  kill(worker, SIGKILL);
  waitpid(worker, nullptr, 0);
  EXPECT_TRUE(eventually([&] { return !group_alive(pgid); }));
}

std::unique_ptr<Workload> command(const json& given) {
  Registry r;
  register_command_workload(r);
  std::string error;
  const auto params = validate_params(*r.find("command"), given, error);
  EXPECT_TRUE(params) << error;
  return r.find("command")->create(*params);
}

TEST(CommandWorkloadTest, AWallSampleIsOneRunTimedByTheProgramsExit) {
  auto w = command({{"argv", {"/bin/sh", "-c", "sleep 0.05"}}, {"metric", "wall"}});
  w->setup({});
  SampleOutput out;
  w->run_sample({}, out);
  ASSERT_TRUE(out.reported_time);
  const double s = static_cast<double>(out.reported_time->end_ns - out.reported_time->start_ns) * 1e-9;
  EXPECT_GE(s, 0.05);
  EXPECT_LT(s, 5.0);
  EXPECT_EQ(w->work_per_sample().unit, "step");
  w->teardown();
}

TEST(CommandWorkloadTest, AFailingWallRunOrPrepareIsTheWorkloadsError) {
  auto w = command({{"argv", {"/bin/sh", "-c", "echo broken; exit 3"}}, {"metric", "wall"}});
  w->setup({});
  SampleOutput out;
  try {
    w->run_sample({}, out);
    FAIL() << "no error";
  } catch (const WorkloadError& e) {
    EXPECT_NE(std::string(e.what()).find("failed (exit code 3); last output: | broken"), std::string::npos) << e.what();
  }
  auto p = command({{"argv", {"/bin/true"}}, {"metric", "wall"}, {"prepare", {"/bin/false"}}});
  p->setup({});
  EXPECT_THROW(p->run_sample({}, out), WorkloadError);
}

TEST(CommandWorkloadTest, AWallCleanupRunsOnceAtTheEnd) {
  char dir[] = "/tmp/ib-cleanup-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string mark = std::string(dir) + "/cleaned";
  auto w = command({{"argv", {"/bin/true"}}, {"metric", "wall"}, {"cleanup", {"/bin/sh", "-c", "echo x >> " + mark}}});
  w->setup({});
  SampleOutput out;
  w->run_sample({}, out);
  w->run_sample({}, out);
  EXPECT_NE(access(mark.c_str(), F_OK), 0);  // not after each run
  w->teardown();
  FILE* f = std::fopen(mark.c_str(), "r");
  ASSERT_NE(f, nullptr);
  char buf[16] = {};
  EXPECT_EQ(std::fread(buf, 1, sizeof(buf), f), 2u);  // once: "x\n"
  std::fclose(f);
  std::remove(mark.c_str());
  rmdir(dir);
}

// The host executor takes a sample's time from the workload when it reports one.
TEST(CommandWorkloadTest, TheHostExecutorUsesAReportedTime) {
  struct Reported final : Workload {
    void setup(const ExecContext&) override {}
    void run_sample(const ExecContext&, SampleOutput& out) override {
      out.reported_time = SampleOutput::ReportedTime{1000, 1000 + 2'500'000};
    }
    Work work_per_sample() const override { return {1, "step"}; }
    void teardown() override {}
  } w;
  std::vector<TimedSample> got;
  int n = 0;
  make_host_executor()->run_samples(w, [&] { return n++ < 2; }, [&](TimedSample&& s) { got.push_back(std::move(s)); });
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].start_ns, 1000);
  EXPECT_DOUBLE_EQ(got[0].duration_s, 0.0025);
}

}  // namespace
}  // namespace ib

namespace ib {
namespace {

// Issue 37 item 7: a program's text never reaches a terminal raw: C0 and C1 controls escaped, the line cut.
TEST(EscapedLine, ControlsAreEscapedAndTheLineIsCut) {
  EXPECT_EQ(escaped_line("\x1b]0;pwned\x07 ok"), "\\x1b]0;pwned\\x07 ok");
  EXPECT_EQ(escaped_line("a\xc2\x9b" "31m"), "a\\u009b31m");  // CSI as a UTF-8 C1 control
  EXPECT_EQ(escaped_line("caf\xc3\xa9 \xc2\xa0"), "caf\xc3\xa9 \xc2\xa0");  // other UTF-8 kept
  EXPECT_EQ(escaped_line(std::string(300, 'x'), 10), std::string(10, 'x') + "...");
  EXPECT_EQ(escaped_line("tab\there\x7f"), "tab\\x09here\\x7f");
}

}  // namespace
}  // namespace ib

namespace ib {
namespace {

// Issue 48: the patterns docs/heartbeat.md gives for the formats users paste, each on its program's own output
// (captured, or printed from the program's own format string), with what one line reads as.
struct PastedFormat {
  const char* program;
  const char* pattern;
  const char* line;
  StepValueKind kind;
  double value;  // seconds, per second or a count
};

TEST(StepPatternTest, TheFormatsUsersPasteReadTheirProgramsOwnLines) {
  const char* tqdm = "(?P<rate>[0-9.]+)it/s|(?P<s>[0-9.]+)s/it";
  const PastedFormat formats[] = {
      // tqdm 4.64 (Debian's python3-tqdm), a fast loop and a slow one: both ways round with one pattern
      {"tqdm", tqdm, " 13%|\xe2\x96\x88\xe2\x96\x8e        | 4/30 [00:00<00:00, 63.21it/s]", StepValueKind::rate, 63.21},
      {"tqdm", tqdm, "100%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88| 3/3 [00:03<00:00,  1.20s/it]", StepValueKind::seconds, 1.2},
      {"tqdm (count)", "(?P<total>[0-9]+)/[0-9]+ \\[", " 13%|\xe2\x96\x88\xe2\x96\x8e        | 4/30 [00:00<00:00, 63.21it/s]",
       StepValueKind::total, 4},
      // sysbench 1.0.20 cpu --report-interval=1
      {"sysbench", "eps: (?P<rate>[0-9.]+)", "[ 2s ] thds: 1 eps: 1723.91 lat (ms,95%): 2.66", StepValueKind::rate, 1723.91},
      // vLLM's periodic stats line (vllm/v1/metrics/loggers.py's format)
      {"vLLM", "generation throughput: (?P<rate>[0-9.]+) tokens/s",
       "INFO 05-10 12:34:56 [loggers.py:116] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
       "53.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.1%, Prefix cache hit rate: 0.0%",
       StepValueKind::rate, 53.2},
      // Megatron-LM's training log line (per --log-interval iterations)
      {"Megatron-LM", "elapsed time per iteration \\(ms\\): (?P<ms>[0-9.]+)",
       " [2025-04-13 23:41:12] iteration       10/    1000 | consumed samples:          160 | elapsed time per iteration "
       "(ms): 1147.6 | learning rate: 0.000000E+00 | global batch size:    16 |",
       StepValueKind::seconds, 1.1476},
      // nanoGPT's train.py, one line per iteration
      {"nanoGPT", "time (?P<ms>[0-9.]+)ms", "iter 100: loss 2.3456, time 123.45ms, mfu 12.34%", StepValueKind::seconds, 0.12345},
      // pv 1.6.20 -n -b -i 0.1: the bytes copied so far
      {"pv", "^(?P<total>[0-9]+)$", "548667392", StepValueKind::total, 548667392},
      // mbw 1.2.2, one line per copy
      {"mbw", "Elapsed: (?P<s>[0-9.]+)", "2\tMethod: MEMCPY\tElapsed: 0.00250\tMiB: 20.00000\tCopy: 7984.032 MiB/s",
       StepValueKind::seconds, 0.0025},
  };
  for (const PastedFormat& f : formats) {
    std::string error;
    const auto p = StepPattern::compile(f.pattern, error);
    ASSERT_TRUE(p) << f.program << ": " << error;
    const auto v = p->match(f.line);
    ASSERT_TRUE(v) << f.program << ": " << f.line;
    EXPECT_EQ(v->kind, f.kind) << f.program;
    EXPECT_NEAR(v->value, f.value, 1e-9 * f.value) << f.program;
  }
  std::string error;
  // An idle engine's line reads 0.0 tokens/s: no throughput to judge, not a sample.
  EXPECT_FALSE(StepPattern::compile(formats[4].pattern, error)->match(
      "INFO Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs"));
  // Both ways round, the rate's inverse and the time's agree.
  const auto both = StepPattern::compile(tqdm, error);
  EXPECT_DOUBLE_EQ(both->match(formats[1].line)->rate_per_s(), 1.0 / 1.2);
  EXPECT_DOUBLE_EQ(both->match(formats[0].line)->duration_s(), 1.0 / 63.21);
  EXPECT_FALSE(both->reads_a_total());
  EXPECT_TRUE(StepPattern::compile("(?P<total>[0-9]+)", error)->reads_a_total());
}

// Lines that say their own interval (issue 48), copied from the programs' output (iperf3 3.12 and fio 3.33, Debian
// 12): iperf3's bounds ("1.00-1.50 sec"), fio's running total and running clock.
TEST(StepPatternTest, LinesThatSayTheirIntervalAreReadWithIt) {
  std::string error;
  // iperf3 -f m -i 0.5: the client's interval lines end with Retr and Cwnd; its summary (sender, receiver) does not.
  const auto iperf = StepPattern::compile(
      "(?P<start>[0-9.]+)-(?P<end>[0-9.]+) +sec +[0-9.]+ [KMG]?Bytes +(?P<rate>[0-9.]+) Mbits/sec +[0-9]+ +[0-9.]+ [KMG]?Bytes",
      error);
  ASSERT_TRUE(iperf) << error;
  EXPECT_TRUE(iperf->reads_the_interval());
  auto v = iperf->match("[  5]   0.50-1.00   sec   605 MBytes  10162 Mbits/sec    0   2.12 MBytes       ");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->kind, StepValueKind::rate);
  EXPECT_DOUBLE_EQ(v->value, 10162.0);
  ASSERT_TRUE(v->said);
  EXPECT_EQ(v->said->kind, SaidIntervalKind::length);
  EXPECT_DOUBLE_EQ(v->said->seconds, 0.5);
  EXPECT_FALSE(iperf->match("[  5]   0.00-2.00   sec  3.05 GBytes  13078 Mbits/sec    0             sender"));
  // The server's lines, and its closing fragment of no length: not an interval.
  const auto server = StepPattern::compile("(?P<start>[0-9.]+)-(?P<end>[0-9.]+) +sec .* (?P<rate>[0-9.]+) Gbits/sec *$", error);
  ASSERT_TRUE(server) << error;
  v = server->match("[  5]   1.00-2.00   sec  1.05 GBytes  9.03 Gbits/sec                  ");
  ASSERT_TRUE(v);
  EXPECT_DOUBLE_EQ(v->said->seconds, 1.0);
  EXPECT_DOUBLE_EQ(v->value, 9.03);
  EXPECT_FALSE(server->match("[  5]   2.00-2.00   sec  2.38 MBytes  8.11 Gbits/sec                  "));
  EXPECT_FALSE(server->match("[  5]   0.00-2.00   sec  2.37 GBytes  10.2 Gbits/sec                  receiver"));
  // fio --status-interval=1: the human line's "(4965MiB/1882msec)" (MiB until fio switches to GiB), and the terse
  // line's exact fields 47 (write KiB so far) and 50 (write runtime, ms).
  const auto fio = StepPattern::compile("\\((?P<total>[0-9]+)MiB/(?P<elapsed_ms>[0-9]+)msec\\)", error);
  ASSERT_TRUE(fio) << error;
  v = fio->match("  write: IOPS=2638, BW=2638MiB/s (2766MB/s)(4965MiB/1882msec); 0 zone resets");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->kind, StepValueKind::total);
  EXPECT_DOUBLE_EQ(v->value, 4965.0);
  EXPECT_EQ(v->said->kind, SaidIntervalKind::clock);
  EXPECT_DOUBLE_EQ(v->said->seconds, 1.882);
  const auto terse = StepPattern::compile("^3;(?:[^;]*;){45}(?P<total>[0-9]+);[0-9]+;[0-9]+;(?P<elapsed_ms>[0-9]+);", error);
  ASSERT_TRUE(terse) << error;
  v = terse->match(
      "3;fio-3.33;n;0;0;0;0;0;0;0;0;0.000000;0.000000;0;0;0.000000;0.000000;1.000000%=0;5.000000%=0;10.000000%=0;20.0"
      "00000%=0;30.000000%=0;40.000000%=0;50.000000%=0;60.000000%=0;70.000000%=0;80.000000%=0;90.000000%=0;95.000000%"
      "=0;99.000000%=0;99.500000%=0;99.900000%=0;99.950000%=0;99.990000%=0;0%=0;0%=0;0%=0;0;0;0.000000;0.000000;0;0;0"
      ".000000%;0.000000;0.000000;51866624;58474209;57824;887;0;0;0.000000;0.000000;0;7;0.069896;0.081665;1.000000%=0"
      ";5.000000%=0;10.000000%=0;20.000000%=0;30.000000%=0;40.000000%=0;50.000000%=0;60.000000%=0;70.000000%=0;80.000"
      "000%=0;90.000000%=0;95.000000%=0;99.000000%=0;99.500000%=0;99.900000%=1;99.950000%=1;99.990000%=2;0%=0;0%=0;0%"
      "=0;3;16104;15.446794;250.781344;56195072;56195072;96.102321%;56195072.000000;0.000000;40.135287%;0.450958%;105"
      ";0;8;100.0%;0.0%;0.0%;0.0%;0.0%;0.0%;0.0%;99.97%;0.03%;0.01%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0"
      ".00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%;0.00%");
  ASSERT_TRUE(v);
  EXPECT_DOUBLE_EQ(v->value, 51866624.0);
  EXPECT_DOUBLE_EQ(v->said->seconds, 0.887);
  // A line of `interval` seconds, and the ways a pattern cannot say it.
  v = StepPattern::compile("(?P<rate>[0-9.]+) req/s over (?P<interval>[0-9.]+) s", error)->match("812.5 req/s over 2.0 s");
  ASSERT_TRUE(v && v->said);
  EXPECT_DOUBLE_EQ(v->said->seconds, 2.0);
  EXPECT_FALSE(StepPattern::compile("(?P<rate>[0-9.]+) (?P<start>[0-9.]+)", error));
  EXPECT_NE(error.find("start and end go together"), std::string::npos) << error;
  EXPECT_FALSE(StepPattern::compile("(?P<rate>[0-9.]+) (?P<interval>[0-9.]+) (?P<elapsed>[0-9.]+)", error));
  EXPECT_NE(error.find("give one way of saying the interval"), std::string::npos) << error;
  EXPECT_FALSE(StepPattern::compile("(?P<start>[0-9.]+)-(?P<end>[0-9.]+)", error));
  EXPECT_NE(error.find("expected a group for the value"), std::string::npos) << error;
  EXPECT_FALSE(StepPattern::compile("(?P<rate>[0-9.]+)it/s", error)->reads_the_interval());
}

// A line that says its interval is timed by what it says, not by the arrivals: lines read in one burst are each an
// interval; the line after a stop only opens one; a clock gives the difference of two lines' clocks.
TEST(LineSamplesTest, ALineThatSaysItsIntervalIsTimedByIt) {
  LineSamples lines(/*interval_s=*/0.5);
  const auto said = [](double rate, double seconds) {
    return StepValue{StepValueKind::rate, rate, SaidInterval{SaidIntervalKind::length, seconds}};
  };
  EXPECT_FALSE(lines.line(said(100, 0.5), 1'000'000'000));  // the program's start: opens
  auto s = lines.line(said(100, 0.5), 1'700'000'000);  // arrived late: still half a second of 100 a second
  ASSERT_TRUE(s);
  EXPECT_EQ(s->end_ns, 1'700'000'000);
  EXPECT_EQ(s->start_ns, 1'200'000'000);
  EXPECT_DOUBLE_EQ(*s->work, 50.0);
  s = lines.line(said(80, 0.5), 1'700'000'000);  // in the same read: its own half second, after the one before
  ASSERT_TRUE(s);
  EXPECT_EQ(s->start_ns, 1'700'000'000);
  EXPECT_EQ(s->end_ns, 2'200'000'000);
  EXPECT_DOUBLE_EQ(*s->work, 40.0);
  EXPECT_EQ(s->lines_in_burst, 1);
  lines.resumed();
  EXPECT_FALSE(lines.line(said(5, 0.5), 3'000'000'000));  // straddles the stop
  EXPECT_TRUE(lines.line(said(100, 0.5), 3'500'000'000));
  // fio's running total (MiB) and clock (s): the work and the time are both differences.
  LineSamples clocked(/*interval_s=*/1.0);
  const auto fio = [](double mib, double clock_s) {
    return StepValue{StepValueKind::total, mib, SaidInterval{SaidIntervalKind::clock, clock_s}};
  };
  EXPECT_FALSE(clocked.line(fio(2198, 0.881), 1'000'000'000));
  s = clocked.line(fio(4965, 1.882), 2'100'000'000);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->end_ns - s->start_ns, 1'001'000'000);
  EXPECT_DOUBLE_EQ(*s->work, 2767.0);
  EXPECT_FALSE(clocked.line(fio(4965, 1.882), 2'200'000'000));  // the clock did not move: nothing to time
  EXPECT_FALSE(clocked.line(fio(10, 0.1), 3'000'000'000));     // it went back (a new job): a new interval
  s = clocked.line(fio(30, 0.6), 3'500'000'000);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(*s->work, 20.0);
  EXPECT_EQ(s->end_ns - s->start_ns, 500'000'000);
}

// What a program writes to a terminal may be coloured: the escape sequences go before matching.
TEST(StepPatternTest, ColourEscapesAreRemovedBeforeMatching) {
  std::string error;
  const auto p = StepPattern::compile("^loss [0-9.]+ took (?P<ms>[0-9.]+) ms$", error);
  ASSERT_TRUE(p) << error;
  const auto v = p->match("\x1b[1;32mloss 0.5\x1b[0m took \x1b[33m12.5\x1b[0m ms");
  ASSERT_TRUE(v);
  EXPECT_DOUBLE_EQ(v->duration_s(), 0.0125);
  EXPECT_EQ(without_escape_sequences("a\x1b[2Kb\x1b["), "ab\x1b[");  // an unfinished sequence stays
}

// An interval line (issue 48): the interval between two arrivals, its work rate x interval or the difference of
// two totals; the line after a stop (or the program's start) only opens an interval; a line read with the one
// before has no interval of its own.
TEST(LineSamplesTest, IntervalLinesAreTheTimeBetweenArrivalsWithTheWorkTheySay) {
  LineSamples lines(/*interval_s=*/0.2);
  const auto rate = [](double r) { return StepValue{StepValueKind::rate, r}; };
  EXPECT_FALSE(lines.line(rate(100), 1'000'000'000));  // opens
  auto s = lines.line(rate(50), 1'500'000'000);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->start_ns, 1'000'000'000);
  EXPECT_EQ(s->end_ns, 1'500'000'000);
  EXPECT_DOUBLE_EQ(*s->work, 25.0);
  EXPECT_EQ(s->lines_in_burst, 0);
  EXPECT_FALSE(lines.line(rate(60), 1'500'000'000));  // read with the line before: no interval
  s = lines.line(StepValue{StepValueKind::seconds, 0.025}, 2'000'000'000);  // 40 per second, as a time per unit
  ASSERT_TRUE(s);
  EXPECT_EQ(s->start_ns, 1'500'000'000);
  EXPECT_DOUBLE_EQ(*s->work, 20.0);
  EXPECT_EQ(s->lines_in_burst, 1);
  lines.resumed();  // a stop: sysbench's next line reports the interval that held it ("eps: 6.86")
  EXPECT_FALSE(lines.line(rate(6.86), 3'000'000'000));
  s = lines.line(rate(100), 4'000'000'000);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->start_ns, 3'000'000'000);
  EXPECT_DOUBLE_EQ(*s->work, 100.0);
}

TEST(LineSamplesTest, ARunningTotalGivesTheWorkBetweenTwoLines) {
  LineSamples lines(/*interval_s=*/100e-9);
  const auto total = [](double t) { return StepValue{StepValueKind::total, t}; };
  EXPECT_FALSE(lines.line(total(1000), 100));
  auto s = lines.line(total(1500), 200);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(*s->work, 500.0);
  EXPECT_FALSE(lines.line(total(1500), 300));  // nothing done: the interval stays open and the next spans both
  s = lines.line(total(2100), 400);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->start_ns, 200);
  EXPECT_DOUBLE_EQ(*s->work, 600.0);
  EXPECT_FALSE(lines.line(total(10), 500));  // the count started again: a new interval
  s = lines.line(total(30), 600);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->start_ns, 500);
  EXPECT_DOUBLE_EQ(*s->work, 20.0);
  // A line late by 40 ns and the next on time: the second interval (10 ns, under half of 100 ns) is too short to
  // time on its own, and the next spans both.
  s = lines.line(total(50), 740);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->end_ns, 740);
  EXPECT_FALSE(lines.line(total(60), 750));
  s = lines.line(total(100), 850);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->start_ns, 740);
  EXPECT_DOUBLE_EQ(*s->work, 50.0);
}

// A step line ends when it arrived and lasts what it says; in a burst it starts where the previous one ended and
// is counted as such.
TEST(LineSamplesTest, StepLinesEndAtTheirArrivalAndNeverOverlap) {
  LineSamples lines(std::nullopt);
  const auto ms = [](double v) { return StepValue{StepValueKind::seconds, v * 1e-3}; };
  auto s = lines.line(ms(10), 100'000'000);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->start_ns, 90'000'000);
  EXPECT_EQ(s->end_ns, 100'000'000);
  EXPECT_FALSE(s->work);
  s = lines.line(ms(10), 100'000'000);  // a burst: the second step starts where the first ended
  EXPECT_EQ(s->start_ns, 100'000'000);
  EXPECT_EQ(s->end_ns, 110'000'000);
  EXPECT_EQ(s->lines_in_burst, 1);
}

// Issue 48: a program that writes a line per step with printf and no flush used to reach us through a pipe, so its
// lines (under C stdio's 4 KiB buffer) all arrived at its exit, at one time. Through a terminal each is written
// when printed. The program writes its next line only once the test has its last one (a byte on its gate), so
// every line has an arrival time of its own however busy the machine is; a program whose lines stay in its
// buffer writes none until it exits (each wait then gives up after 2 s, and the arrivals are one).
TEST(CommandProcessTest, APrintfLoopsLinesArriveOneByOne) {
  char dir[] = "/tmp/ib-gate-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string gate = std::string(dir) + "/gate";
  ASSERT_EQ(mkfifo(gate.c_str(), 0600), 0);
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::int64_t> at;
  constexpr std::size_t kLines = 20;
  {
    CommandProcess p({IB_PRINTF_STEPS, std::to_string(kLines), "1000", gate}, "", {}, -1,
                     [&](const std::string&, std::int64_t t) {
                       std::lock_guard<std::mutex> lock(m);
                       at.push_back(t);
                       cv.notify_all();
                     });
    std::FILE* g = std::fopen(gate.c_str(), "wb");  // opens once the program has opened its end
    ASSERT_NE(g, nullptr);
    for (std::size_t k = 0; k < kLines; ++k) {
      std::fputc('.', g);
      std::fflush(g);
      std::unique_lock<std::mutex> lock(m);
      cv.wait_for(lock, std::chrono::seconds(2), [&] { return at.size() > k; });
    }
    std::fclose(g);
    EXPECT_TRUE(p.wait_exit(30.0).exited);
    ASSERT_TRUE(eventually([&] { return p.output_closed(); }));
  }
  unlink(gate.c_str());
  rmdir(dir);
  ASSERT_EQ(at.size(), kLines);
  EXPECT_EQ(std::set<std::int64_t>(at.begin(), at.end()).size(), kLines) << "lines arrived in bursts: the output is buffered";
  // The same program through a pipe (what it had before): its 100 lines (about 2 KB) in one burst at its exit.
  std::vector<std::int64_t> piped;
  CommandProcess q({"/bin/sh", "-c", std::string(IB_PRINTF_STEPS) + " 100 300000 | cat"}, "", {}, -1,
                   [&](const std::string&, std::int64_t t) {
                     std::lock_guard<std::mutex> lock(m);
                     piped.push_back(t);
                   });
  EXPECT_TRUE(q.wait_exit(60.0).exited);
  ASSERT_TRUE(eventually([&] { return q.output_closed(); }));
  std::lock_guard<std::mutex> lock(m);
  ASSERT_EQ(piped.size(), 100u);
  EXPECT_LE(std::set<std::int64_t>(piped.begin(), piped.end()).size(), 2u);
}

// The program writes to a terminal (stdout and stderr), its bytes unchanged ("\n" stays "\n"), with
// PYTHONUNBUFFERED=1 unless its env says otherwise.
TEST(CommandProcessTest, TheProgramWritesToATerminalWithPythonUnbuffered) {
  int log[2];
  ASSERT_EQ(pipe(log), 0);
  {
    CommandProcess p({"/bin/sh", "-c", "test -t 1 && test -t 2 && echo tty; echo \"[$PYTHONUNBUFFERED]\" >&2"}, "", {}, log[1]);
    EXPECT_TRUE(p.wait_exit(10.0).exited);
    ASSERT_TRUE(eventually([&] { return p.output_closed(); }));
    EXPECT_EQ(p.tail(), (std::vector<std::string>{"tty", "[1]"}));
  }
  close(log[1]);
  char buf[64] = {};
  EXPECT_EQ(read(log[0], buf, sizeof(buf) - 1), 8);
  EXPECT_STREQ(buf, "tty\n[1]\n");
  close(log[0]);
  CommandProcess q({"/bin/sh", "-c", "echo \"[$PYTHONUNBUFFERED]\""}, "", {{"PYTHONUNBUFFERED", ""}}, -1);
  EXPECT_TRUE(q.wait_exit(10.0).exited);
  ASSERT_TRUE(eventually([&] { return q.output_closed(); }));
  EXPECT_EQ(q.tail(), (std::vector<std::string>{"[]"}));
}

// The interval workload over a real program: each sample is the time between two of its lines with the work they
// say (sample_work), and no sample after a pause straddles it.
TEST(CommandWorkloadTest, AnIntervalSampleIsTheTimeBetweenTwoLinesWithItsWork) {
  auto w = command({{"argv", {"/bin/sh", "-c", "while :; do echo 'eps: 200.00'; sleep 0.01; done"}},
                    {"metric", {{"stdout", "eps: (?P<rate>[0-9.]+)"}, {"interval_s", 0.01}}},
                    {"step_unit", "event"}});
  w->setup({});
  w->begin_block(0);
  const auto sample = [&] {
    SampleOutput out;
    w->run_sample({}, out);
    return out;
  };
  for (int i = 0; i < 3; ++i) {
    const SampleOutput out = sample();
    ASSERT_TRUE(out.reported_time);
    const double seconds = static_cast<double>(out.reported_time->end_ns - out.reported_time->start_ns) * 1e-9;
    EXPECT_GT(seconds, 0.0);
    ASSERT_EQ(out.counters.count(kSampleWorkCounter), 1u);
    EXPECT_NEAR(out.counters.at(kSampleWorkCounter), 200.0 * seconds, 1e-6);
  }
  EXPECT_EQ(w->work_per_sample().unit, "event");
  w->end_block();
  const std::int64_t resumed = monotonic_ns();
  w->begin_block(resumed);
  for (int i = 0; i < 3; ++i) EXPECT_GE(sample().reported_time->start_ns, resumed);
  w->end_block();
  w->teardown();
}

}  // namespace
}  // namespace ib
