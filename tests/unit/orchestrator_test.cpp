// The orchestrator against scripted workers (fake_launcher.h): release from the barrier, the watchdog
// (warm-up deadline, re-armed per block), crashes, bad reports, slow pipes, the grace period after
// "end". Time is fake: the clock jumps to the next thing a worker does, so nothing here sleeps and the
// deadlines are checked to the poll step (50 ms), whatever the speed of the machine.
#include "fake_launcher.h"

#include "harness/run/orchestrator.h"
#include "tests/unit/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace ib {
namespace {

using namespace ib::test;

using fake::kSecond;
using fake::ns;
// For EXPECT_PRED2, which prints both strings when it fails.

constexpr std::int64_t kPollStep = 50'000'000;  // the orchestrator's wait between watchdog checks

Scenario scenario(const std::vector<std::string>& workloads, double duration_s = 3.0, double warmup_s = 1.0,
                  Mode mode = Mode::timeslice) {
  Scenario s;
  s.name = "fake";
  s.mode = mode;
  s.duration_s = duration_s;
  s.warmup_s = warmup_s;
  for (const auto& w : workloads) {
    Tenant t;
    t.name = w;
    t.workload = w;  // the fake picks each worker's script by it
    t.params = nlohmann::json::object();
    s.tenants.push_back(t);
  }
  return s;
}

struct FakeRun {
  fake::World world;
  OrchestratorOptions options;
  FakeRun() {
    options.launcher = &world;
    options.clock = &world;
    options.worker_exe = "fake-worker";
    options.log_dir = "/nonexistent-interference-bench-test";
    options.rounds = 1;
    options.timeout_margin_s = 2.0;
    options.stop_grace_s = 1.0;
    options.rewarm_s = 0.05;
    // The foreign load is read from this machine's /proc: what else runs here is not this test's business.
    options.limits.max_foreign_cpus = 1e9;
    options.limits.max_steal_cpus = 1e9;
  }
  RunResult run(const Scenario& s) {
    Orchestrator o(options);
    return o.run(s, 1);
  }
  std::shared_ptr<fake::Record> only(const std::string& workload) const {
    const auto all = world.of(workload);
    EXPECT_EQ(all.size(), 1u) << workload;
    return all.empty() ? std::make_shared<fake::Record>() : all[0];
  }
};

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Every worker was reaped by the orchestrator (none left to its channel's destructor).
void expect_all_reaped(const fake::World& world) {
  for (const auto& r : world.records) {
    EXPECT_TRUE(r->exit.has_value()) << r->workloads[0];
    EXPECT_FALSE(r->destroyed_running) << r->workloads[0];
  }
}

// ---------------------------------------------------------------- running until decided

Stopping until_decided(int first, int max) {
  Stopping st;
  st.until = StopRule::decided;
  st.first_rounds = first;
  st.max_rounds = max;
  for (int n = first; n <= max; n += 2) st.looks.push_back(n);
  for (std::size_t k = 0; k < st.looks.size(); ++k) st.boundaries.push_back(4.0 - 0.5 * static_cast<double>(k));
  return st;
}

TEST(Orchestrator, ARunUntilDecidedStopsAtTheLookThatDecides) {
  FakeRun f;
  f.options.rounds = 4;
  std::vector<int> seen;
  const LookFn look = [&](const RunResult& so_far, int k) -> std::optional<StoppedBy> {
    seen.push_back(so_far.rounds);
    EXPECT_EQ(so_far.stopping.z, 4.0 - 0.5 * k);  // the look's boundary is the one it judges at
    if (k == 1) return StoppedBy::decided;
    return std::nullopt;
  };
  Orchestrator o(f.options);
  const RunResult r = o.run(scenario({"a", "b"}, 4.0), 1, until_decided(4, 10), look);
  ASSERT_EQ(r.status, RunStatus::ok) << r.message;
  EXPECT_EQ(seen, (std::vector<int>{4, 6}));
  EXPECT_EQ(r.rounds, 6);
  EXPECT_EQ(r.blocks.size(), 18u);  // 6 rounds of exclusive a, exclusive b, colocated
  EXPECT_EQ(r.stopping.looks_taken, 2);
  EXPECT_EQ(r.stopping.z, 3.5);
  EXPECT_EQ(r.stopping.stopped_by, StoppedBy::decided);
  for (const GoCommand& go : f.only("a")->gos()) EXPECT_DOUBLE_EQ(go.seconds, 1.0);  // 4 s over the first 4 rounds
  // The rounds after the first were planned as they began: every phase finished all of its blocks.
  for (const TenantResult& t : r.tenants)
    for (const PhaseResult* p : {&t.exclusive, &t.colocated}) {
      EXPECT_EQ(p->outcome.status, WorkerStatus::ok) << t.name;
      EXPECT_EQ(p->duration_s.size(), 24u);  // 4 samples in each of 6 blocks
    }
  expect_all_reaped(f.world);
}

TEST(Orchestrator, ARunThatNeverDecidesStopsAtItsBudget) {
  FakeRun f;
  f.options.rounds = 4;
  int asked = 0;
  const LookFn never = [&](const RunResult&, int) -> std::optional<StoppedBy> {
    ++asked;
    return std::nullopt;
  };
  Orchestrator o(f.options);
  const RunResult r = o.run(scenario({"a", "b"}, 4.0), 1, until_decided(4, 10), never);
  ASSERT_EQ(r.status, RunStatus::ok) << r.message;
  EXPECT_EQ(asked, 3);  // at 4, 6 and 8 rounds; at 10 the budget ends the run
  EXPECT_EQ(r.rounds, 10);
  EXPECT_EQ(r.blocks.size(), 30u);
  EXPECT_EQ(r.stopping.looks_taken, 4);
  EXPECT_EQ(r.stopping.z, 2.5);  // the last look's boundary
  EXPECT_EQ(r.stopping.stopped_by, StoppedBy::budget);
  // ABBA over all ten rounds.
  EXPECT_EQ(r.blocks[27].phase, Phase::colocated);
  EXPECT_EQ(r.blocks[29].phase, Phase::exclusive);
  // Without a plan: the options' rounds, a fixed length.
  FakeRun g;
  g.options.rounds = 2;
  const RunResult fixed = g.run(scenario({"a"}, 2.0));
  EXPECT_EQ(fixed.rounds, 2);
  EXPECT_EQ(fixed.stopping.stopped_by, StoppedBy::fixed);
  EXPECT_EQ(fixed.stopping.looks, std::vector<int>{2});
}

// ---------------------------------------------------------------- release

TEST(Orchestrator, ReleasesEveryWorkerForItsBlocksOnceAllAreReady) {
  FakeRun f;
  f.options.rounds = 3;
  const RunResult r = f.run(scenario({"a", "b"}));
  ASSERT_EQ(r.status, RunStatus::ok) << r.message;
  ASSERT_EQ(r.blocks.size(), 9u);  // per round: exclusive a, exclusive b, colocated
  const auto a = f.only("a"), b = f.only("b");
  // Workers start one at a time; the first "go" comes after the last one is ready.
  const std::int64_t last_ready = b->started_at + ns(b->script.setup_s);
  for (const auto& [rec, name] : {std::pair{a, "a"}, std::pair{b, "b"}}) {
    std::vector<int> expected, released;
    for (const BlockRecord& blk : r.blocks)
      if (has(blk.tenants, name)) expected.push_back(blk.index);
    for (const GoCommand& go : rec->gos()) {
      released.push_back(go.block);
      EXPECT_EQ(go.slots, std::vector<std::size_t>{0});
      EXPECT_DOUBLE_EQ(go.seconds, 1.0);  // 3 s over 3 rounds
    }
    EXPECT_EQ(released, expected) << name;
    ASSERT_TRUE(rec->first(ControlMessageType::go));
    EXPECT_GE(*rec->first(ControlMessageType::go), last_ready);
    EXPECT_TRUE(rec->first(ControlMessageType::end)) << name;
    EXPECT_FALSE(rec->killed_at) << name;
    EXPECT_EQ(rec->exit->exit_code, 0);
  }
  for (const TenantResult& t : r.tenants) {
    for (const PhaseResult* p : {&t.exclusive, &t.colocated}) {
      EXPECT_EQ(p->outcome.status, WorkerStatus::ok) << t.name;
      EXPECT_EQ(p->duration_s.size(), 12u);  // 4 samples in each of 3 blocks
      EXPECT_EQ(p->block.size(), 12u);
      EXPECT_EQ(p->outcome.env.at("CUDA_VISIBLE_DEVICES"), "fake");
    }
    EXPECT_EQ(t.alone.source, PhaseSource::exclusive);  // time-slicing: alone is exclusive
  }
  expect_all_reaped(f.world);
}

TEST(Orchestrator, StreamsReleasesBothSlotsOfTheOneProcess) {
  FakeRun f;
  const RunResult r = f.run(scenario({"a", "b"}, 2.0, 1.0, Mode::streams));
  ASSERT_EQ(r.status, RunStatus::ok) << r.message;
  const auto a = f.world.of("a");
  ASSERT_EQ(a.size(), 2u);  // the plain process of a, then the streams process (a and b)
  ASSERT_EQ(a[1]->workloads, (std::vector<std::string>{"a", "b"}));
  const auto gos = a[1]->gos();
  ASSERT_EQ(gos.size(), 1u);
  EXPECT_EQ(gos[0].slots, (std::vector<std::size_t>{0, 1}));
  for (const TenantResult& t : r.tenants) EXPECT_EQ(t.colocated.duration_s.size(), 4u) << t.name;
  expect_all_reaped(f.world);
}

// Every process of a tenant runs what its first process resolved (gemm's algorithm, an open loop's
// rate): the later one is given it, and one that reports another configuration is the worker's error
// (its phase would measure something else: a bias without a sign), not a silent comparison.
TEST(Orchestrator, LaterProcessesAreGivenAndMustRunWhatTheFirstResolved) {
  FakeRun f;
  f.world.scripts["a"].resolved_per_start = {{{"algo", "id=1,tile=2"}}};
  const RunResult ok = f.run(scenario({"a", "b"}, 2.0, 1.0, Mode::streams));
  ASSERT_EQ(ok.status, RunStatus::ok) << ok.message;
  const auto a = f.world.of("a");
  ASSERT_EQ(a.size(), 2u);  // the plain process, then the streams process (a and b)
  EXPECT_FALSE(a[0]->params[0].contains("algo"));
  EXPECT_EQ(a[1]->params[0].at("algo"), "id=1,tile=2");
  EXPECT_EQ(ok.tenants[0].resolved_params, (nlohmann::json{{"algo", "id=1,tile=2"}}));

  FakeRun g;
  g.world.scripts["a"].resolved_per_start = {{{"algo", "id=1,tile=2"}}, {{"algo", "id=1,tile=3"}}};
  const RunResult bad = g.run(scenario({"a", "b"}, 2.0, 1.0, Mode::streams));
  EXPECT_EQ(bad.status, RunStatus::error);
  EXPECT_PRED2(contains, bad.message, "this process resolved {\"algo\":\"id=1,tile=3\"}, the tenant's first process "
                                      "{\"algo\":\"id=1,tile=2\"}");
  expect_all_reaped(g.world);
}

// ---------------------------------------------------------------- the watchdog

TEST(Orchestrator, AWorkerNeverReadyIsKilledAtItsDeadlineAndTheOthersStopped) {
  FakeRun f;
  f.world.scripts["stuck"].never_ready = true;
  const RunResult r = f.run(scenario({"a", "stuck"}, 3.0, 1.0));
  const auto a = f.only("a"), stuck = f.only("stuck");
  // Killed at once when warm-up (1 s) + margin (2 s) passed: not left to the stop that follows.
  ASSERT_TRUE(stuck->killed_at);
  EXPECT_GT(*stuck->killed_at, stuck->started_at + 3 * kSecond);
  EXPECT_LE(*stuck->killed_at, stuck->started_at + 3 * kSecond + kPollStep);
  const auto end = stuck->first(ControlMessageType::end);
  EXPECT_FALSE(end && *end < *stuck->killed_at) << "told to end before it was killed";
  EXPECT_EQ(stuck->exit->signal, 9);
  const WorkerOutcome& oc = r.tenants[1].exclusive.outcome;
  EXPECT_EQ(oc.status, WorkerStatus::timeout);
  EXPECT_PRED2(contains, oc.message, "no ready within");
  EXPECT_EQ(oc.signal, 9);
  // The ready neighbour was never released, told to end, and exited by itself.
  EXPECT_TRUE(a->gos().empty());
  EXPECT_TRUE(a->first(ControlMessageType::end));
  EXPECT_FALSE(a->killed_at);
  EXPECT_EQ(a->exit->exit_code, 0);
  EXPECT_EQ(r.tenants[0].exclusive.outcome.status, WorkerStatus::not_run);
  EXPECT_EQ(r.status, RunStatus::error);
  EXPECT_PRED2(starts_with, r.message, "exclusive phase failed: stuck timeout");
  EXPECT_TRUE(r.blocks.empty());
  expect_all_reaped(f.world);
}

TEST(Orchestrator, ABlockLongerThanWarmUpAndMarginIsNotCutShort) {
  FakeRun f;
  f.options.timeout_margin_s = 1.0;
  f.world.scripts["a"].late_s = 0.5;  // "done" comes late, still inside the margin
  // A 10 s block after a 0.5 s warm-up: the warm-up's deadline (1.5 s) must not apply to it.
  const RunResult r = f.run(scenario({"a"}, 10.0, 0.5, Mode::exclusive));
  ASSERT_EQ(r.status, RunStatus::ok) << r.message;
  EXPECT_EQ(r.tenants[0].exclusive.outcome.status, WorkerStatus::ok);
  EXPECT_FALSE(f.only("a")->killed_at);
  ASSERT_EQ(r.blocks.size(), 1u);
  EXPECT_GE(r.blocks[0].end_ns - r.blocks[0].start_ns, ns(10.5));
  expect_all_reaped(f.world);
}

TEST(Orchestrator, AWorkerHangingInABlockIsKilledAtTheBlocksDeadline) {
  FakeRun f;
  f.options.timeout_margin_s = 1.0;
  f.world.scripts["a"].hang_in_block = 0;
  const RunResult r = f.run(scenario({"a"}, 10.0, 0.5, Mode::exclusive));
  const auto a = f.only("a");
  ASSERT_EQ(r.blocks.size(), 1u);
  // Block (10 s) + re-warm (0.05 s) + margin (1 s) after the release, and at once.
  const std::int64_t deadline = r.blocks[0].start_ns + ns(10.0 + 0.05 + 1.0);
  ASSERT_TRUE(a->killed_at);
  EXPECT_GT(*a->killed_at, deadline);
  EXPECT_LE(*a->killed_at, deadline + kPollStep);
  const auto end = a->first(ControlMessageType::end);
  EXPECT_FALSE(end && *end < *a->killed_at) << "told to end before it was killed";
  const WorkerOutcome& oc = r.tenants[0].exclusive.outcome;
  EXPECT_EQ(oc.status, WorkerStatus::timeout);
  EXPECT_PRED2(contains, oc.message, "no end of its block within 10");
  EXPECT_EQ(r.blocks[0].status, BlockStatus::failed);
  EXPECT_EQ(r.tenants[0].exclusive.duration_s.size(), 2u);  // the batch it sent before it hung is kept
  expect_all_reaped(f.world);
}

TEST(Orchestrator, AWorkerThatIgnoresEndIsKilledAfterTheGracePeriod) {
  FakeRun f;
  f.world.scripts["a"].ignores_end = true;
  const RunResult r = f.run(scenario({"a"}, 1.0, 0.5, Mode::exclusive));
  ASSERT_EQ(r.status, RunStatus::ok) << r.message;  // every block had finished: still measured
  const auto a = f.only("a");
  ASSERT_TRUE(a->killed_at && a->first(ControlMessageType::end));
  EXPECT_GT(*a->killed_at, *a->first(ControlMessageType::end) + ns(f.options.stop_grace_s));
  EXPECT_LE(*a->killed_at, *a->first(ControlMessageType::end) + ns(f.options.stop_grace_s) + kPollStep);
  EXPECT_EQ(r.tenants[0].exclusive.outcome.status, WorkerStatus::ok);
  expect_all_reaped(f.world);
}

// ---------------------------------------------------------------- failures in a block

TEST(Orchestrator, ACrashMidPhaseStopsTheNeighbourAndKeepsWhatWasSent) {
  FakeRun f;
  f.world.scripts["a"].crash_in_block = 2;  // round 1: exclusive a, exclusive b, colocated
  const RunResult r = f.run(scenario({"a", "b"}));
  EXPECT_EQ(r.status, RunStatus::error);
  EXPECT_PRED2(starts_with, r.message, "colocated phase failed: a crashed");
  ASSERT_EQ(r.blocks.size(), 3u);
  EXPECT_EQ(r.blocks[2].status, BlockStatus::failed);
  const TenantResult &a = r.tenants[0], &b = r.tenants[1];
  EXPECT_EQ(a.exclusive.outcome.status, WorkerStatus::ok);
  EXPECT_EQ(a.colocated.outcome.status, WorkerStatus::crashed);
  EXPECT_EQ(a.colocated.outcome.signal, 6);
  EXPECT_EQ(a.colocated.duration_s.size(), 2u);  // the first batch, sent before the crash
  EXPECT_EQ(b.colocated.outcome.status, WorkerStatus::stopped);
  const auto rb = f.only("b");
  EXPECT_TRUE(rb->first(ControlMessageType::end));
  EXPECT_FALSE(rb->killed_at);
  EXPECT_EQ(rb->exit->exit_code, 0);
  expect_all_reaped(f.world);
}

TEST(Orchestrator, TheLastReportWithoutItsNewlineIsRead) {
  FakeRun f;
  f.world.scripts["b"].error_in_block = 1;
  f.world.scripts["b"].error_text = "out of memory in the last words";
  const RunResult r = f.run(scenario({"a", "b"}));
  const WorkerOutcome& oc = r.tenants[1].exclusive.outcome;
  EXPECT_EQ(oc.status, WorkerStatus::error) << oc.message;  // not "exited": its error report was read
  EXPECT_EQ(oc.message, "out of memory in the last words");
  EXPECT_EQ(oc.exit_code, 1);
  EXPECT_PRED2(starts_with, r.message, "exclusive phase failed: b error: out of memory in the last words");
  expect_all_reaped(f.world);
}

// Issue 49: a worker lost between its blocks (its node died while a neighbour's block ran) had not_run in every
// phase, so no outcome named it and the run ended ok with "phases missing". Its failure is named in the phase the
// repetition stopped in.
TEST(Orchestrator, AWorkerLostWhileANeighboursBlockRunsIsNamedInThatPhase) {
  FakeRun f;
  f.world.scripts["b"].lost_at_s = 1.0;  // b ready at about 0.25 s; a's exclusive block runs from about 0.3 s to 3.3 s
  const RunResult r = f.run(scenario({"a", "b"}));
  EXPECT_EQ(r.status, RunStatus::error);
  EXPECT_PRED2(starts_with, r.message, "exclusive phase failed: b crashed: node 1 (fake) was lost mid-run");
  ASSERT_EQ(r.blocks.size(), 1u);
  EXPECT_EQ(r.blocks[0].status, BlockStatus::failed);
  const TenantResult &a = r.tenants[0], &b = r.tenants[1];
  EXPECT_EQ(a.exclusive.outcome.status, WorkerStatus::stopped);
  EXPECT_EQ(b.exclusive.outcome.status, WorkerStatus::crashed);
  EXPECT_EQ(b.exclusive.outcome.message, "node 1 (fake) was lost mid-run");
  EXPECT_EQ(b.colocated.outcome.status, WorkerStatus::not_run);  // the phase it never reached
  expect_all_reaped(f.world);
}

// A bad report is that worker's error (what was wrong, in at most 200 characters), never a crash of
// the harness; the run goes on to record every outcome.
struct Garbage {
  std::string name, line, says;
};
void PrintTo(const Garbage& g, std::ostream* os) { *os << g.name; }

class BadReport : public ::testing::TestWithParam<Garbage> {};

TEST_P(BadReport, IsTheWorkersErrorAndTheRunRecordsItsOutcomes) {
  FakeRun f;
  f.world.scripts["b"].garbage_block = 1;  // its exclusive block
  f.world.scripts["b"].garbage = GetParam().line;
  const RunResult r = f.run(scenario({"a", "b"}));
  const WorkerOutcome& oc = r.tenants[1].exclusive.outcome;
  EXPECT_EQ(oc.status, WorkerStatus::error);
  EXPECT_PRED2(starts_with, oc.message, "malformed message from worker: ");
  EXPECT_PRED2(contains, oc.message, GetParam().says);
  EXPECT_LE(oc.message.size(), 200u);
  EXPECT_EQ(r.status, RunStatus::error);
  EXPECT_PRED2(starts_with, r.message, "exclusive phase failed: b error: malformed message");
  ASSERT_EQ(r.blocks.size(), 2u);
  EXPECT_EQ(r.blocks[1].status, BlockStatus::failed);
  EXPECT_EQ(r.tenants[0].exclusive.outcome.status, WorkerStatus::ok);
  EXPECT_EQ(r.tenants[0].colocated.outcome.status, WorkerStatus::not_run);
  EXPECT_TRUE(r.tenants[1].exclusive.duration_s.empty());  // nothing of the bad report was taken
  expect_all_reaped(f.world);
}

INSTANTIATE_TEST_SUITE_P(
    Orchestrator, BadReport,
    ::testing::Values(
        Garbage{"NotJson", "this is not json " + std::string(100000, 'x'), "not JSON: \"this is not json"},
        Garbage{"NotAnObject", "[1,2,3]", "not a JSON object"},
        Garbage{"UnknownType", R"({"type":")" + std::string(5000, 'q') + R"("})", "unknown type \"qqqq"},
        Garbage{"ArraysOfDifferentLength", R"({"type":"samples","block":1,"start_ns":[1,2],"duration_s":[0.5]})",
                "samples: duration_s has 1 entries, start_ns 2"},
        Garbage{"NegativeDuration", R"({"type":"samples","block":1,"start_ns":[1],"duration_s":[-0.5]})",
                "duration_s[0] is -0.5"},
        Garbage{"NegativeStart", R"({"type":"samples","block":1,"start_ns":[-5],"duration_s":[0.5]})", "start_ns[0] is -5"},
        Garbage{"LatencyCountsThatDoNotAddUp",
                R"({"type":"samples","block":1,"start_ns":[1],"duration_s":[0.5],"latency_count":[3],"latencies_s":[0.1]})",
                "latency_count sums to 3, latencies_s has 1"},
        Garbage{"BlockNotReleased", R"({"type":"done","block":7,"measure_start_ns":1,"measure_end_ns":2})",
                "done: block 7 is not a released block"},
        Garbage{"NoSuchSlot", R"({"type":"started","block":1,"t_ns":5,"slot":3})", "slot 3 is not one of"},
        Garbage{"EnvNotStrings", R"({"type":"ready","work":1,"unit":"s","env":{"A":1}})", "env.A is 1, not a string"},
        Garbage{"CounterOfAnotherLength",
                R"({"type":"samples","block":1,"start_ns":[1],"duration_s":[0.5],"counters":{"x":[1,2]}})",
                "counters.x has 2 entries"},
        Garbage{"LongerThanTheLineLimit", std::string(kMaxReportLineBytes + 1, 'z'), "a line longer than 16777216 bytes"}),
    [](const ::testing::TestParamInfo<Garbage>& info) { return info.param.name; });

// ---------------------------------------------------------------- slow pipes

TEST(Orchestrator, ReportsThatArriveInPiecesAndLateGiveTheSameResults) {
  FakeRun whole, slow;
  whole.options.rounds = slow.options.rounds = 2;
  for (const char* w : {"a", "b"}) {
    fake::Script& s = slow.world.scripts[w];
    s.piece_bytes = 7;       // a line is read in many pieces ...
    s.piece_gap_s = 0.002;   // ... that come 2 ms apart
    s.late_s = 0.8;          // and "done" comes late (inside the 2 s margin)
  }
  const RunResult a = whole.run(scenario({"a", "b"}));
  const RunResult b = slow.run(scenario({"a", "b"}));
  ASSERT_EQ(a.status, RunStatus::ok) << a.message;
  ASSERT_EQ(b.status, RunStatus::ok) << b.message;
  ASSERT_EQ(b.blocks.size(), a.blocks.size());
  for (std::size_t i = 0; i < a.tenants.size(); ++i)
    for (Phase p : {Phase::exclusive, Phase::colocated}) {
      const PhaseResult &x = phase_of(a.tenants[i], p), &y = phase_of(b.tenants[i], p);
      EXPECT_EQ(y.outcome.status, WorkerStatus::ok);
      EXPECT_EQ(y.duration_s, x.duration_s);
      EXPECT_EQ(y.block, x.block);
      EXPECT_EQ(y.start_ns.size(), x.start_ns.size());
    }
  expect_all_reaped(slow.world);
}

}  // namespace
}  // namespace ib
