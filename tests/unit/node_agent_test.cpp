// A node's harness (harness/nodes/node_agent.h, issue 49) against a conductor played by the test: the whole
// course (hello, clock, a worker started that connects back and is told its node's address, end), and a
// conductor that never answers, welcomes and goes silent, or answers with the wrong types: each ends at its
// deadline or a stop signal with the node's exit code and one line, never hangs and never crashes.
#include "harness/core/exit_codes.h"
#include "harness/nodes/node_agent.h"
#include "tests/unit/node_peers.h"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <thread>

namespace ib {
namespace {

using test::json_within;
using test::line_within;
using test::send_line;

struct FakeConductor {
  int port = 0;
  int listen_fd = test::listen_loopback(port);
  std::string log_dir;
  FakeConductor() {
    char tmpl[] = "/tmp/ib-node-agent-test-XXXXXX";
    if (::mkdtemp(tmpl)) log_dir = tmpl;
  }
  ~FakeConductor() {
    ::close(listen_fd);
    std::error_code ignored;
    std::filesystem::remove_all(log_dir, ignored);
  }
  NodeAgentOptions options(double join_timeout_s) const {
    NodeAgentOptions o;
    o.conductor_host = "127.0.0.1";
    o.conductor_port = port;
    o.node_rank = 1;
    o.nodes = 2;
    o.token = "tok";
    o.join_timeout_s = join_timeout_s;
    o.log_dir = log_dir;
    o.worker_exe = "/bin/sh";  // the start line's args are the shell's
    return o;
  }
};

struct StopPipe {
  int r = -1, w = -1;
  StopPipe() {
    int fds[2];
    if (::pipe(fds) == 0) {
      r = fds[0];
      w = fds[1];
    }
  }
  ~StopPipe() {
    ::close(r);
    ::close(w);
  }
  void signal() const { (void)!::write(w, "x", 1); }
};

// The node joins, answers the clock, starts the worker the conductor places on it (here a shell that writes
// what it was given on its connection back), reports its exit and ends with the conductor's "end". The
// worker is told its node's address (IB_NODE_ADDRESS: where gloo's ranks on this node listen) — the end of the
// control connection on this node, 127.0.0.1 here.
TEST(NodeAgent, AWorkerItStartsConnectsBackAndIsToldItsNodesAddress) {
  FakeConductor c;
  ASSERT_GE(c.listen_fd, 0);
  int code = -1;
  std::thread agent([&] { code = run_node_agent(c.options(30.0), {}); });
  const int control = test::accept_within(c.listen_fd, 10000);
  ASSERT_GE(control, 0);
  const auto hello = json_within(control, 5000);
  ASSERT_TRUE(hello && hello->is_object());
  EXPECT_EQ(hello->value("type", ""), "hello");
  EXPECT_EQ(hello->value("token", ""), "tok");
  send_line(control, R"({"type":"welcome","node_rank":1})");
  EXPECT_EQ(test::type_of(json_within(control, 5000)), "ready");
  send_line(control, R"({"type":"clock","t0":5})");
  const auto answer = json_within(control, 5000);
  ASSERT_TRUE(answer && answer->is_object());
  EXPECT_EQ(answer->value("t0", 0), 5);
  send_line(control, R"({"type":"clock_end"})");
  EXPECT_EQ(test::type_of(json_within(control, 5000)), "clock_end");
  send_line(control, R"({"type":"start","id":0,"args":["-c","printf '%s\n' \"$IB_NODE_ADDRESS\" >&3"],"log":"w0.log"})");
  const int worker = test::accept_within(c.listen_fd, 10000);
  ASSERT_GE(worker, 0);
  const auto worker_hello = json_within(worker, 5000);
  ASSERT_TRUE(worker_hello && worker_hello->is_object());
  EXPECT_EQ(worker_hello->value("type", ""), "worker");
  EXPECT_EQ(worker_hello->value("id", -1), 0);
  EXPECT_EQ(line_within(worker, 5000).value_or("(none)"), "127.0.0.1");
  const auto exited = json_within(control, 10000);
  ASSERT_TRUE(exited && exited->is_object());
  EXPECT_EQ(exited->value("type", ""), "exited");
  EXPECT_EQ(exited->value("exit_code", -1), 0);
  send_line(control, R"({"type":"end"})");
  agent.join();
  EXPECT_EQ(code, kExitPass);
  ::close(worker);
  ::close(control);
}

