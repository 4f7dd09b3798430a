// The worker side (harness/worker/worker.h): batching of samples, a block's measurement and its end by
// duration, "stop" or "end", and the whole worker loop on a pair of pipes. The block parts run on a
// fake clock that each sample advances by 1 ms, so the counts below are exact.
#include "harness/worker/worker.h"

#include "harness/process/process.h"
#include "harness/worker/protocol.h"
#include "tests/unit/test_support.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <functional>
#include <future>
#include <thread>

namespace ib {
namespace {

using namespace ib::test;


struct FakeTime {
  std::int64_t now = 1'000 * kMs;
  std::int64_t tick = 0;  // added at every reading: time that passes while a worker waits for it
  NowFn fn() {
    return [this] { return now += tick; };
  }
};

struct CapturingSink final : MessageSink {
  std::vector<WorkerMessage> sent;
  void send(const WorkerMessage& m) override { sent.push_back(m); }
  std::size_t samples() const {
    std::size_t n = 0;
    for (const auto& m : sent)
      if (m.type() == WorkerMessageType::samples) n += std::get<SamplesMessage>(m.body).size();
    return n;
  }
  std::vector<WorkerMessageType> types() const {
    std::vector<WorkerMessageType> t;
    for (const auto& m : sent) t.push_back(m.type());
    return t;
  }
};

// Runs samples back to back; each takes 1 ms of fake time.
class StepExecutor final : public Executor {
 public:
  explicit StepExecutor(FakeTime& t) : time_(t) {}
  ExecContext context() const override { return {}; }
  void run_samples(Workload& w, const std::function<bool()>& keep_going,
                   const std::function<void(TimedSample&&)>& sink) override {
    while (keep_going()) {
      SampleOutput out;
      const std::int64_t t0 = time_.now;
      w.run_sample(context(), out);
      time_.now += kMs;
      sink(TimedSample{t0, 0.001, std::move(out.latencies_s), std::move(out.counters)});
    }
  }

