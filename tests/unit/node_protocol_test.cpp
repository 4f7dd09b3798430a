// A run across nodes after the join (issue 36): the conductor's and the node's lines on the wire, a worker's
// hello, a remote worker's times moved onto the conductor's clock (harness/nodes/node_protocol.h), and the
// node role from the options and the launcher's variables (harness/cli/node_role.h).
#include "harness/cli/node_role.h"
#include "harness/core/errors.h"
#include "harness/worker/messages.h"
#include "harness/nodes/node_protocol.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ib {
namespace {

NodeLine round_trip(const NodeLine& l) {
  std::string line = node_line(l), why;
  EXPECT_EQ(line.back(), '\n');
  line.pop_back();
  const auto back = parse_node_line(line, why);
  EXPECT_TRUE(back) << why;
  return back.value_or(EndLine{});
}

TEST(NodeProtocol, EveryLineRoundTrips) {
  const auto start = std::get<StartWorkerLine>(round_trip(StartWorkerLine{7, {"worker", "--tenant", "{\"a\":1}"}, {"A=1"}, {"B*"}, "w.log"}));
  EXPECT_EQ(start.id, 7);
  EXPECT_EQ(start.args, (std::vector<std::string>{"worker", "--tenant", "{\"a\":1}"}));
  EXPECT_EQ(start.env, std::vector<std::string>{"A=1"});
  EXPECT_EQ(start.env_unset, std::vector<std::string>{"B*"});
  EXPECT_EQ(start.log, "w.log");
  EXPECT_EQ(std::get<KillWorkerLine>(round_trip(KillWorkerLine{3})).id, 3);
  EXPECT_TRUE(std::holds_alternative<EndLine>(round_trip(EndLine{})));
  EXPECT_TRUE(std::holds_alternative<ClockEndLine>(round_trip(ClockEndLine{})));
  EXPECT_TRUE(std::holds_alternative<ReadyLine>(round_trip(ReadyLine{})));
  const auto killed = std::get<ExitedLine>(round_trip(ExitedLine{2, {std::nullopt, 9}}));
  EXPECT_EQ(killed.id, 2);
  EXPECT_FALSE(killed.status.exit_code);
  EXPECT_EQ(killed.status.signal, 9);
  EXPECT_EQ(std::get<ExitedLine>(round_trip(ExitedLine{4, {0, std::nullopt}})).status.exit_code, 0);
  EXPECT_EQ(std::get<StartFailedLine>(round_trip(StartFailedLine{5, "no \"such\" file"})).reason, "no \"such\" file");
}

TEST(NodeProtocol, LinesThatAreNotOnesAreRefusedWithTheReason) {
  std::string why;
  EXPECT_FALSE(parse_node_line("garbage", why));
  EXPECT_NE(why.find("not a conductor line"), std::string::npos);
  EXPECT_FALSE(parse_node_line(R"({"type":"kill"})", why));
  EXPECT_NE(why.find("without a worker id"), std::string::npos);
  // A worker id past int's range would wrap (2^32 + 1 read as 1, another worker's): refused the same way.
  EXPECT_FALSE(parse_node_line(R"({"type":"kill","id":4294967297})", why));
  EXPECT_NE(why.find("without a worker id"), std::string::npos);
  EXPECT_FALSE(parse_node_line(R"({"type":"exited","id":1})", why));
  EXPECT_NE(why.find("exit code or signal"), std::string::npos);
  // A log name is a file in the node's log folder: never a path that leaves it.
  for (const char* log : {R"("../x.log")", R"("a/b.log")", R"("")", R"(".hidden")"}) {
    EXPECT_FALSE(parse_node_line(std::string(R"({"type":"start","id":1,"args":[],"log":)") + log + "}", why)) << log;
    EXPECT_NE(why.find("plain log file name"), std::string::npos);
  }
  EXPECT_FALSE(parse_node_line(R"({"type":"start","id":1,"args":[1],"log":"w.log"})", why));
}

TEST(NodeProtocol, AWorkersHelloNamesItsRunNodeAndId) {
  std::string line = worker_hello_line({"tok", 2, 11}), why;
  line.pop_back();
  const auto h = parse_worker_hello(line, why);
  ASSERT_TRUE(h) << why;
  EXPECT_EQ(h->token, "tok");
  EXPECT_EQ(h->node_rank, 2);
  EXPECT_EQ(h->id, 11);
  EXPECT_FALSE(parse_worker_hello(R"({"type":"worker","version":99,"token":"t","node_rank":1,"id":0})", why));
  EXPECT_FALSE(parse_worker_hello(R"({"type":"hello"})", why));
}

// The times a worker reports, and only those, move by the node's offset; the line is still a valid report.
TEST(NodeProtocol, ReportTimesMoveOntoTheConductorsClock) {
  const std::int64_t offset = -1'000'000'000'000;  // the node's clock reads 1000 s ahead
  const MessageBounds bounds{1, 1};
  SamplesMessage s;
  s.block = 0;
  s.start_ns = {1'000'000'000'500, 1'000'000'001'500};
  s.duration_s = {0.25, 0.5};
  const auto samples = parse_worker_message(shift_report_times(to_line(WorkerMessage{0, s}), offset), bounds);
  EXPECT_EQ(std::get<SamplesMessage>(samples.body).start_ns, (std::vector<std::int64_t>{500, 1500}));
  EXPECT_EQ(std::get<SamplesMessage>(samples.body).duration_s, (std::vector<double>{0.25, 0.5}));
  const auto started = parse_worker_message(shift_report_times(to_line(WorkerMessage{0, StartedMessage{0, 1'000'000'000'042}}), offset), bounds);
  EXPECT_EQ(std::get<StartedMessage>(started.body).t_ns, 42);
  const auto done = parse_worker_message(
      shift_report_times(to_line(WorkerMessage{0, DoneMessage{0, 1'000'000'000'010, 1'000'000'000'020, true}}), offset), bounds);
  EXPECT_EQ(std::get<DoneMessage>(done.body).measure_start_ns, 10);
  EXPECT_EQ(std::get<DoneMessage>(done.body).measure_end_ns, 20);
  EXPECT_TRUE(std::get<DoneMessage>(done.body).stopped);
  const std::string ready = to_line(WorkerMessage{0, ReadyMessage{}});
  EXPECT_EQ(shift_report_times(ready, offset), ready);
  EXPECT_EQ(shift_report_times("not json", offset), "not json");
}

// "Begin block K at T": T is the conductor's; a node 1000 s ahead must wait until its own T + 1000 s.
TEST(NodeProtocol, AGosStartTimeMovesOntoTheNodesClock) {
  const std::int64_t offset = -1'000'000'000'000;
  GoCommand go{2, 0.5, {0, 1}};
  go.at_ns = 5'000'000'000;
  const std::string end = to_line(ControlMessage{EndCommand{}});
  const std::string shifted = shift_go_time(to_line(ControlMessage{go}) + end, offset);
  const auto back = parse_control_message(shifted.substr(0, shifted.find('\n')));
  ASSERT_TRUE(back) << shifted;
  EXPECT_EQ(std::get<GoCommand>(back->body).at_ns, 1'005'000'000'000);
  EXPECT_EQ(std::get<GoCommand>(back->body).slots, go.slots);
  EXPECT_EQ(shifted.substr(shifted.find('\n') + 1), end) << "the line after it unchanged";
  // A node whose clock is behind by more than T: at once, never "no start time" (0) or a negative one.
  EXPECT_EQ(std::get<GoCommand>(parse_control_message(shift_go_time(to_line(ControlMessage{go}), 6'000'000'000))->body).at_ns, 1);
  GoCommand now{2, 0.5, {0}};
  EXPECT_EQ(shift_go_time(to_line(ControlMessage{now}), offset), to_line(ControlMessage{now})) << "no start time: none";
  EXPECT_EQ(shift_go_time("stop 2\n", offset), "stop 2\n");
}

TEST(NodeRoleTest, OptionsFirstThenTheLaunchersVariables) {
  RunRequest o;
  o.nodes = 3;
  const std::map<std::string, std::string> slurm{{"SLURM_PROCID", "2"}, {"SLURM_JOB_ID", "77"}, {"SLURM_STEP_ID", "0"},
                                                 {"MASTER_ADDR", "node-a"}, {"MASTER_PORT", "29500"}};
  NodeRole r = resolve_node_role(o, slurm);
  EXPECT_EQ(r.node_rank, 2);
  EXPECT_EQ(r.host, "node-a");
  EXPECT_EQ(r.port, 29500);
  EXPECT_EQ(r.token, "77.0");
  o.node_rank = 1;
  o.conductor = "[fd00::1]:4000";
  o.token = "mine";
  r = resolve_node_role(o, slurm);
  EXPECT_EQ(r.node_rank, 1);
  EXPECT_EQ(r.host, "fd00::1");
  EXPECT_EQ(r.port, 4000);
  EXPECT_EQ(r.token, "mine");
  RunRequest k8s;
  k8s.nodes = 2;
  k8s.conductor = "svc-0.svc:4000";
  k8s.token = "t";
  EXPECT_EQ(resolve_node_role(k8s, {{"JOB_COMPLETION_INDEX", "1"}}).node_rank, 1);
  EXPECT_EQ(resolve_node_role(RunRequest{}, slurm).nodes, 1);  // one node: the variables are not read
}

TEST(NodeRoleTest, WhatIsMissingOrWrongIsBadInputNamingTheOption) {
  RunRequest o;
  o.nodes = 2;
  const auto says = [&](const std::map<std::string, std::string>& env, const std::string& text) {
    try {
      resolve_node_role(o, env);
      ADD_FAILURE() << "accepted; expected: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  says({}, "--node-rank");
  says({{"SLURM_PROCID", "x1"}}, "SLURM_PROCID=\"x1\" is not a node rank");
  says({{"SLURM_PROCID", "5"}}, "not one of 0..1");
  says({{"SLURM_PROCID", "1"}}, "--conductor");
  o.conductor = "host:99999";
  says({{"SLURM_PROCID", "1"}}, "port 1-65535");
  o.conductor = "host:80";
  says({{"SLURM_PROCID", "1"}}, "--token");
}

}  // namespace
}  // namespace ib