// A conductor that accepts and never answers the hello: the node gives up at its join deadline (1 s here, not
// twice that), exit 3 with the reason.
TEST(NodeAgent, AConductorThatNeverAnswersTheHelloEndsAtTheJoinDeadline) {
  FakeConductor c;
  ASSERT_GE(c.listen_fd, 0);
  testing::internal::CaptureStderr();
  const std::int64_t t0 = test::now_ns();
  int code = -1;
  std::thread agent([&] { code = run_node_agent(c.options(1.0), {}); });
  const int control = test::accept_within(c.listen_fd, 10000);
  agent.join();
  const std::int64_t took = test::now_ns() - t0;
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, kExitCannotRun);
  EXPECT_LT(took, 1'900'000'000) << "within its --join-timeout of 1 s";
  EXPECT_NE(err.find("node 1 could not join the conductor at 127.0.0.1:"), std::string::npos) << err;
  EXPECT_NE(err.find("no answer to the hello from the conductor by the join deadline"), std::string::npos) << err;
  ::close(control);
}

// A stop signal ends the node's wait for the welcome, and for the first clock request once welcomed (whose
// deadline is the conductor's own join deadline and more): exit 130 at once either way.
TEST(NodeAgent, AStopSignalEndsTheWaitForTheWelcomeAndForTheClock) {
  for (const bool welcomed : {false, true}) {
    FakeConductor c;
    ASSERT_GE(c.listen_fd, 0);
    StopPipe stop;
    int code = -1;
    std::thread agent([&] { code = run_node_agent(c.options(600.0), {stop.r, {}}); });
    const int control = test::accept_within(c.listen_fd, 10000);
    ASSERT_GE(control, 0);
    ASSERT_TRUE(json_within(control, 5000));  // the hello
    if (welcomed) {
      send_line(control, R"({"type":"welcome","node_rank":1})");
      ASSERT_TRUE(json_within(control, 5000));  // ready: it now waits for the clock
    }
    const std::int64_t t0 = test::now_ns();
    stop.signal();
    agent.join();
    EXPECT_EQ(code, kExitInterrupted) << welcomed;
    EXPECT_LT(test::now_ns() - t0, 2'000'000'000) << welcomed;
    ::close(control);
  }
}

// A welcome whose node_rank is a string (or another rank) is no welcome: one line naming the field, exit 3 at
// once (the conductor's last word: no second try), never an exception.
TEST(NodeAgent, AWelcomeWhoseNodeRankIsAStringIsNamedInOneLine) {
  FakeConductor c;
  ASSERT_GE(c.listen_fd, 0);
  testing::internal::CaptureStderr();
  int code = -1;
  std::thread agent([&] { code = run_node_agent(c.options(30.0), {}); });
  const int control = test::accept_within(c.listen_fd, 10000);
  ASSERT_GE(control, 0);
  ASSERT_TRUE(json_within(control, 5000));
  send_line(control, R"({"type":"welcome","node_rank":"1\u001b[2J"})");
  agent.join();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, kExitCannotRun);
  EXPECT_NE(err.find("a welcome whose node_rank is \"1\\u001b[2J\", not this node's 1"), std::string::npos) << err;
  EXPECT_EQ(err.find('\x1b'), std::string::npos) << "escaped";
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  ::close(control);
}

}  // namespace
}  // namespace ib

namespace ib {
namespace {

int option_of(int fd, int level, int name) {
  int v = -1;
  socklen_t n = sizeof v;
  return getsockopt(fd, level, name, &v, &n) == 0 ? v : -1;
}

// A node's connections to its conductor are kept alive: a conductor gone without a FIN (power loss, a partition)
// is named within seconds (bounded_wait.h), the control connection's unacknowledged data and writes bounded too.
TEST(NodeAgent, ItsConnectionsAreKeptAliveAndTheControlOnesBounded) {
  int port = 0;
  const int listen_fd = test::listen_loopback(port);
  ASSERT_GE(listen_fd, 0);
  for (const Connection kind : {Connection::control, Connection::worker}) {
    std::string why;
    const int fd = connect_tcp("127.0.0.1", port, test::now_ns() + 5'000'000'000, {}, kind, why);
    ASSERT_GE(fd, 0) << why;
    EXPECT_EQ(option_of(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
    EXPECT_EQ(option_of(fd, IPPROTO_TCP, TCP_KEEPIDLE), kKeepIdleS);
    EXPECT_EQ(option_of(fd, IPPROTO_TCP, TCP_KEEPINTVL), kKeepIntervalS);
    EXPECT_EQ(option_of(fd, IPPROTO_TCP, TCP_KEEPCNT), kKeepProbes);
    EXPECT_EQ(option_of(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), kind == Connection::control ? 5000 : 0);
    ::close(fd);
  }
  ::close(listen_fd);
}

}  // namespace
}  // namespace ib