 private:
  FakeTime& time_;
};

// Counts its samples since the last begin_block; `hook(begins, sample)` runs inside each sample.
class CountingWorkload final : public Workload {
 public:
  std::function<void(int begins, int sample)> hook;
  int begins = 0, since_begin = 0;
  void setup(const ExecContext&) override {}
  void begin_block(std::int64_t) override {
    ++begins;
    since_begin = 0;
  }
  void run_sample(const ExecContext&, SampleOutput&) override {
    ++since_begin;
    if (hook) hook(begins, since_begin);
  }
  Work work_per_sample() const override { return {1.0, "sample"}; }
  void teardown() override {}
};

TimedSample sample(std::int64_t t, std::size_t requests = 0, std::map<std::string, double> counters = {}) {
  return TimedSample{t, 0.001, std::vector<double>(requests, 0.002), std::move(counters)};
}

// ---------------------------------------------------------------- batcher

// A rank's rendezvous: get asks the harness (kv_get) and returns what a "kv" command brought; a key that
// never comes is a WorkloadError naming it once the deadline passed.
TEST(WorkerRendezvous, GetsWhatTheHarnessAnsweredAndNamesAKeyThatNeverCame) {
  CapturingSink sink;
  WorkerControl control(1);
  WorkerRendezvous r(sink, 0, control, monotonic_ns);
  r.put("gloo/0", "addr0");
  ASSERT_EQ(sink.types(), (std::vector<WorkerMessageType>{WorkerMessageType::kv_put}));
  std::thread harness([&] { control.apply(ControlMessage{KvCommand{"gloo/1", "addr1"}}); });
  EXPECT_EQ(r.get("gloo/1", 30.0), "addr1");
  harness.join();
  EXPECT_EQ(sink.types().back(), WorkerMessageType::kv_get);
  try {
    r.get("nccl/id", 0.05);
    ADD_FAILURE() << "no value, no throw";
  } catch (const WorkloadError& e) {
    EXPECT_NE(std::string(e.what()).find("no rank published \"nccl/id\""), std::string::npos) << e.what();
  }
  control.end();  // the end answers a waiting get at once
  EXPECT_THROW(r.get("late", 3600.0), WorkloadError);
}

TEST(SampleBatcher, SendsAFullBatchAndKeepsTheRestForFlush) {
  FakeTime time;
  CapturingSink sink;
  SampleBatcher b(sink, 1, 4, time.fn());
  for (int i = 0; i < 300; ++i) b.add(sample(i));
  ASSERT_EQ(sink.sent.size(), 1u);
  EXPECT_EQ(sink.sent[0].slot, 1u);
  EXPECT_EQ(std::get<SamplesMessage>(sink.sent[0].body).size(), SampleBatcher::kMaxSamples);
  EXPECT_EQ(std::get<SamplesMessage>(sink.sent[0].body).block, 4);
  b.flush();
  ASSERT_EQ(sink.sent.size(), 2u);
  EXPECT_EQ(std::get<SamplesMessage>(sink.sent[1].body).size(), 300 - SampleBatcher::kMaxSamples);
  EXPECT_EQ(std::get<SamplesMessage>(sink.sent[1].body).block, 4);
  b.flush();
  EXPECT_EQ(sink.sent.size(), 2u) << "nothing to send";
}

TEST(SampleBatcher, SendsWhenTheBatchIsOld) {
  FakeTime time;
  CapturingSink sink;
  SampleBatcher b(sink, 0, 0, time.fn());
  b.add(sample(1));
  time.now += SampleBatcher::kMaxAge_ns;
  b.add(sample(2));
  EXPECT_TRUE(sink.sent.empty()) << "not older than the limit yet";
  time.now += 1;
  b.add(sample(3));
  ASSERT_EQ(sink.sent.size(), 1u);
  EXPECT_EQ(std::get<SamplesMessage>(sink.sent[0].body).size(), 3u);
}

TEST(SampleBatcher, BoundsTheRequestsOfABatch) {
  FakeTime time;
  CapturingSink sink;
  SampleBatcher b(sink, 0, 0, time.fn());
  b.add(sample(1, SampleBatcher::kMaxLatencies - 1));
  EXPECT_TRUE(sink.sent.empty());
  b.add(sample(2, 1));
  ASSERT_EQ(sink.sent.size(), 1u);
  const auto& m = std::get<SamplesMessage>(sink.sent[0].body);
  EXPECT_EQ(m.latencies_s.size(), SampleBatcher::kMaxLatencies);
  EXPECT_EQ(m.latency_count, (std::vector<std::uint32_t>{SampleBatcher::kMaxLatencies - 1, 1}));
  EXPECT_LT(to_line(sink.sent[0]).size(), kMaxReportLineBytes / 4) << "far below the harness's line limit";
}

TEST(SampleBatcher, AlignsCountersWithTheSamples) {
  FakeTime time;
  CapturingSink sink;
  SampleBatcher b(sink, 0, 0, time.fn());
  b.add(sample(1));
  b.add(sample(2, 0, {{"x", 5.0}}));
  b.add(sample(3));
  b.flush();
  ASSERT_EQ(sink.sent.size(), 1u);
  EXPECT_EQ(std::get<SamplesMessage>(sink.sent[0].body).counters.at("x"), (std::vector<double>{0.0, 5.0, 0.0}));
}

// ---------------------------------------------------------------- one block

struct BlockRun {
  FakeTime time;
  StepExecutor executor{time};
  CountingWorkload workload;
  CapturingSink sink;
  WorkerControl control{1};
  void run(const GoCommand& go, double rewarm_s = 0.0) {
    measure_block(rewarm_s, 0, go, workload, executor, sink, control, time.fn());
  }
  const DoneMessage& done() const { return std::get<DoneMessage>(sink.sent.back().body); }
};

TEST(MeasureBlock, SendsTheLastBatchBeforeDone) {
  BlockRun b;
  b.run(GoCommand{0, 0.010, {0}}, 0.005);
  // 5 re-warm samples (unreported), then 10 measured in 10 ms: one batch, sent only at the end.
  EXPECT_EQ(b.sink.types(), (std::vector<WorkerMessageType>{WorkerMessageType::started, WorkerMessageType::samples,
                                                              WorkerMessageType::done}));
  EXPECT_EQ(b.sink.samples(), 10u);
  EXPECT_EQ(b.sink.samples(), static_cast<std::size_t>(b.workload.since_begin));
  const auto& started = std::get<StartedMessage>(b.sink.sent[0].body);
  EXPECT_EQ(started.t_ns, b.done().measure_start_ns);
  EXPECT_EQ(b.done().measure_end_ns - b.done().measure_start_ns, 10 * kMs);
  EXPECT_FALSE(b.done().stopped);
}

TEST(MeasureBlock, AGoWithAStartTimeStartsMeasuringThenNotBefore) {
  BlockRun b;
  b.time.tick = 10'000;  // 10 us a reading: the wait for the start time ends
  GoCommand go{0, 0.010, {0}};
  go.at_ns = b.time.now + 5 * kMs + kMs / 2;  // re-warm samples are 1 ms: the sixth would overrun it
  b.run(go, 0.0);
  const auto& started = std::get<StartedMessage>(b.sink.sent[0].body);
  EXPECT_GE(started.t_ns, go.at_ns);
  EXPECT_LT(started.t_ns - go.at_ns, kMs / 10) << "slept out the half sample, then started";
  EXPECT_EQ(b.workload.begins, 2);
}

TEST(MeasureBlock, ALateGoStartsAfterOneReWarmSample) {
  BlockRun b;
  const std::int64_t received = b.time.now;
  GoCommand go{0, 0.010, {0}};
  go.at_ns = received - kMs;  // the go arrived after its start time
  b.run(go, 0.005);
  EXPECT_EQ(std::get<StartedMessage>(b.sink.sent[0].body).t_ns, received + kMs);
}

TEST(MeasureBlock, EverySampleOfALongBlockIsReported) {
  BlockRun b;
  b.run(GoCommand{2, 0.7, {0}});  // 700 samples: batches by age (50 ms) and the rest at the end
  EXPECT_EQ(b.sink.samples(), 700u);
  EXPECT_EQ(b.done().block, 2);
}

TEST(MeasureBlock, StopWhileMeasuringEndsTheBlockAtOnce) {
  BlockRun b;
  b.workload.hook = [&](int begins, int sample) {
    if (begins == 2 && sample == 5) b.control.apply(*parse_control_message("stop 0"));  // begins 2: measuring
  };
  b.run(GoCommand{0, 100.0, {0}});
  EXPECT_TRUE(b.done().stopped);
  EXPECT_EQ(b.sink.samples(), 5u);
  EXPECT_EQ(b.done().measure_end_ns - b.done().measure_start_ns, 5 * kMs);
}

TEST(MeasureBlock, StopOfAnotherBlockDoesNotEndThisOne) {
  BlockRun b;
  b.workload.hook = [&](int begins, int sample) {
    if (begins == 2 && sample == 5) b.control.apply(*parse_control_message("stop 7"));
  };
  b.run(GoCommand{0, 0.020, {0}});
  EXPECT_FALSE(b.done().stopped);
  EXPECT_EQ(b.sink.samples(), 20u);
}

TEST(MeasureBlock, TheEndStopsTheMeasurementAndTheReWarm) {
  BlockRun b;
  b.workload.hook = [&](int begins, int sample) {
    if (begins == 1 && sample == 3) b.control.end();  // during the re-warm
  };
  b.run(GoCommand{0, 100.0, {0}}, 100.0);
  EXPECT_TRUE(b.done().stopped);
  EXPECT_EQ(b.workload.begins, 2);
  EXPECT_EQ(b.sink.samples(), 0u);
}

// ---------------------------------------------------------------- control

TEST(WorkerControl, GoReleasesTheNamedSlotsAndEndReleasesEveryone) {
  WorkerControl c(3);
  EXPECT_TRUE(c.apply(*parse_control_message("go 4 0.5 0,2")));
  const auto a = c.next_block(0);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->block, 4);
  EXPECT_EQ(c.next_block(2)->seconds, 0.5);
  EXPECT_FALSE(c.stopped(4));
  EXPECT_FALSE(c.apply(*parse_control_message("end")));
  EXPECT_TRUE(c.stopped(4));
  EXPECT_FALSE(c.next_block(1)) << "the end wakes a slot that waits";
}

TEST(WorkerControl, ReadControlEndsAtEndOfFileAtEndAndAtGarbage) {
  for (const std::string text : {"go 0 1 0\n", "go 0 1 0\nend\ngo 1 1 0\n", "go 0 1 0\nnonsense\ngo 1 1 0\n", "go 0 1 0\nend"}) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    ASSERT_EQ(write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ASSERT_EQ(close(fds[1]), 0);
    WorkerControl c(1);
    read_control(fds[0], c);
    EXPECT_TRUE(c.ended()) << text;
    EXPECT_FALSE(c.next_block(0)) << text;  // ended: no block left to wait for (block 1 never released)
    ASSERT_EQ(close(fds[0]), 0);
  }
}

// ---------------------------------------------------------------- the whole worker on pipes

Registry counting_registry() {
  Registry r;
  r.add({"count", Backend::host, "counts", {}, [](const Params&, const ExecContext&) { return Support{}; },
         [](const Params&) { return std::make_unique<CountingWorkload>(); }});
  return r;
}

// Reads report lines until `type` arrives (or the pipe ends); blocking.
std::vector<WorkerMessage> read_until(int fd, LineReader& reader, WorkerMessageType type) {
  std::vector<WorkerMessage> got;
  for (;;) {
    std::vector<std::string> lines;
    const ReadStatus st = read_lines(fd, reader, lines);
    for (const auto& l : lines) got.push_back(parse_worker_message(l, {1, 100}));
    for (const auto& m : got)
      if (m.type() == type) return got;
    if (st != ReadStatus::open) return got;
  }
}

TEST(RunWorker, MeasuresTheReleasedBlockAndEndsAtEnd) {
  int control[2], report[2];
  ASSERT_EQ(pipe(control), 0);
  ASSERT_EQ(pipe(report), 0);
  const Registry registry = counting_registry();
  WorkerOptions o;
  o.tenants = {{"count", "{}", {}}};
  o.warmup_s = 0.0;
  o.rewarm_s = 0.0;
  auto worker = std::async(std::launch::async, [&] {
    const int rc = run_worker_on(o, registry, control[0], report[1]);
    close(report[1]);
    return rc;
  });
  LineReader reader;
  auto got = read_until(report[0], reader, WorkerMessageType::ready);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back().type(), WorkerMessageType::ready);
  ASSERT_TRUE(write_all(control[1], to_line(ControlMessage{GoCommand{0, 0.001, {0}}})));
  got = read_until(report[0], reader, WorkerMessageType::done);
  ASSERT_EQ(got.back().type(), WorkerMessageType::done);
  EXPECT_EQ(got.front().type(), WorkerMessageType::started);
  ASSERT_TRUE(write_all(control[1], to_line(ControlMessage{EndCommand{}})));
  EXPECT_EQ(worker.get(), 0);
  got = read_until(report[0], reader, WorkerMessageType::ready);
  EXPECT_TRUE(got.empty()) << "nothing after the end";
  for (int fd : {control[0], control[1], report[0]}) EXPECT_EQ(close(fd), 0);
}

}  // namespace
}  // namespace ib
