// The conductor's launcher across nodes (harness/nodes/remote_launcher.h, issue 49) against a node played by
// the test: a worker connecting back is refused in one line naming its peer unless it has the run's token
// (garbage and a stranger's token first), the clock re-measured with a deadline and its spread recorded, a
// killed worker's exit owed by its node within its deadline, and a stop signal ending the wait for a worker.
#include "harness/core/clock.h"
#include "harness/nodes/clock_link.h"
#include "harness/nodes/node_protocol.h"
#include "harness/nodes/remote_launcher.h"
#include "tests/unit/node_peers.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <thread>

namespace ib {
namespace {

using test::json_within;
using test::line_within;
using test::send_line;

class NoLocalWorkers final : public Launcher {
 public:
  std::unique_ptr<WorkerChannel> start(const SpawnSpec&) override { throw std::runtime_error("no node 0 worker here"); }
};

// The conductor's side: the launcher, its listening port, and the conductor's end of node 1's control
// connection (a socket pair: `node_end` is the node's, played by the test).
struct OneNode {
  NoLocalWorkers local;
  int port = 0;
  int listen_fd = -1;
  int node_end = -1;
  std::unique_ptr<NodesLauncher> launcher;

  explicit OneNode(double start_timeout_s = 5.0, StopDescriptor stop = {}) {
    listen_fd = test::listen_loopback(port);
    int pair[2] = {-1, -1};
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return;
    node_end = pair[1];
    JoinedNodeLink link{1, "fake", pair[0], {}, nlohmann::json::array()};
    link.offset.rtt_ns = 100'000;  // a LAN's: the re-measurement's deadline is its floor, 2 s
    launcher = std::make_unique<NodesLauncher>(local, "127.0.0.1", listen_fd, "tok", std::vector<JoinedNodeLink>{link},
                                               start_timeout_s, std::move(stop));
  }
  ~OneNode() {
    launcher.reset();  // says "end" to the node and closes its end
    ::close(node_end);
    ::close(listen_fd);
  }
  // Reads the node's control lines until "end" or its end of file (or 20 s): what a node that answers
  // nothing more does.
  void drain_until_end() const {
    while (const auto j = json_within(node_end, 20000))
      if (test::type_of(j) == "end") return;
  }
};

SpawnSpec on_node_1() {
  SpawnSpec s{"interference-bench", {"worker"}, {}, "/tmp/logs/w0.log", {}};
  s.node = 1;
  return s;
}

std::string worker_hello(const std::string& token, int id) {
  std::string l = worker_hello_line({token, 1, id});
  l.pop_back();
  return l;
}

// Each connection back that is not the worker being started is refused with a line it can read (valid JSON,
// however hostile its bytes), named on the conductor's side with its peer; only the worker with the run's
// token, its node and its id becomes the channel.
TEST(RemoteLauncher, AWorkerWithoutTheRunsTokenIsRefusedAndTheRightOneAccepted) {
  OneNode n;
  ASSERT_TRUE(n.launcher);
  std::string garbage_answer, stranger_answer;
  int worker = -1;
  std::thread node([&] {
    if (!json_within(n.node_end, 5000)) return;  // the start line
    const int garbage = test::connect_loopback(n.port);
    send_line(garbage, "\xff\xfe\x1b[31m binary");
    garbage_answer = line_within(garbage, 5000).value_or("");
    ::close(garbage);
    const int stranger = test::connect_loopback(n.port);
    send_line(stranger, worker_hello("another-run", 0));  // the right node and id, another run's token
    stranger_answer = line_within(stranger, 5000).value_or("");
    ::close(stranger);
    worker = test::connect_loopback(n.port);
    send_line(worker, worker_hello("tok", 0));
    send_line(worker, "{\"type\":\"after the hello\"}");
    (void)!::write(n.node_end, node_line(ExitedLine{0, {0, std::nullopt}}).data(), node_line(ExitedLine{0, {0, std::nullopt}}).size());
  });
  std::unique_ptr<WorkerChannel> channel;
  std::string failed;
  try {
    channel = n.launcher->start(on_node_1());
  } catch (const std::exception& e) {
    failed = e.what();
  }
  node.join();
  ASSERT_TRUE(channel) << failed;
  const auto refused_garbage = nlohmann::json::parse(garbage_answer, nullptr, false);
  ASSERT_TRUE(refused_garbage.is_object()) << garbage_answer;
  EXPECT_EQ(refused_garbage.value("reason", ""), "not a worker's hello: \\xff\\xfe\\x1b[31m binary");
  EXPECT_NE(stranger_answer.find("not this run's token"), std::string::npos) << stranger_answer;
  const auto refused = n.launcher->refused();
  ASSERT_EQ(refused.size(), 2u);
  EXPECT_EQ(refused[0].rfind("a worker's connection from 127.0.0.1:", 0), 0u) << refused[0];
  EXPECT_NE(refused[1].find(": not this run's token"), std::string::npos) << refused[1];
  // The channel is the worker's own connection: its first report is the line after its hello.
  std::vector<std::string> lines;
  pollfd p{channel->report_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  channel->read_reports(lines);
  EXPECT_EQ(lines, std::vector<std::string>{"{\"type\":\"after the hello\"}"});
  channel.reset();  // its exit was reported: no wait
  ::close(worker);
}

// A node that reads its clock requests and never answers (frozen, hostile) keeps its offset: each
// re-measurement gives up after a few of its round trips (2 s here), not when the node is gone.
TEST(RemoteLauncher, ASilentNodeKeepsItsOffsetWhenTheReMeasurementsDeadlinePasses) {
  OneNode n;
  ASSERT_TRUE(n.launcher);
  std::thread node([&] {  // reads, answers nothing; closes after 8 s unless told "end" first
    const std::int64_t until = test::now_ns() + 8'000'000'000;
    while (test::now_ns() < until) {
      const auto j = json_within(n.node_end, static_cast<int>((until - test::now_ns()) / 1'000'000) + 1);
      if (!j || test::type_of(j) == "end") break;
    }
    ::shutdown(n.node_end, SHUT_RDWR);
  });
  const std::int64_t t0 = monotonic_ns();
  n.launcher->remeasure_clocks(8);
  const std::int64_t took = monotonic_ns() - t0;
  EXPECT_GE(took, 2 * kNsPerS);
  EXPECT_LT(took, 6 * kNsPerS) << "the node's 8 s of silence waited out";
  EXPECT_TRUE(n.launcher->lost().empty());
  EXPECT_EQ(n.launcher->clocks()[0].measurements, 1);
  n.launcher.reset();
  node.join();
}

// Each re-measurement that got an answer counts; the offsets' spread is the highest minus the lowest seen
// (the join's included). The node's clock jumps 50 ms ahead between the two re-measurements.
TEST(RemoteLauncher, TheOffsetSpanIsTheHighestMinusTheLowestOffset) {
  OneNode n;
  ASSERT_TRUE(n.launcher);
  std::thread node([&] {
    for (int answered = 0;; ++answered) {
      const auto line = line_within(n.node_end, 20000);
      if (!line || line->find("\"end\"") != std::string::npos) return;
      const std::int64_t ahead = answered < 2 ? 0 : 50'000'000;
      const auto answer = clock_answer_line(*line, monotonic_ns() + ahead, [ahead] { return monotonic_ns() + ahead; });
      if (answer) (void)!::write(n.node_end, answer->data(), answer->size());
    }
  });
  n.launcher->remeasure_clocks(2);
  n.launcher->remeasure_clocks(2);
  const auto c = n.launcher->clocks()[0];
  n.launcher.reset();
  node.join();
  EXPECT_EQ(c.measurements, 3);
  EXPECT_LE(c.lowest_offset_ns, -45'000'000);  // conductor = node + offset: the node 50 ms ahead is -50 ms
  EXPECT_GE(c.highest_offset_ns, -5'000'000);  // the join's 0 and the first re-measurement's
  const std::int64_t span = c.highest_offset_ns - c.lowest_offset_ns;
  EXPECT_GT(span, 45'000'000);
  EXPECT_LT(span, 55'000'000);
}

// A node that never reports the exit of a worker the conductor killed is lost after kExitReportNs (5 s): the
// worker's exit says so, and the run goes on rather than waiting for ever.
TEST(RemoteLauncher, ANodeThatNeverReportsAKilledWorkersExitIsLostAtItsDeadline) {
  OneNode n;
  ASSERT_TRUE(n.launcher);
  int worker = -1;
  std::thread node([&] {
    if (!json_within(n.node_end, 5000)) return;  // the start line
    worker = test::connect_loopback(n.port);
    send_line(worker, worker_hello("tok", 0));
    n.drain_until_end();  // the kill is read, never answered
  });
  auto channel = n.launcher->start(on_node_1());
  channel->kill();
  const std::int64_t t0 = monotonic_ns();
  std::optional<ExitStatus> exit;
  while (!(exit = channel->poll_exit()) && monotonic_ns() - t0 < 15 * kNsPerS) {
    pollfd p{-1, 0, 0};
    ::poll(&p, 1, 50);
  }
  const std::int64_t took = monotonic_ns() - t0;
  ASSERT_TRUE(exit);
  EXPECT_GE(took, kExitReportNs);
  EXPECT_LT(took, kExitReportNs + 3 * kNsPerS);
  EXPECT_EQ(exit->describe(), "node 1 (fake) was lost mid-run: it did not report the exit of worker 0 within 5 s of its kill");
  EXPECT_EQ(n.launcher->lost().size(), 1u);
  channel.reset();
  n.launcher.reset();
  node.join();
  ::close(worker);
}

// A stop signal while the conductor waits for a worker to connect back ends the wait at once (not the 30 s
// of the worker's start).
TEST(RemoteLauncher, AStopSignalEndsTheWaitForAWorker) {
  int stop[2];
  ASSERT_EQ(::pipe(stop), 0);
  {
    OneNode n(30.0, {stop[0], {}});
    ASSERT_TRUE(n.launcher);
    std::thread node([&] {
      if (json_within(n.node_end, 5000)) (void)!::write(stop[1], "x", 1);  // the start line read: the signal comes
      n.drain_until_end();
    });
    const std::int64_t t0 = monotonic_ns();
    std::string what;
    try {
      n.launcher->start(on_node_1());
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
    EXPECT_LT(monotonic_ns() - t0, 5 * kNsPerS);
    EXPECT_EQ(what, "a stop signal came while a worker on node 1 (fake) was starting");
    n.launcher.reset();
    node.join();
  }
  ::close(stop[0]);
  ::close(stop[1]);
}

}  // namespace
}  // namespace ib
