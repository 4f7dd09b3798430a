// Nodes joining their conductor (issue 36, harness/nodes/join.h): the hello on the wire, why a
// connection is refused, and the accept loop on loopback with a node that joins, a stranger with another
// token, a connection that never says hello and a node that never comes.
#include "harness/nodes/join.h"
#include "tests/unit/node_peers.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace ib {
namespace {

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

TEST(ConductorJoin, AHelloRoundTripsAndAMalformedOneIsNamed) {
  std::string why;
  const auto h = parse_hello(hello_line({1, 2, 3, "job-7", "node-b"}), why);
  ASSERT_TRUE(h) << why;
  EXPECT_EQ(h->version, 1);
  EXPECT_EQ(h->node_rank, 2);
  EXPECT_EQ(h->nodes, 3);
  EXPECT_EQ(h->token, "job-7");
  EXPECT_EQ(h->host, "node-b");
  EXPECT_FALSE(parse_hello("GET / HTTP/1.1", why));
  EXPECT_NE(why.find("not a hello: GET / HTTP/1.1"), std::string::npos);
  EXPECT_FALSE(parse_hello(R"({"type":"hello","version":1,"node_rank":"1","nodes":2,"token":"t","host":"h"})", why));
  EXPECT_EQ(why, "a hello without an integer node_rank (within int's range)");
  // 2^32 + 1 would wrap to 1 (welcomed as node 1): refused, for each of the three integers.
  for (const char* key : {"version", "node_rank", "nodes"}) {
    nlohmann::json j = {{"type", "hello"}, {"version", 1}, {"node_rank", 1}, {"nodes", 2}, {"token", "t"}, {"host", "h"}};
    j[key] = 4294967297ULL;
    EXPECT_FALSE(parse_hello(j.dump(), why)) << key;
    EXPECT_EQ(why, std::string("a hello without an integer ") + key + " (within int's range)");
    j[key] = -4294967295LL;
    EXPECT_FALSE(parse_hello(j.dump(), why)) << key;
  }
  EXPECT_FALSE(parse_hello(R"({"type":"hello","version":1,"node_rank":1,"nodes":2,"host":"h"})", why));
  EXPECT_EQ(why, "a hello without a string token");
  // A host name with an escape sequence or a newline would reach the terminal in messages: refused, escaped.
  for (const std::string host : {std::string("\x1b[31mnode-b"), std::string("node\nb"), std::string("node b"), std::string()}) {
    const nlohmann::json hello = {{"type", "hello"}, {"version", 1}, {"node_rank", 1}, {"nodes", 2}, {"token", "t"},
                                  {"host", host}};
    EXPECT_FALSE(parse_hello(hello.dump(), why)) << host;
    EXPECT_EQ(why.rfind("a hello whose host is not a printable name: ", 0), 0u) << why;
    EXPECT_EQ(why.find_first_of("\x1b\n"), std::string::npos) << "escaped in the message";
  }
}

// Issue 49: a hello says the CPUs the node may run workers on (node 0 checks placements against them); a hostile
// list is that hello's refusal, never a wrong check. Absent (a node of before): empty, not checked.
TEST(ConductorJoin, AHellosCpusAreDistinctCpuNumbers) {
  std::string why;
  Hello said{1, 1, 2, "t", "h"};
  said.cpus = {3, 0, 1};
  const auto h = parse_hello(hello_line(said), why);
  ASSERT_TRUE(h) << why;
  EXPECT_EQ(h->cpus, (std::vector<int>{0, 1, 3}));
  nlohmann::json j = {{"type", "hello"}, {"version", 1}, {"node_rank", 1}, {"nodes", 2}, {"token", "t"}, {"host", "h"}};
  ASSERT_TRUE(parse_hello(j.dump(), why));
  EXPECT_TRUE(parse_hello(j.dump(), why)->cpus.empty());
  for (const nlohmann::json& bad : {nlohmann::json("0-3"), nlohmann::json({0, 0}), nlohmann::json({-1}), nlohmann::json({"1"}),
                                    nlohmann::json({4294967297ULL}), nlohmann::json({CPU_SETSIZE})}) {
    j["cpus"] = bad;
    EXPECT_FALSE(parse_hello(j.dump(), why)) << bad.dump();
    EXPECT_EQ(why.rfind("a hello whose cpus are not a list of distinct CPU numbers", 0), 0u) << why;
  }
}

TEST(ConductorJoin, EachRefusalSaysWhy) {
  const Hello ok{1, 1, 3, "t", "h"};
  EXPECT_EQ(refusal(ok, 3, "t", {}), "");
  EXPECT_EQ(refusal({2, 1, 3, "t", "h"}, 3, "t", {}), "protocol version 2, this conductor speaks 1");
  EXPECT_EQ(refusal({1, 1, 3, "other", "h"}, 3, "t", {}), "not this run's token");
  EXPECT_EQ(refusal({1, 1, 4, "t", "h"}, 3, "t", {}), "a node of a run of 4 nodes; this one has 3");
  EXPECT_EQ(refusal({1, 0, 3, "t", "h"}, 3, "t", {}), "node rank 0 is not one of 1..2");  // 0 is the conductor
  EXPECT_EQ(refusal({1, 3, 3, "t", "h"}, 3, "t", {}), "node rank 3 is not one of 1..2");
  EXPECT_EQ(refusal(ok, 3, "t", {1}), "node rank 1 has already joined");
}

// A run of 3 nodes: node 1 joins, a stranger (another run's token) and a connection that never says hello
// are refused, node 2 never comes: named missing when the deadline (1 s) passes.
TEST(ConductorJoin, OnLoopbackTheNodeJoinsStrangersAreRefusedAndTheMissingNamed) {
  int port = 0;
  const int listen_fd = test::listen_loopback(port);
  ASSERT_GE(listen_fd, 0);
  const int node = test::connect_loopback(port), stranger = test::connect_loopback(port), silent = test::connect_loopback(port);
  ASSERT_TRUE(node >= 0 && stranger >= 0 && silent >= 0);
  std::string node_answer = "?", stranger_answer = "?";
  const std::int64_t in_5_s = steady_ns() + 5'000'000'000;
  std::thread a([&] { node_answer = say_hello(node, {1, 1, 3, "run-42", "node-b"}, in_5_s).why; });
  std::thread b([&] { stranger_answer = say_hello(stranger, {1, 2, 3, "run-41", "elsewhere"}, in_5_s).why; });
  const JoinResult r = accept_nodes(listen_fd, 3, "run-42", steady_ns() + 1'000'000'000, steady_ns);
  a.join();
  b.join();
  EXPECT_EQ(node_answer, "");
  EXPECT_EQ(stranger_answer, "refused by the conductor: not this run's token");
  ASSERT_EQ(r.joined.size(), 1u);
  EXPECT_EQ(r.joined[0].node_rank, 1);
  EXPECT_EQ(r.joined[0].host, "node-b");
  EXPECT_EQ(r.missing, std::vector<int>{2});
  ASSERT_EQ(r.refused.size(), 2u);
  const std::string refused = r.refused[0] + " | " + r.refused[1];
  EXPECT_NE(refused.find("127.0.0.1:"), std::string::npos) << refused;
  EXPECT_NE(refused.find("not this run's token"), std::string::npos) << refused;
  EXPECT_NE(refused.find("no hello by the deadline"), std::string::npos) << refused;
  for (int fd : {r.joined[0].fd, node, stranger, silent, listen_fd}) ::close(fd);
}

// A stop signal (its descriptor readable) ends the wait at once, however far the deadline; the node that
// never came is named missing. The node's devices ride its hello to the conductor.
TEST(ConductorJoin, AStopSignalEndsTheWaitAndTheDevicesArriveWithTheHello) {
  int port = 0;
  const int listen_fd = test::listen_loopback(port);
  ASSERT_GE(listen_fd, 0);
  const int node = test::connect_loopback(port);
  int stop[2];
  ASSERT_EQ(::pipe(stop), 0);
  Hello hello{1, 1, 3, "run-42", "node-b"};
  hello.devices = nlohmann::json::array({{{"kind", "host"}, {"name", "AMD EPYC"}}});
  std::string node_answer = "?";
  std::thread a([&] {
    node_answer = say_hello(node, hello, steady_ns() + 5'000'000'000).why;
    ASSERT_EQ(::write(stop[1], "x", 1), 1);  // node 1 is in: the signal comes while node 2 is awaited
  });
  const std::int64_t t0 = steady_ns();
  const JoinResult r = accept_nodes(listen_fd, 3, "run-42", t0 + 600'000'000'000, steady_ns, {stop[0], {}});
  a.join();
  EXPECT_LT(steady_ns() - t0, 60'000'000'000) << "long before the 600 s deadline";
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.missing, std::vector<int>{2});
  ASSERT_EQ(r.joined.size(), 1u);
  EXPECT_EQ(r.joined[0].devices, hello.devices);
  for (int fd : {r.joined[0].fd, node, listen_fd, stop[0], stop[1]}) ::close(fd);
}

}  // namespace
}  // namespace ib
