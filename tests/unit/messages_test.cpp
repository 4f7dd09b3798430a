// The worker protocol's wire format (harness/worker/messages.h) and line splitting (protocol.h): every
// message survives a round trip, a bad report says what was wrong in a bounded message, and the line
// reader bounds what it holds and keeps a last line without its newline.
#include "harness/worker/messages.h"
#include "harness/worker/protocol.h"
#include "tests/unit/test_support.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace ib {
namespace {

using namespace ib::test;

// For EXPECT_PRED2, which prints both strings when it fails.

WorkerMessage round_trip(const WorkerMessage& m, MessageBounds bounds = {2, 10}) {
  std::string line = to_line(m);
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
  line.pop_back();
  return parse_worker_message(line, bounds);
}

std::string problem(const std::string& line, MessageBounds bounds = {1, 3}) {
  try {
    parse_worker_message(line, bounds);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << line;
  return "";
}

// The rendezvous of a tenant's ranks (issue 35): any bytes survive both directions (hex on the wire), and a
// key that is not one word of the allowed characters, or a value that is not hex, is refused.
TEST(WorkerMessages, RendezvousMessagesRoundTripAnyBytes) {
  const std::string bytes("\0\x01\xff addr\n", 9);
  const WorkerMessage put = round_trip({1, KvPutMessage{"gloo/0", bytes}});
  ASSERT_EQ(put.type(), WorkerMessageType::kv_put);
  EXPECT_EQ(std::get<KvPutMessage>(put.body).key, "gloo/0");
  EXPECT_EQ(std::get<KvPutMessage>(put.body).value, bytes);
  EXPECT_EQ(put.slot, 1u);
  const WorkerMessage get = round_trip({0, KvGetMessage{"nccl/unique-id"}});
  EXPECT_EQ(std::get<KvGetMessage>(get.body).key, "nccl/unique-id");
  for (const std::string& value : {bytes, std::string()}) {
    std::string line = to_line(ControlMessage{KvCommand{"gloo/1", value}});
    line.pop_back();
    const auto back = parse_control_message(line);
    ASSERT_TRUE(back && back->type() == ControlMessageType::kv) << line;
    EXPECT_EQ(std::get<KvCommand>(back->body).value, value);
  }
  EXPECT_PRED2(contains, problem(R"({"type":"kv_put","key":"a b","value_hex":"00"})"), "kv_put: key \"a b\" is not");
  EXPECT_PRED2(contains, problem(R"({"type":"kv_put","key":"k","value_hex":"0g"})"), "value_hex is not");
  EXPECT_PRED2(contains, problem(R"({"type":"kv_get","key":""})"), "kv_get: key");
  EXPECT_FALSE(parse_control_message("kv a b c"));
  EXPECT_FALSE(parse_control_message("kv a 0"));
  EXPECT_FALSE(parse_control_message("kv a;b 00"));
}

TEST(WorkerMessages, ReadyRoundTrips) {
  ReadyMessage r{2.5e9, "FLOP", 0.25, 17, {{"CUDA_VISIBLE_DEVICES", "MIG-1"}}, {{"rate", 120.5}}};
  const WorkerMessage m = round_trip({1, r});
  EXPECT_EQ(m.slot, 1u);
  ASSERT_EQ(m.type(), WorkerMessageType::ready);
  const auto& got = std::get<ReadyMessage>(m.body);
  EXPECT_EQ(got.work, 2.5e9);
  EXPECT_EQ(got.unit, "FLOP");
  EXPECT_EQ(got.setup_s, 0.25);
  EXPECT_EQ(got.warmup_samples, 17);
  EXPECT_EQ(got.env, r.env);
  EXPECT_EQ(got.resolved, r.resolved);
}

TEST(WorkerMessages, SamplesRoundTripExactly) {
  SamplesMessage s;
  s.block = 3;
  s.start_ns = {1, 9'000'000'000'000'000'000};
  s.duration_s = {0.1 + 0.2, 1e-9};  // doubles to the last bit
  s.latency_count = {2, 0};
  s.latencies_s = {0.001, 0.002};
  s.counters = {{"requests", {2.0, 0.0}}};
  const WorkerMessage m = round_trip({0, s});
  const auto& got = std::get<SamplesMessage>(m.body);
  EXPECT_EQ(got.block, 3);
  EXPECT_EQ(got.start_ns, s.start_ns);
  EXPECT_EQ(got.duration_s, s.duration_s);
  EXPECT_EQ(got.latency_count, s.latency_count);
  EXPECT_EQ(got.latencies_s, s.latencies_s);
  EXPECT_EQ(got.counters, s.counters);
}

TEST(WorkerMessages, SamplesWithoutRequestsLeaveTheRequestColumnsOff) {
  SamplesMessage s;
  s.block = 0;
  s.start_ns = {5};
  s.duration_s = {0.5};
  s.latency_count = {0};
  const std::string line = to_line({0, s});
  EXPECT_EQ(line.find("latenc"), std::string::npos) << line;
  EXPECT_EQ(std::get<SamplesMessage>(round_trip({0, s}).body).latency_count, std::vector<std::uint32_t>{0});
}

TEST(WorkerMessages, TheOthersRoundTrip) {
  EXPECT_EQ(std::get<WaivedMessage>(round_trip({0, WaivedMessage{"no GPU"}}).body).reason, "no GPU");
  EXPECT_EQ(std::get<ErrorMessage>(round_trip({0, ErrorMessage{"boom"}}).body).message, "boom");
  const auto st = std::get<StartedMessage>(round_trip({0, StartedMessage{4, 123}}).body);
  EXPECT_EQ(st.block, 4);
  EXPECT_EQ(st.t_ns, 123);
  const auto d = std::get<DoneMessage>(round_trip({1, DoneMessage{2, 10, 20, true}}).body);
  EXPECT_EQ(d.block, 2);
  EXPECT_EQ(d.measure_start_ns, 10);
  EXPECT_EQ(d.measure_end_ns, 20);
  EXPECT_TRUE(d.stopped);
  const auto e = round_trip({1, EscapedMessage{3}});
  EXPECT_EQ(e.type(), WorkerMessageType::escaped);
  EXPECT_EQ(e.slot, 1u);
  EXPECT_EQ(std::get<EscapedMessage>(e.body).count, 3u);
  const auto g = round_trip({0, GaveUpMessage{7}});
  EXPECT_EQ(g.type(), WorkerMessageType::gave_up);
  EXPECT_EQ(std::get<GaveUpMessage>(g.body).count, 7u);
}

// Issue 37 item 1: the count of a program's processes that left its group is a count.
TEST(WorkerMessages, AnEscapedCountIsANonNegativeInteger) {
  EXPECT_PRED2(contains, problem(R"({"type":"escaped","count":-1})"), "count");
  EXPECT_PRED2(contains, problem(R"({"type":"escaped","count":"3"})"), "count");
  EXPECT_PRED2(contains, problem(R"({"type":"escaped"})"), "count");
  EXPECT_PRED2(contains, problem(R"({"type":"gave_up","count":-2})"), "count");
  EXPECT_PRED2(contains, problem(R"({"type":"gave_up","count":1.5})"), "count");
}

TEST(WorkerMessages, InvalidUtf8InAMessageIsReplacedNotThrown) {
  const WorkerMessage m = round_trip({0, ErrorMessage{"bad \xff byte"}});
  EXPECT_PRED2(starts_with, std::get<ErrorMessage>(m.body).message, "bad ");
}

TEST(WorkerMessages, DefaultsOfOptionalFields) {
  const WorkerMessage m = parse_worker_message(R"({"type":"error"})", {1, 0});
  EXPECT_EQ(m.slot, 0u);
  EXPECT_EQ(std::get<ErrorMessage>(m.body).message, "unknown error");
  const auto d = std::get<DoneMessage>(
      parse_worker_message(R"({"type":"done","block":0,"measure_start_ns":1,"measure_end_ns":2})", {1, 1}).body);
  EXPECT_FALSE(d.stopped);
}

TEST(WorkerMessages, ABadReportSaysWhatWasWrongInAtMost200Characters) {
  EXPECT_EQ(problem(R"({"type":"started","block":3,"t_ns":1})"),
            "malformed message from worker: started: block 3 is not a released block (0..2)");
  EXPECT_EQ(problem(R"({"type":"samples","block":0,"start_ns":[1],"duration_s":[0.5],"latencies_s":[0.1]})"),
            "malformed message from worker: samples: latency_count sums to 0, latencies_s has 1");
  EXPECT_PRED2(contains, problem(R"({"type":"samples","block":0,"start_ns":[1.5],"duration_s":[0.5]})"), "start_ns[0] is 1.5, not an integer");
  EXPECT_PRED2(contains, problem(R"({"type":"samples","block":0,"start_ns":[1],"duration_s":[null]})"), "duration_s[0] is null");
  EXPECT_PRED2(contains, problem(R"({"type":"samples","block":0,"duration_s":[]})"), "samples: no \"start_ns\"");
  EXPECT_PRED2(contains, problem(R"({"type":"samples","block":0,"start_ns":5,"duration_s":[]})"), "start_ns is 5, not an array");
  EXPECT_PRED2(contains, problem(R"({"type":"done","block":0,"measure_start_ns":-1,"measure_end_ns":2})"), "measure_start_ns is -1");
  EXPECT_PRED2(contains, problem(R"({"type":"ready","unit":"s"})"), "ready: no \"work\"");
  EXPECT_PRED2(contains, problem(R"({"type":"ready","work":1,"unit":"s","resolved":[1]})"), "resolved is [1]");
  EXPECT_PRED2(contains, problem(R"({"type":7})"), "unknown type 7");
  EXPECT_PRED2(contains, problem(R"({"slot":0})"), "no \"type\"");
  EXPECT_PRED2(contains, problem(R"({"type":"error","slot":-1})"), "slot -1");
  // slots are 0 .. slots - 1: the count itself is past the end
  EXPECT_PRED2(contains, problem(R"({"type":"error","slot":1,"message":"x"})"), "slot 1 is not one of the process's 1 tenant(s)");
  EXPECT_PRED2(contains, problem(R"({"type":"error","slot":2,"message":"x"})", {2, 3}), "slot 2 is not one of the process's 2");
  EXPECT_PRED2(contains, problem(""), "not JSON");
  // A long value is shortened where it is quoted, and the whole message is bounded.
  const std::string long_type = problem(R"({"type":")" + std::string(10000, 't') + R"("})");
  EXPECT_PRED2(contains, long_type, "unknown type \"tttt");
  EXPECT_PRED2(contains, long_type, "...");
  EXPECT_LE(long_type.size(), 100u);
  const std::string long_key = problem(R"({"type":"ready","work":1,"unit":"s","env":{")" + std::string(10000, 'k') + R"(":1}})");
  EXPECT_LE(long_key.size(), 200u);
  EXPECT_LE(problem(std::string(100000, '{')).size(), 200u);
}

TEST(ControlMessages, RoundTripInTheirPlainWords) {
  EXPECT_EQ(to_line(ControlMessage{GoCommand{3, 1.0 / 3.0, {0, 2}}}), "go 3 0.33333333333333331 0,2\n");
  EXPECT_EQ(to_line(ControlMessage{StopCommand{5}}), "stop 5\n");
  EXPECT_EQ(to_line(ControlMessage{EndCommand{}}), "end\n");
  const auto go = parse_control_message("go 3 0.33333333333333331 0,2");
  ASSERT_TRUE(go);
  ASSERT_EQ(go->type(), ControlMessageType::go);
  EXPECT_EQ(std::get<GoCommand>(go->body).block, 3);
  EXPECT_EQ(std::get<GoCommand>(go->body).seconds, 1.0 / 3.0);
  EXPECT_EQ(std::get<GoCommand>(go->body).slots, (std::vector<std::size_t>{0, 2}));
  ASSERT_TRUE(parse_control_message("stop 5"));
  EXPECT_EQ(std::get<StopCommand>(parse_control_message("stop 5")->body).block, 5);
  EXPECT_EQ(parse_control_message("end")->type(), ControlMessageType::end);
}

TEST(ControlMessages, AGoWithAStartTimeCarriesItToTheNanosecond) {
  GoCommand at{4, 0.5, {1}};
  at.at_ns = 1'000'000'123'456'789;
  EXPECT_EQ(to_line(ControlMessage{at}), "go 4 0.5 1 1000000123456789\n");
  const auto back = parse_control_message("go 4 0.5 1 1000000123456789");
  ASSERT_TRUE(back);
  EXPECT_EQ(std::get<GoCommand>(back->body).at_ns, 1'000'000'123'456'789);
  EXPECT_EQ(std::get<GoCommand>(parse_control_message("go 4 0.5 1")->body).at_ns, 0);  // at once
}

TEST(ControlMessages, AnythingElseIsNotACommand) {
  for (const char* line : {"", "go", "go 1 2", "go -1 2 0", "go 1 -2 0", "go 1 nan 0", "go 1 2 x", "go 1 2 0,,1",
                           "go 1 2 0 extra", "go 1 2 0 -5", "go 1 2 0 12x", "go 1 2 0 3 4",
                           "go 1 2 0 9999999999999999999", "stop", "stop x", "stop 1.5", "hello", "go 1 2 99999999999"})
    EXPECT_FALSE(parse_control_message(line)) << line;
}

// ---------------------------------------------------------------- line reader

TEST(LineReader, SplitsPiecesIntoLines) {
  LineReader r(100);
  std::vector<std::string> lines;
  for (const char* piece : {"ab", "c\nde", "f\n\ng", "h"}) EXPECT_EQ(r.feed(piece, std::strlen(piece), lines), ReadStatus::open);
  EXPECT_EQ(lines, (std::vector<std::string>{"abc", "def", ""}));
  EXPECT_EQ(r.finish(lines), ReadStatus::closed);
  EXPECT_EQ(lines, (std::vector<std::string>{"abc", "def", "", "gh"})) << "the last line, without its newline, is kept";
}

TEST(LineReader, ALineOverTheLimitStopsIt) {
  LineReader r(8);
  std::vector<std::string> lines;
  EXPECT_EQ(r.feed("12345678\n", 9, lines), ReadStatus::open);  // exactly the limit
  EXPECT_EQ(r.feed("12345", 5, lines), ReadStatus::open);
  EXPECT_EQ(r.feed("6789", 4, lines), ReadStatus::overlong);  // a line without its end, growing
  EXPECT_EQ(r.feed("\nok\n", 4, lines), ReadStatus::overlong);
  EXPECT_EQ(r.finish(lines), ReadStatus::overlong);
  EXPECT_EQ(lines, std::vector<std::string>{"12345678"});
}

TEST(LineReader, ReadsAPipeToItsLastLineAtEndOfFile) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string text = "{\"a\":1}\n{\"b\":2}";
  ASSERT_EQ(write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ASSERT_EQ(close(fds[1]), 0);
  LineReader r;
  std::vector<std::string> lines;
  EXPECT_EQ(read_lines(fds[0], r, lines), ReadStatus::open);
  EXPECT_EQ(read_lines(fds[0], r, lines), ReadStatus::closed);
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
  ASSERT_EQ(close(fds[0]), 0);
}

}  // namespace
}  // namespace ib
