// Phase summaries, per-run metrics/verdicts and the exit code (harness/analysis/analysis.h).
#include "harness/analysis/analysis.h"
#include "tests/unit/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ib {
namespace {

using namespace ib::test;


std::int64_t ns(double seconds) { return static_cast<std::int64_t>(std::llround(seconds * 1e9)); }

// summarize_phase with one block holding every sample: a colocated block with overlap window
// [ws, we] when a window is given, otherwise an exclusive block (every sample counts).
void summarize_window(PhaseResult& p, const Work& work, std::optional<std::int64_t> ws, std::optional<std::int64_t> we) {
  BlockRecord b;
  b.phase = ws ? Phase::colocated : Phase::exclusive;
  if (ws) {
    b.overlap_start_ns = *ws;
    b.overlap_end_ns = *we;
  }
  p.block.assign(p.start_ns.size(), 0);
  p.in_window.clear();
  p.counted.clear();
  summarize_phase(p, work, {b});
}

// A measured phase (outcome ok) with back-to-back samples of the given durations, summarized with
// no overlap window.
PhaseResult make_phase(const std::vector<double>& durations, WorkerStatus status = WorkerStatus::ok,
                       const Work& work = {1.0, "FLOP"}) {
  PhaseResult p;
  p.outcome.status = status;
  std::int64_t t = 100 * kSec;
  for (double d : durations) {
    p.start_ns.push_back(t);
    p.duration_s.push_back(d);
    t += ns(d);
  }
  summarize_window(p, work, std::nullopt, std::nullopt);
  return p;
}

PhaseResult not_run() {
  PhaseResult p;  // outcome "not_run", no samples
  return p;
}

std::vector<double> repeat(double v, int n) { return std::vector<double>(static_cast<std::size_t>(n), v); }

// Alternating a, b, a, b, ... n values.
std::vector<double> alternate(double a, double b, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(i % 2 ? b : a);
  return v;
}

// Under time-slicing the orchestrator copies exclusive into alone, marks it and drops the samples.
PhaseResult timeslice_alone(const PhaseResult& exclusive) {
  PhaseResult a = exclusive;
  a.source = PhaseSource::exclusive;
  a.start_ns.clear();
  a.duration_s.clear();
  a.in_window.clear();
  a.outlier.clear();
  return a;
}

TenantResult tenant(const std::string& name, PhaseResult e, PhaseResult a, PhaseResult c) {
  TenantResult t;
  t.name = name;
  t.workload = "host-compute";
  t.work = {1.0, "FLOP"};
  t.exclusive = std::move(e);
  t.alone = std::move(a);
  t.colocated = std::move(c);
  return t;
}

RunResult run_of(std::vector<TenantResult> tenants, const std::string& mode = "mps") {
  RunResult r;
  r.scenario = "unit";
  r.mode = mode;
  r.cutoff = 0.40;
  r.tenants = std::move(tenants);
  return r;
}

int count_containing(const std::vector<Warning>& v, const std::string& needle) {
  int n = 0;
  for (const auto& w : v) n += w.text.find(needle) != std::string::npos;
  return n;
}

// ================================================================ summarize_phase

// Overlap window [10 s, 20 s]. Samples:
//   0: start  9.5 s,           dur 1.0          -> out (starts before the window)
//   1: start 10.0 s,           dur 1.0          -> in  (starts exactly at the window start)
//   2: start 11.0 s,           dur 2.0          -> in
//   3: start 13.0 s,           dur 3.0          -> in
//   4: start 16.0 s,           dur 4.0          -> in  (ends exactly at the window end)
//   5: start 19.0 s,           dur 1.5          -> out (ends 20.5 s)
//   6: start 16.0 s,           dur 4.000000001  -> out (ends 1 ns after the window end)
//   7: start 10 s - 1 ns,      dur 0.5          -> out (starts 1 ns before the window start)
PhaseResult window_phase() {
  PhaseResult p;
  p.outcome.status = WorkerStatus::ok;
  p.start_ns = {ns(9.5), 10 * kSec, 11 * kSec, 13 * kSec, 16 * kSec, 19 * kSec, 16 * kSec, 10 * kSec - 1};
  p.duration_s = {1.0, 1.0, 2.0, 3.0, 4.0, 1.5, 4.000000001, 0.5};
  return p;
}

TEST(SummarizePhase, InWindowBoundaries) {
  PhaseResult p = window_phase();
  summarize_window(p, {10.0, "FLOP"}, 10 * kSec, 20 * kSec);
  EXPECT_EQ(p.in_window, (std::vector<std::uint8_t>{0, 1, 1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(p.outlier.size(), p.start_ns.size());
}

TEST(SummarizePhase, StatsOverInWindowSamplesOnly) {
  PhaseResult p = window_phase();
  summarize_window(p, {10.0, "FLOP"}, 10 * kSec, 20 * kSec);
  // Counted durations [1, 2, 3, 4]: mean 2.5, median 2.5, stddev sqrt(5/3) = 1.2909944487358056,
  // min 1, max 4; P95: h = 3 * 0.95 = 2.85 -> 3 + 0.85 = 3.85.
  EXPECT_EQ(p.stats.n, 4u);
  EXPECT_NEAR(p.stats.mean, 2.5, kTol);
  EXPECT_NEAR(p.stats.median, 2.5, kTol);
  EXPECT_NEAR(p.stats.stddev, 1.2909944487358056, kTol);
  EXPECT_NEAR(p.stats.min, 1.0, kTol);
  EXPECT_NEAR(p.stats.max, 4.0, kTol);
  EXPECT_NEAR(p.stats.p95, 3.85, kTol);
  EXPECT_EQ(counted_values(p), (std::vector<double>{1.0, 2.0, 3.0, 4.0}));
  // throughput = n * work / sum(duration) = 4 * 10 / (1+2+3+4) = 4 FLOP/s
  EXPECT_NEAR(p.throughput, 4.0, kTol);
  EXPECT_EQ(p.throughput_unit, "FLOP/s");
  // window_cv over the in-window samples only, 1 s windows from 10 s to 20 s (work 10/sample):
  //   [10,11) gets sample 1 whole: 10; [11,12),[12,13) get 5 each (sample 2 over 2 s);
  //   [13..16) 10/3 each; [16..20) 2.5 each -> CV of [10,5,5,10/3,10/3,10/3,2.5,2.5,2.5,2.5]
  //   = 0.5793514892948392.
  EXPECT_NEAR(p.window_cv, 0.5793514892948392, 1e-9);
}

TEST(SummarizePhase, NoWindowCountsEverySample) {
  PhaseResult p = window_phase();
  summarize_window(p, {10.0, "FLOP"}, std::nullopt, std::nullopt);
  EXPECT_EQ(p.in_window, std::vector<std::uint8_t>(8, 1));
  EXPECT_EQ(p.stats.n, 8u);
  // sum = 1+1+2+3+4+1.5+4.000000001+0.5 = 17.000000001 -> throughput = 8*10/17.000000001
  EXPECT_NEAR(p.throughput, 80.0 / 17.000000001, 1e-12);
  EXPECT_NEAR(p.stats.max, 4.000000001, kTol);
  EXPECT_NEAR(p.stats.min, 0.5, kTol);
}

TEST(SummarizePhase, ThroughputUnitFollowsWork) {
  PhaseResult p = make_phase({0.5, 0.25, 0.25}, WorkerStatus::ok, {1024.0, "B"});
  // 3 * 1024 / 1.0 = 3072 B/s
  EXPECT_NEAR(p.throughput, 3072.0, kTol);
  EXPECT_EQ(p.throughput_unit, "B/s");
}

TEST(SummarizePhase, OutliersFlaggedOnlyAmongInWindowSamples) {
  // In-window durations [1,2,3,4,5,6,14.5]: median 4, MAD 2, M(14.5) = 0.6745*10.5/2 = 3.54 > 3.5:
  // flagged. Out-of-window samples of 100 s and 0.001 s would be flagged if they counted, and
  // would also shift the median and MAD.
  PhaseResult p;
  p.outcome.status = WorkerStatus::ok;
  const std::int64_t ws = 1000 * kSec, we = 2000 * kSec;
  const std::vector<double> in = {1, 2, 3, 4, 5, 6, 14.5};
  std::int64_t t = ws;
  p.start_ns.push_back(ws - 200 * kSec);  // out: before the window
  p.duration_s.push_back(100.0);
  for (double d : in) {
    p.start_ns.push_back(t);
    p.duration_s.push_back(d);
    t += ns(d);
  }
  p.start_ns.push_back(we);  // out: starts at the window end, ends after it
  p.duration_s.push_back(0.001);
  summarize_window(p, {1.0, "s"}, ws, we);
  EXPECT_EQ(p.in_window, (std::vector<std::uint8_t>{0, 1, 1, 1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(p.outlier, (std::vector<std::uint8_t>{0, 0, 0, 0, 0, 0, 0, 1, 0}));
  EXPECT_EQ(p.outliers, 1u);
  EXPECT_EQ(p.stats.n, 7u);
  EXPECT_NEAR(p.stats.median, 4.0, kTol);
}

TEST(SummarizePhase, ResummarizingResetsOutliers) {
  PhaseResult p = make_phase({1, 2, 3, 4, 5, 6, 14.5});
  EXPECT_EQ(p.outliers, 1u);
  p.duration_s.back() = 6.5;  // M = 0.6745 * 2.5 / 2 = 0.84: not an outlier any more
  summarize_window(p, {1.0, "FLOP"}, std::nullopt, std::nullopt);
  EXPECT_EQ(p.outliers, 0u);
  EXPECT_EQ(p.outlier, std::vector<std::uint8_t>(7, 0));
}

// ================================================================ finalize_run

TEST(FinalizeRun, TimesliceUsesExclusiveSamplesForAlone) {
  // E: 80 samples alternating 1.0/1.01 (median 1.005); C = 1.2 E (median 1.206).
  const auto Ed = alternate(1.0, 1.01, 80);
  std::vector<double> Cd;
  for (double d : Ed) Cd.push_back(1.2 * d);
  PhaseResult E = make_phase(Ed);
  RunResult run = run_of({tenant("t0", E, timeslice_alone(E), make_phase(Cd))}, "timeslice");
  finalize_run(run, 99, 200);
  const TenantResult& t = run.tenants[0];
  ASSERT_TRUE(t.metrics.has_value());
  // partition_cost = median(E)/median(E) = 1 exactly; interference = median(C)/median(E) = 1.2.
  EXPECT_DOUBLE_EQ(t.metrics->partition_cost, 1.0);
  EXPECT_NEAR(t.metrics->interference, 1.2, 1e-12);
  EXPECT_NEAR(t.metrics->median_slowdown, 0.2, 1e-12);
  EXPECT_NEAR(t.metrics->p95_slowdown.value, 0.2, 1e-12);
  EXPECT_EQ(t.verdict, Verdict::pass) << t.verdict_reason;
  // STP = median(E)/median(C) = 1/1.2; ANTT = 1.2 (alone is exclusive: both references agree).
  ASSERT_TRUE(run.system.has_value());
  EXPECT_NEAR(run.system->stp_alone, 1.0 / 1.2, 1e-12);
  EXPECT_NEAR(run.system->antt_alone, 1.2, 1e-12);
  EXPECT_NEAR(run.system->stp_exclusive, 1.0 / 1.2, 1e-12);
  EXPECT_NEAR(run.system->antt_exclusive, 1.2, 1e-12);
}

TEST(FinalizeRun, VerdictPassFailInconclusive) {
  // E constant 1.0; C constant 1.2 -> p95_slowdown 0.2 <= 0.4 pass; C 1.5 -> 0.5 > 0.4 fail;
  // 71 exclusive samples -> inconclusive even though the slowdown (0.5) would fail.
  RunResult run = run_of({tenant("pass", make_phase(repeat(1.0, 72)), make_phase(repeat(1.0, 72)), make_phase(repeat(1.2, 72))),
                          tenant("fail", make_phase(repeat(1.0, 72)), make_phase(repeat(1.0, 72)), make_phase(repeat(1.5, 72))),
                          tenant("short", make_phase(repeat(1.0, 71)), make_phase(repeat(1.0, 71)), make_phase(repeat(1.5, 200)))});
  finalize_run(run, 1000, 50);
  EXPECT_EQ(run.tenants[0].verdict, Verdict::pass) << run.tenants[0].verdict_reason;
  EXPECT_EQ(run.tenants[1].verdict, Verdict::fail) << run.tenants[1].verdict_reason;
  EXPECT_EQ(run.tenants[2].verdict, Verdict::inconclusive) << run.tenants[2].verdict_reason;
  EXPECT_NEAR(run.tenants[1].metrics->p95_slowdown.value, 0.5, kTol);
  EXPECT_NEAR(run.tenants[2].metrics->p95_slowdown.value, 0.5, kTol);
  EXPECT_NE(run.tenants[1].verdict_reason.find("cutoff"), std::string::npos);
  // Each tenant's bootstrap is seeded with seed + its index.
  EXPECT_EQ(run.tenants[0].metrics->p95_slowdown.seed, 1000u);
  EXPECT_EQ(run.tenants[1].metrics->p95_slowdown.seed, 1001u);
  EXPECT_EQ(run.tenants[2].metrics->p95_slowdown.seed, 1002u);
  EXPECT_EQ(run.tenants[0].metrics->p95_slowdown.resamples, 50);
}

TEST(FinalizeRun, OverlapWindowCountsOnlyInWindowColocatedSamples) {
  // 72 exclusive samples of 1.0. Colocated: 72 in-window samples of 1.1 plus 10 out-of-window
  // samples of 5.0 (before the window). Counting only in-window samples, P95(C) = 1.1 -> pass;
  // counting all would give P95 = 5.0 -> fail.
  PhaseResult C;
  C.outcome.status = WorkerStatus::ok;
  const std::int64_t ws = 1000 * kSec;
  std::int64_t t = 0;
  for (int i = 0; i < 10; ++i, t += 5 * kSec) {
    C.start_ns.push_back(t);
    C.duration_s.push_back(5.0);
  }
  t = ws;
  for (int i = 0; i < 72; ++i, t += ns(1.1)) {
    C.start_ns.push_back(t);
    C.duration_s.push_back(1.1);
  }
  summarize_window(C, {1.0, "FLOP"}, ws, t);
  ASSERT_EQ(C.stats.n, 72u);
  RunResult run = run_of({tenant("t", make_phase(repeat(1.0, 72)), make_phase(repeat(1.0, 72)), C)});
  finalize_run(run, 1, 20);
  EXPECT_NEAR(run.tenants[0].metrics->p95_slowdown.value, 0.1, 1e-12);
  EXPECT_EQ(run.tenants[0].verdict, Verdict::pass);
}

TEST(FinalizeRun, CrashedWorkerGivesError) {
  PhaseResult C = not_run();
  C.outcome.status = WorkerStatus::crashed;
  C.outcome.message = "killed by signal 11";
  RunResult run = run_of({tenant("t", make_phase(repeat(1.0, 72)), make_phase(repeat(1.0, 72)), C)});
  finalize_run(run, 1, 20);
  const TenantResult& t = run.tenants[0];
  EXPECT_EQ(t.verdict, Verdict::error);
  EXPECT_EQ(t.verdict_reason, "worker crashed: killed by signal 11");
  EXPECT_FALSE(t.metrics.has_value());
  EXPECT_FALSE(run.system.has_value());
}

TEST(FinalizeRun, FailedAloneWorkerOverridesPassingSlowdown) {
  // Exclusive and colocated measured and would pass, but the alone worker timed out.
  PhaseResult A = make_phase(repeat(1.0, 10));
  A.outcome.status = WorkerStatus::timeout;
  RunResult run = run_of({tenant("t", make_phase(repeat(1.0, 72)), A, make_phase(repeat(1.1, 72)))});
  finalize_run(run, 1, 20);
  EXPECT_EQ(run.tenants[0].verdict, Verdict::error);
  EXPECT_EQ(run.tenants[0].verdict_reason, "worker timeout");
  EXPECT_FALSE(run.system.has_value());
}

TEST(FinalizeRun, ExclusiveModeIsBaseline) {
  RunResult run = run_of({tenant("t", make_phase(repeat(1.0, 80)), not_run(), not_run())}, "exclusive");
  finalize_run(run, 1, 20);
  EXPECT_EQ(run.tenants[0].verdict, Verdict::baseline);
  EXPECT_FALSE(run.tenants[0].metrics.has_value());
  EXPECT_FALSE(run.system.has_value());
}

TEST(FinalizeRun, MissingColocatedOutsideExclusiveModeIsError) {
  RunResult run = run_of({tenant("t", make_phase(repeat(1.0, 80)), make_phase(repeat(1.0, 80)), not_run())}, "mps");
  finalize_run(run, 1, 20);
  EXPECT_EQ(run.tenants[0].verdict, Verdict::error);
  EXPECT_EQ(run.tenants[0].verdict_reason, "not measured: phases missing");
  // The run's message, when there is one, says why.
  RunResult run2 = run_of({tenant("t", make_phase(repeat(1.0, 80)), make_phase(repeat(1.0, 80)), not_run())}, "mps");
  run2.message = "interrupted before the colocated phase";
  finalize_run(run2, 1, 20);
  EXPECT_EQ(run2.tenants[0].verdict, Verdict::error);
  EXPECT_EQ(run2.tenants[0].verdict_reason, "not measured: interrupted before the colocated phase");
}

TEST(FinalizeRun, WaivedExclusiveGivesWaived) {
  PhaseResult E = not_run();
  E.outcome.status = WorkerStatus::waived;
  E.outcome.message = "needs 2 GPUs";
  RunResult run = run_of({tenant("t", E, not_run(), not_run())});
  finalize_run(run, 1, 20);
  EXPECT_EQ(run.tenants[0].verdict, Verdict::waived);
  EXPECT_EQ(run.tenants[0].verdict_reason, "needs 2 GPUs");
}

TEST(FinalizeRun, NoisyBaselineWarning) {
  // Exclusive alternating 0.97/1.03 (72 values): mean 1, stddev = sqrt(72*0.0009/71) = 0.030211,
  // CV 3.02% > 2% -> warning. Alone alternating 0.99/1.01: CV 1.007% -> no warning.
  // MAD of both is the half-spread, so every |M| = 0.6745: no outlier warnings.
  RunResult run = run_of({tenant("t", make_phase(alternate(0.97, 1.03, 72)), make_phase(alternate(0.99, 1.01, 72)),
                                 make_phase(alternate(0.99, 1.01, 72)))});
  finalize_run(run, 1, 20);
  const auto& w = run.tenants[0].warnings;
  ASSERT_EQ(w.size(), 1u) << (w.empty() ? "" : w[0].text);
  EXPECT_EQ(w[0].kind, WarningKind::noisy_baseline);
  EXPECT_NE(w[0].text.find("noisy baseline"), std::string::npos) << w[0].text;
  EXPECT_NE(w[0].text.find("exclusive phase"), std::string::npos) << w[0].text;
  EXPECT_NE(w[0].text.find("3.02%"), std::string::npos) << w[0].text;
  EXPECT_NE(w[0].text.find("above 2%"), std::string::npos) << w[0].text;
}

TEST(FinalizeRun, NoisyAloneWarnsToo) {
  RunResult run = run_of({tenant("t", make_phase(alternate(0.99, 1.01, 72)), make_phase(alternate(0.97, 1.03, 72)),
                                 make_phase(alternate(0.99, 1.01, 72)))});
  finalize_run(run, 1, 20);
  const auto& w = run.tenants[0].warnings;
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].text.find("alone phase"), std::string::npos) << w[0].text;
}

TEST(FinalizeRun, QuietBaselineNoWarning) {
  RunResult run = run_of({tenant("t", make_phase(alternate(0.99, 1.01, 72)), make_phase(alternate(0.99, 1.01, 72)),
                                 make_phase(alternate(1.5, 1.6, 72)))});  // colocated noise is not a baseline
  finalize_run(run, 1, 20);
  EXPECT_TRUE(run.tenants[0].warnings.empty()) << run.tenants[0].warnings[0].text;
}

TEST(FinalizeRun, TimesliceNoisyExclusiveWarnsOnce) {
  // The time-slice alone phase is the exclusive one: warn about it once, not twice.
  PhaseResult E = make_phase(alternate(0.97, 1.03, 72));
  RunResult run = run_of({tenant("t", E, timeslice_alone(E), make_phase(alternate(0.99, 1.01, 72)))}, "timeslice");
  finalize_run(run, 1, 20);
  EXPECT_EQ(count_containing(run.tenants[0].warnings, "noisy baseline"), 1);
}

TEST(FinalizeRun, OutlierWarning) {
  // 35 x 1.0, 36 x 1.02 and one 3.0: median 1.02; deviations 36 x 0, 35 x 0.02, 1.98 -> MAD 0.01.
  // M(1.0) = 0.6745 * 0.02 / 0.01 = 1.35; M(3.0) = 0.6745 * 1.98 / 0.01 = 133.6 -> one outlier.
  auto c2 = alternate(1.0, 1.02, 72);
  c2[10] = 3.0;
  RunResult run = run_of({tenant("t", make_phase(repeat(1.0, 72)), make_phase(repeat(1.0, 72)), make_phase(c2))});
  finalize_run(run, 1, 20);
  EXPECT_EQ(run.tenants[0].colocated.outliers, 1u);
  EXPECT_EQ(count_containing(run.tenants[0].warnings, "1 outlier sample(s) flagged (MAD) in the colocated phase"), 1);
}

// More than 10% of a phase's samples MAD-flagged is a second mode, not a few outliers: 9 of 60 at 3.0
// (15%) warn multi-modal; 6 of 60 (exactly 10%) are outliers.
TEST(FinalizeRun, MoreThanATenthFlaggedIsMultiModal) {
  for (const int slow : {9, 6}) {
    auto c = alternate(1.0, 1.02, 60);
    for (int i = 0; i < slow; ++i) c[static_cast<std::size_t>(5 + 6 * i)] = 3.0;
    RunResult run = run_of({tenant("t", make_phase(repeat(1.0, 72)), make_phase(repeat(1.0, 72)), make_phase(c))});
    finalize_run(run, 1, 20);
    EXPECT_EQ(run.tenants[0].colocated.outliers, static_cast<std::size_t>(slow));
    EXPECT_EQ(count_containing(run.tenants[0].warnings, "multi-modal"), slow == 9 ? 1 : 0)
        << slow << ": " << (run.tenants[0].warnings.empty() ? "" : run.tenants[0].warnings[0].text);
    EXPECT_EQ(count_containing(run.tenants[0].warnings, "outlier sample(s) flagged"), slow == 6 ? 1 : 0) << slow;
  }
}

TEST(FinalizeRun, StpAnttWhenAllTenantsHaveBothPhases) {
  // t0: A 1.0, C 1.25 -> A/C 0.8, C/A 1.25.   t1: A 2.0, C 4.0 -> A/C 0.5, C/A 2.
  // STP = 0.8 + 0.5 = 1.3; ANTT = (1.25 + 2) / 2 = 1.625.
  RunResult run = run_of({tenant("t0", make_phase(repeat(1.0, 72)), make_phase(repeat(1.0, 72)), make_phase(repeat(1.25, 72))),
                          tenant("t1", make_phase(repeat(2.0, 72)), make_phase(repeat(2.0, 72)), make_phase(repeat(4.0, 72)))});
  finalize_run(run, 1, 20);
  ASSERT_TRUE(run.system.has_value());
  EXPECT_NEAR(run.system->stp_alone, 1.3, kTol);
  EXPECT_NEAR(run.system->antt_alone, 1.625, kTol);
}

TEST(FinalizeRun, StpAnttAgainstExclusiveAndAloneDiffer) {
  // E 1.0, A 2.0 (the slice costs 2x), C 2.5. Against E: STP = 1/2.5 = 0.4, ANTT = 2.5.
  // Against A: STP = 2/2.5 = 0.8, ANTT = 1.25. Mixing the two up fails one pair.
  RunResult run = run_of({tenant("t0", make_phase(repeat(1.0, 72)), make_phase(repeat(2.0, 72)), make_phase(repeat(2.5, 72)))});
  finalize_run(run, 1, 20);
  ASSERT_TRUE(run.system.has_value());
  EXPECT_NEAR(run.system->stp_exclusive, 0.4, kTol);
  EXPECT_NEAR(run.system->antt_exclusive, 2.5, kTol);
  EXPECT_NEAR(run.system->stp_alone, 0.8, kTol);
  EXPECT_NEAR(run.system->antt_alone, 1.25, kTol);
}

TEST(FinalizeRun, NoStpAnttWhenATenantLacksAlone) {
  PhaseResult A1 = not_run();  // the alone phase of t1 never ran
  RunResult run = run_of({tenant("t0", make_phase(repeat(1.0, 72)), make_phase(repeat(1.0, 72)), make_phase(repeat(1.25, 72))),
                          tenant("t1", make_phase(repeat(2.0, 72)), A1, make_phase(repeat(4.0, 72)))});
  finalize_run(run, 1, 20);
  EXPECT_FALSE(run.system.has_value());
  // t1 still gets metrics that need no alone phase; the alone-based ones are NaN.
  ASSERT_TRUE(run.tenants[1].metrics.has_value());
  EXPECT_TRUE(std::isnan(run.tenants[1].metrics->partition_cost));
  EXPECT_TRUE(std::isnan(run.tenants[1].metrics->interference));
  EXPECT_NEAR(run.tenants[1].metrics->median_slowdown, 1.0, kTol);
}

TEST(FinalizeRun, NoStpAnttWhenATenantLacksColocated) {
  PhaseResult C1 = not_run();
  C1.outcome.status = WorkerStatus::stopped;
  RunResult run = run_of({tenant("t0", make_phase(repeat(1.0, 72)), make_phase(repeat(1.0, 72)), make_phase(repeat(1.25, 72))),
                          tenant("t1", make_phase(repeat(2.0, 72)), make_phase(repeat(2.0, 72)), C1)});
  finalize_run(run, 1, 20);
  EXPECT_FALSE(run.system.has_value());
  EXPECT_EQ(run.tenants[1].verdict, Verdict::error);
}

// ================================================================ summarize_results

std::vector<TenantAggregate> aggs(const std::vector<Verdict>& verdicts) {
  std::vector<TenantAggregate> out;
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    TenantAggregate a;
    a.tenant = "t" + std::to_string(i);
    a.verdict = verdicts[i];
    out.push_back(a);
  }
  return out;
}

std::vector<TenantAggregate> operator+(std::vector<TenantAggregate> a, const std::vector<TenantAggregate>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(SummarizeResults, AllPassExitsZero) {
  const auto s = summarize_results(aggs({Verdict::pass, Verdict::pass}) + aggs({Verdict::pass}), 2, false);
  EXPECT_EQ(s.exit_code, 0);
  EXPECT_TRUE(s.pass);
  EXPECT_EQ(s.runs, 2);
  EXPECT_EQ(s.tenants, 3);
  EXPECT_EQ(s.passed, 3);
  EXPECT_FALSE(s.interrupted);
}

TEST(SummarizeResults, FailExitsOneAndBeatsInconclusive) {
  const auto s = summarize_results(aggs({Verdict::pass, Verdict::fail, Verdict::inconclusive}), 1, false);
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_FALSE(s.pass);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.passed, 1);
}

TEST(SummarizeResults, InconclusiveAloneExitsFive) {
  const auto s = summarize_results(aggs({Verdict::pass, Verdict::inconclusive}), 1, false);
  EXPECT_EQ(s.exit_code, 5);
  EXPECT_FALSE(s.pass);
  EXPECT_EQ(s.inconclusive, 1);
}

TEST(SummarizeResults, ErrorExitsFourAndBeatsFail) {
  const auto s = summarize_results(aggs({Verdict::fail, Verdict::inconclusive}) + aggs({Verdict::error}), 2, false);
  EXPECT_EQ(s.exit_code, 4);
  EXPECT_FALSE(s.pass);
  EXPECT_EQ(s.errors, 1);
  EXPECT_EQ(s.failed, 1);
}

TEST(SummarizeResults, InterruptedExits130) {
  const auto s = summarize_results(aggs({Verdict::pass, Verdict::error}), 1, true);
  EXPECT_EQ(s.exit_code, 130);
  EXPECT_TRUE(s.interrupted);
  EXPECT_FALSE(s.pass);
  const auto s2 = summarize_results(aggs({Verdict::pass}), 1, true);
  EXPECT_EQ(s2.exit_code, 130);
  EXPECT_FALSE(s2.pass);
}

TEST(SummarizeResults, CountsEveryVerdict) {
  const auto s = summarize_results(aggs({Verdict::pass, Verdict::pass, Verdict::fail, Verdict::inconclusive, Verdict::baseline}) +
                                       aggs({Verdict::waived, Verdict::waived, Verdict::baseline, Verdict::error,
                                             Verdict::inconclusive, Verdict::inconclusive}),
                                   2, false);
  EXPECT_EQ(s.runs, 2);
  EXPECT_EQ(s.tenants, 11);
  EXPECT_EQ(s.passed, 2);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.inconclusive, 3);
  EXPECT_EQ(s.baseline, 2);
  EXPECT_EQ(s.waived, 2);
  EXPECT_EQ(s.errors, 1);
  EXPECT_EQ(s.exit_code, 4);
}

TEST(SummarizeResults, BaselineAndWaivedAloneExitZero) {
  const auto s = summarize_results(aggs({Verdict::baseline, Verdict::waived}), 1, false);
  EXPECT_EQ(s.exit_code, 0);
  EXPECT_TRUE(s.pass);
}

TEST(SummarizeResults, NoTenantsIsNotAPass) {
  const auto s = summarize_results({}, 0, false);
  EXPECT_EQ(s.tenants, 0);
  EXPECT_FALSE(s.pass);
}

}  // namespace
}  // namespace ib

namespace ib {
namespace {

// A latency-type phase: `samples` windows of equal duration (as open-loop windows are), each with
// `per_sample` requests whose latencies are `latency_s`.
PhaseResult latency_phase(std::size_t samples, std::size_t per_sample, double latency_s) {
  PhaseResult p;
  p.outcome.status = WorkerStatus::ok;
  for (std::size_t i = 0; i < samples; ++i) {
    p.start_ns.push_back(static_cast<std::int64_t>(i) * 50'000'000);
    p.duration_s.push_back(0.05);
    p.latency_count.push_back(static_cast<std::uint32_t>(per_sample));
    for (std::size_t k = 0; k < per_sample; ++k) p.latencies_s.push_back(latency_s * (1.0 + 0.01 * (k % 10)));
  }
  summarize_window(p, {1.0, "request"}, std::nullopt, std::nullopt);
  return p;
}

TEST(FinalizeRun, LatencyWorkloadsAreJudgedOnRequestLatencyNotSampleTime) {
  RunResult run;
  run.mode = "timeslice";
  run.cutoff = 0.40;
  TenantResult t;
  t.exclusive = latency_phase(10, 20, 0.001);   // 200 requests, 1.00..1.09 ms
  t.colocated = latency_phase(10, 20, 0.002);   // the same windows, twice the latency
  t.alone = t.exclusive;
  t.alone.source = PhaseSource::exclusive;
  run.tenants.push_back(t);
  finalize_run(run, 1, 200);
  const TenantResult& r = run.tenants[0];
  ASSERT_TRUE(r.metrics);
  EXPECT_EQ(r.metrics->basis, "request_latency");
  // Sample times are identical (0.05 s): on them the slowdown would be 0. On the requests it is
  // P95(C)/P95(E) - 1 = 2 - 1 = 1 (latencies scale by exactly 2).
  EXPECT_NEAR(r.metrics->p95_slowdown.value, 1.0, 1e-12);
  EXPECT_NEAR(r.metrics->median_slowdown, 1.0, 1e-12);
  EXPECT_EQ(r.verdict, Verdict::fail);  // 200 requests >= 72 in each phase
  ASSERT_TRUE(r.exclusive.latency);
  EXPECT_EQ(r.exclusive.latency->n, 200u);
}

// Open-loop samples are slices of an arrival schedule, and a slice may hold no request: its
// latency_count is 0, and the latencies of the samples around it stay attributed to them.
TEST(FinalizeRun, OpenLoopSlicesWithoutRequestsKeepLatenciesAttributed) {
  PhaseResult p;
  p.outcome.status = WorkerStatus::ok;
  const std::vector<std::uint32_t> counts = {3, 0, 2, 0, 4};
  for (std::size_t i = 0; i < counts.size(); ++i) {
    p.start_ns.push_back(static_cast<std::int64_t>(i) * 50'000'000);
    p.duration_s.push_back(0.05);
    p.latency_count.push_back(counts[i]);
    for (std::uint32_t k = 0; k < counts[i]; ++k) p.latencies_s.push_back(static_cast<double>(i) + 0.1 * k);
  }
  // Window [0.05 s, 0.20 s]: samples 1, 2 and 3 count; only sample 2 has requests.
  summarize_window(p, {1.0, "request"}, std::int64_t{50'000'000}, std::int64_t{200'000'000});
  EXPECT_EQ(counted_latencies(p), (std::vector<double>{2.0, 2.1}));
  ASSERT_TRUE(p.latency);
  EXPECT_EQ(p.latency->n, 2u);
}

TEST(FinalizeRun, OpenLoopSampleDurationsGetNoOutlierWarning) {
  // Open-loop samples of nearly constant length (their slices) with one long one: MAD would flag it,
  // but the tenant is judged on its requests, so no outlier or multi-modal warning is given.
  RunResult run;
  run.mode = "timeslice";
  run.cutoff = 0.40;
  TenantResult t;
  t.exclusive = latency_phase(10, 20, 0.001);
  t.colocated = latency_phase(10, 20, 0.001);
  for (std::size_t i = 0; i < t.colocated.duration_s.size(); ++i) t.colocated.duration_s[i] *= 1.0 + 0.01 * (i % 5);
  t.colocated.duration_s[3] = 0.5;
  summarize_window(t.colocated, {1.0, "request"}, std::nullopt, std::nullopt);
  ASSERT_GT(t.colocated.outliers, 0u);
  t.alone = t.exclusive;
  t.alone.source = PhaseSource::exclusive;
  run.tenants.push_back(t);
  finalize_run(run, 1, 100);
  EXPECT_EQ(count_containing(run.tenants[0].warnings, "outlier"), 0);
  EXPECT_EQ(count_containing(run.tenants[0].warnings, "multi-modal"), 0);
}

TEST(FinalizeRun, OnlyInWindowRequestsCount) {
  PhaseResult p = latency_phase(4, 3, 0.001);
  // Window [0.05 s, 0.15 s]: samples 1 and 2 (starts 0.05, 0.10; ends 0.10, 0.15) count.
  summarize_window(p, {1.0, "request"}, std::int64_t{50'000'000}, std::int64_t{150'000'000});
  EXPECT_EQ(counted_latencies(p).size(), 6u);
  EXPECT_EQ(p.latency->n, 6u);
}

}  // namespace
}  // namespace ib

namespace ib {
namespace {

// An interval reporter's phase (issue 48): `n` intervals of `seconds` each back to back, each carrying the work
// the program reported for it (rate x interval) as its own (kSampleWorkCounter).
PhaseResult interval_phase(int n, double seconds, double rate) {
  PhaseResult p;
  p.outcome.status = WorkerStatus::ok;
  for (int i = 0; i < n; ++i) {
    p.start_ns.push_back(100 * kSec + i * static_cast<std::int64_t>(seconds * 1e9));
    p.duration_s.push_back(seconds);
    p.counter_samples[kSampleWorkCounter].push_back(rate * seconds * (i % 2 ? 1.02 : 1.0));
  }
  summarize_window(p, {1.0, "event"}, std::nullopt, std::nullopt);
  return p;
}

// The intervals are all 1 s long whatever the program's speed, so on sample time the slowdown would be 0; on time
// per unit of work (duration / own work) it is the throughput's: 3000 events/s alone, 1500 beside a neighbour.
TEST(FinalizeRun, AnIntervalReporterIsJudgedOnTimePerUnitOfWork) {
  RunResult run;
  run.mode = "timeslice";
  run.cutoff = 0.40;
  TenantResult t;
  t.name = "sysbench";
  t.exclusive = interval_phase(80, 1.0, 3000.0);
  t.colocated = interval_phase(80, 1.0, 1500.0);
  t.alone = t.exclusive;
  t.alone.source = PhaseSource::exclusive;
  run.tenants.push_back(t);
  finalize_run(run, 1, 200);
  const TenantResult& r = run.tenants[0];
  ASSERT_TRUE(r.metrics);
  EXPECT_EQ(r.metrics->basis, "time_per_work");
  EXPECT_NEAR(r.metrics->median_slowdown, 1.0, 1e-9);
  EXPECT_NEAR(r.metrics->p95_slowdown.value, 1.0, 1e-9);
  EXPECT_EQ(r.verdict, Verdict::fail) << r.verdict_reason;  // 80 intervals >= 72 in each phase
  // The phase's figures are the program's own: its throughput is the work over the time, its stats the time per
  // event (1/3000 s, or 1/3060 for the odd intervals), its window_cv that of the intervals' throughputs.
  EXPECT_NEAR(r.exclusive.throughput, 3000.0 * 1.01, 1e-6);
  EXPECT_EQ(r.exclusive.throughput_unit, "event/s");
  EXPECT_EQ(r.exclusive.stats.n, 80u);
  EXPECT_NEAR(r.exclusive.stats.median, (1.0 / 3000.0 + 1.0 / 3060.0) / 2, 1e-12);
  EXPECT_GT(r.exclusive.window_cv, 0.009);
  EXPECT_LT(r.exclusive.window_cv, 0.011);
  EXPECT_EQ(counted_values(r.colocated).size(), 80u);
  EXPECT_NEAR(sample_value(r.colocated, 0), 1.0 / 1500.0, 1e-15);
  EXPECT_TRUE(judged_per_work(r.colocated));
  EXPECT_FALSE(judged_per_work(make_phase(repeat(1.0, 3))));
}

// A command's matching lines read in one piece with the line before (kLinesInBurstCounter) are named when they are
// many: the program buffers its output.
TEST(FinalizeRun, LinesThatCameInBurstsAreNamed) {
  const auto with_bursts = [](int bursts) {
    PhaseResult p = make_phase(alternate(1.0, 1.01, 80));
    p.counter_samples[kLinesInBurstCounter].assign(80, 0.0);
    for (int i = 0; i < bursts; ++i) p.counter_samples[kLinesInBurstCounter][static_cast<std::size_t>(i)] = 1.0;
    summarize_window(p, {1.0, "step"}, std::nullopt, std::nullopt);
    return p;
  };
  for (const int bursts : {4, 40}) {
    PhaseResult E = with_bursts(bursts);
    RunResult run = run_of({tenant("loop", E, timeslice_alone(E), with_bursts(0))}, "timeslice");
    finalize_run(run, 1, 50);
    const auto& w = run.tenants[0].warnings;
    const bool named = std::any_of(w.begin(), w.end(), [](const Warning& x) { return x.kind == WarningKind::buffered_output; });
    EXPECT_EQ(named, bursts == 40) << bursts;
    if (named) {
      const auto it = std::find_if(w.begin(), w.end(), [](const Warning& x) { return x.kind == WarningKind::buffered_output; });
      EXPECT_NE(it->text.find("40 of the program's 80 matching lines in the exclusive phase arrived in bursts"), std::string::npos)
          << it->text;
      EXPECT_NE(it->text.find("fflush(stdout)"), std::string::npos) << it->text;
    }
  }
}

}  // namespace
}  // namespace ib
