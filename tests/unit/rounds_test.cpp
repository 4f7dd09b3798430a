// Rounds and blocks (docs/design.md section 3): the block order, foreign-load accounting and contamination,
// coverage of colocated samples, the overlap window of a block, and the aggregate over repetitions.
#include "harness/analysis/analysis.h"
#include "harness/analysis/deciding.h"
#include "harness/run/foreign_load.h"
#include "harness/stats/sequential.h"
#include "harness/run/orchestrator.h"
#include "tests/unit/test_support.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <random>
#include <set>

namespace ib {
namespace {

using namespace ib::test;


// ---------------------------------------------------------------- round order

TEST(RoundSchedule, AbbaReversesEveryOtherRound) {
  const auto s = round_schedule(3, 4, RoundOrder::abba, 1);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(s[1], (std::vector<std::size_t>{2, 1, 0}));
  EXPECT_EQ(s[2], (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(s[3], (std::vector<std::size_t>{2, 1, 0}));
  // Over two rounds every block sits at the same mean position: a linear drift hits each phase alike.
  for (std::size_t b = 0; b < 3; ++b) {
    std::size_t pos0 = 0, pos1 = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      if (s[0][k] == b) pos0 = k;
      if (s[1][k] == b) pos1 = k;
    }
    EXPECT_EQ(pos0 + pos1, 2u);
  }
}

TEST(RoundSchedule, ShuffleIsSeededAndAPermutationEachRound) {
  const auto a = round_schedule(5, 6, RoundOrder::shuffle, 42);
  const auto b = round_schedule(5, 6, RoundOrder::shuffle, 42);
  const auto c = round_schedule(5, 6, RoundOrder::shuffle, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::set<std::vector<std::size_t>> distinct;
  for (const auto& round : a) {
    EXPECT_EQ(std::set<std::size_t>(round.begin(), round.end()), (std::set<std::size_t>{0, 1, 2, 3, 4}));
    distinct.insert(round);
  }
  EXPECT_GT(distinct.size(), 1u) << "the order changes from round to round";
}

// Fisher-Yates down to i = 2: a round of two blocks is shuffled too (both orders occur).
TEST(RoundSchedule, ShuffleReordersRoundsOfTwoBlocks) {
  std::set<std::vector<std::size_t>> seen;
  for (const auto& round : round_schedule(2, 20, RoundOrder::shuffle, 7)) seen.insert(round);
  EXPECT_EQ(seen, (std::set<std::vector<std::size_t>>{{0, 1}, {1, 0}}));
}

TEST(RoundSchedule, OneRoundIsTheCanonicalOrder) {
  EXPECT_EQ(round_schedule(2, 1, RoundOrder::abba, 1), (std::vector<std::vector<std::size_t>>{{0, 1}}));
}

// ---------------------------------------------------------------- foreign load

TEST(ForeignLoad, ParsesProcStat) {
  unsigned long long busy = 0, steal = 0;
  // user nice system idle iowait irq softirq steal guest guest_nice
  ASSERT_TRUE(parse_proc_stat_cpu("cpu  100 2 30 5000 7 4 3 11 0 0", busy, steal));
  EXPECT_EQ(busy, 100u + 2 + 30 + 4 + 3);  // idle and iowait are not busy; guest is inside user
  EXPECT_EQ(steal, 11u);
  EXPECT_FALSE(parse_proc_stat_cpu("cpu0 1 2 3 4 5 6 7 8", busy, steal));
  EXPECT_FALSE(parse_proc_stat_cpu("cpu 1 2", busy, steal));
}

TEST(ForeignLoad, ParsesProcPidStatWithSpacesAndParensInTheName) {
  // Fields after the name: state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15)
  const std::string stat = "1234 (a (weird) name) R 1 2 3 4 5 6 7 8 9 10 250 70 0 0 20 0 1 0";
  EXPECT_EQ(parse_proc_pid_cpu_ticks(stat), std::optional<unsigned long long>(320));
  // Reaped children's time (cutime 16, cstime 17) is the process's own: a command tenant's wall runs.
  EXPECT_EQ(parse_proc_pid_cpu_ticks("1234 (w) S 1 2 3 4 5 6 7 8 9 10 250 70 5 6 20 0 1 0"),
            std::optional<unsigned long long>(331));
  EXPECT_FALSE(parse_proc_pid_cpu_ticks("garbage").has_value());
  EXPECT_FALSE(parse_proc_pid_cpu_ticks("1 (x) R 1 2").has_value());
}

TEST(ForeignLoad, DescendantsOfOurProcessesAreOurs) {
  // 10 (harness) -> 20 (worker) -> 30 (program) -> 40 (its child); 50 -> 60 foreign; 35's parent 40
  // comes before 40's in pid order.
  const std::map<pid_t, pid_t> parents = {{20, 10}, {30, 20}, {35, 40}, {40, 30}, {50, 1}, {60, 50}};
  auto own = with_descendants({10}, parents);
  std::sort(own.begin(), own.end());
  EXPECT_EQ(own, (std::vector<pid_t>{10, 20, 30, 35, 40}));
  EXPECT_EQ(with_descendants({60}, parents), std::vector<pid_t>{60});
}

TEST(ForeignLoad, ForeignIsBusyMinusOursPerSecond) {
  CpuSnapshot a{0, 1000, 10, 400}, b{2'000'000'000, 1000 + 300, 10 + 20, 400 + 160};
  const ForeignLoad l = foreign_load_between(a, b, 100.0);
  EXPECT_NEAR(l.seconds, 2.0, kTol);
  EXPECT_NEAR(l.own_cpus, 160.0 / 100.0 / 2.0, kTol);            // 0.8 CPUs ours
  EXPECT_NEAR(l.foreign_cpus, (300.0 - 160.0) / 100.0 / 2.0, kTol);  // 0.7 CPUs not ours
  EXPECT_NEAR(l.steal_cpus, 20.0 / 100.0 / 2.0, kTol);
  // A process of ours that exited makes own_ticks drop: never a negative own or a made-up foreign load.
  CpuSnapshot c{2'000'000'000, 1000 + 100, 10, 300};
  const ForeignLoad m = foreign_load_between(a, c, 100.0);
  EXPECT_EQ(m.own_cpus, 0.0);
  EXPECT_NEAR(m.foreign_cpus, 0.5, kTol);
}

// Steal is summed over every CPU of the machine: the default limit is 5% of them (at least 0.10), so a
// 16-vCPU guest's usual background steal does not contaminate every block as a fixed 0.10 would.
TEST(ForeignLoad, TheDefaultStealLimitIsAShareOfTheMachine) {
  EXPECT_DOUBLE_EQ(default_max_steal_cpus(2), 0.10);
  EXPECT_DOUBLE_EQ(default_max_steal_cpus(16), 0.80);
  EXPECT_DOUBLE_EQ(default_max_steal_cpus(1), 0.10);
  EXPECT_DOUBLE_EQ(default_max_steal_cpus(), default_max_steal_cpus(sysconf(_SC_NPROCESSORS_ONLN)));
  ForeignLoadLimits lim;
  lim.max_steal_cpus = default_max_steal_cpus(16);
  ForeignLoad l;
  l.seconds = 1.0;
  l.steal_cpus = 0.5;  // 3% of 16 CPUs
  EXPECT_EQ(contamination_reason(l, lim, 100.0, 3), "");
  l.steal_cpus = 0.9;
  EXPECT_NE(contamination_reason(l, lim, 100.0, 3).find("summed over the machine's CPUs (limit 0.80)"), std::string::npos);
}

TEST(ForeignLoad, ContaminationThresholdsWithCounterResolution) {
  ForeignLoadLimits lim;  // 0.25 foreign CPUs, 0.10 steal
  ForeignLoad l;
  l.seconds = 1.0;
  // 3 own processes + the machine's counter: 4 ticks of slack at 100 Hz over 1 s = 0.04 CPUs.
  l.foreign_cpus = 0.29;
  EXPECT_EQ(contamination_reason(l, lim, 100.0, 3), "");
  l.foreign_cpus = 0.30;
  const std::string why = contamination_reason(l, lim, 100.0, 3);
  EXPECT_NE(why.find("not this run's used 0.30 CPUs"), std::string::npos) << why;
  l.foreign_cpus = 0.0;
  l.steal_cpus = 0.105;
  EXPECT_EQ(contamination_reason(l, lim, 100.0, 3), "");  // 0.10 + one tick (0.01)
  l.steal_cpus = 0.2;
  EXPECT_NE(contamination_reason(l, lim, 100.0, 3).find("stole"), std::string::npos);
  l.steal_cpus = 0.0;
  l.gpu_foreign_processes = 1;
  EXPECT_NE(contamination_reason(l, lim, 100.0, 3).find("GPU compute process"), std::string::npos);
  l.gpu_foreign_processes = 0;
  EXPECT_EQ(contamination_reason(l, lim, 100.0, 3), "");
}

// A GPU played back: the samples NVML would have on a clock the test moves (microseconds since the epoch).
struct PlayedGpu {
  unsigned long long now = 1'000'000'000;
  std::vector<ProcessSmSample> samples;  // every sample NVML will have had, by its end time
  int polls = 0;
  std::optional<std::vector<ProcessSmSample>> since(unsigned long long t) {
    ++polls;
    std::vector<ProcessSmSample> out;
    for (const auto& s : samples)
      if (s.timestamp_us > t && s.timestamp_us <= now) out.push_back(s);
    return out;
  }
};

GpuDrain drain(PlayedGpu& gpu, const std::vector<pid_t>& own, unsigned long long since) {
  return drain_own_gpu_work([&](unsigned long long t) { return gpu.since(t); }, own, since, kGpuDrainLimitS, 0.05,
                            [&] { return gpu.now; },
                            [&](double s) { gpu.now += static_cast<unsigned long long>(s * 1e6); });
}

// Issue 34 item 5: a paused program's queued kernels keep the GPU busy; the release waits for them.
TEST(GpuDrain, WaitsUntilOurProcessHasBeenQuietForOneQuietPeriod) {
  PlayedGpu gpu;
  const unsigned long long ended = gpu.now;
  // Our pid 42 busy in the samples ending 50 ms and 150 ms after the block ended, idle after; a foreign
  // process (7) busy throughout is not ours to wait for.
  for (int k = 1; k <= 40; ++k) {
    const unsigned long long at = ended + 50'000ull * k;
    gpu.samples.push_back({42, at, at <= ended + 150'000 ? 80u : 0u});
    gpu.samples.push_back({7, at, 100u});
  }
  const GpuDrain d = drain(gpu, {1, 42}, ended);
  ASSERT_TRUE(d.waited_s);
  EXPECT_EQ(d.still_busy, 0);
  // Quiet once its last busy sample (150 ms) ended kGpuQuietS (200 ms) ago: 350 ms, to the poll (50 ms).
  EXPECT_NEAR(*d.waited_s, 0.35, 1e-9);
}

TEST(GpuDrain, NothingOfOursOnTheGpuReleasesAtOnce) {
  PlayedGpu gpu;
  gpu.samples.push_back({7, gpu.now, 100u});
  const GpuDrain d = drain(gpu, {1, 42}, gpu.now - 1'000'000);
  ASSERT_TRUE(d.waited_s);
  EXPECT_EQ(*d.waited_s, 0.0);
  EXPECT_EQ(d.still_busy, 0);
  EXPECT_EQ(gpu.polls, 1);
}

TEST(GpuDrain, GivesUpAtTheLimitAndSaysHowManyStillRan) {
  PlayedGpu gpu;
  const unsigned long long ended = gpu.now;
  for (int k = 1; k <= 100; ++k) gpu.samples.push_back({42, ended + 50'000ull * k, 90u});
  const GpuDrain d = drain(gpu, {1, 42}, ended);
  ASSERT_TRUE(d.waited_s);
  EXPECT_EQ(d.still_busy, 1);
  EXPECT_GE(*d.waited_s, kGpuDrainLimitS);
  EXPECT_LT(*d.waited_s, kGpuDrainLimitS + 0.06);
  ForeignLoad l;
  l.gpu_drain_s = d.waited_s;
  l.gpu_own_busy_processes = d.still_busy;
  const std::string why = contamination_reason(l, ForeignLoadLimits{}, 100.0, 3);
  EXPECT_NE(why.find("1 of this run's processes still ran GPU work 2.0 s after the previous block ended"),
            std::string::npos) << why;
}

TEST(GpuDrain, UnknownWhenNvmlCannotSay) {
  const GpuDrain d = drain_own_gpu_work([](unsigned long long) { return std::nullopt; }, {1}, 0, 2.0, 0.05,
                                        [] { return 5ull; }, [](double) {});
  EXPECT_FALSE(d.waited_s);
}

// ---------------------------------------------------------------- coverage

TEST(Coverage, FractionOfEachSampleDuringWhichEveryOtherTenantWasInASample) {
  // self: [0,10) [10,20) [20,30); other A covers [0,5) and [12,30); other B covers [0,30) except [25,28).
  const Intervals self = {{0, 10}, {10, 20}, {20, 30}};
  const Intervals a = {{0, 5}, {12, 30}};
  const Intervals b = {{0, 25}, {28, 30}};
  const auto c = coverage(self, {a, b});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_NEAR(c[0], 5.0 / 10.0, kTol);  // [0,5)
  EXPECT_NEAR(c[1], 8.0 / 10.0, kTol);  // [12,20)
  EXPECT_NEAR(c[2], 7.0 / 10.0, kTol);  // [20,25) + [28,30)
  // With one neighbour only: its union alone.
  const auto d = coverage(self, {a});
  EXPECT_NEAR(d[0], 0.5, kTol);
  EXPECT_NEAR(d[1], 0.8, kTol);
  EXPECT_NEAR(d[2], 1.0, kTol);
  // No neighbour: every sample is covered (nothing to wait for).
  EXPECT_EQ(coverage(self, {}), (std::vector<double>{1.0, 1.0, 1.0}));
  // A neighbour with no samples: nothing is covered.
  EXPECT_EQ(coverage(self, {Intervals{}}), (std::vector<double>{0.0, 0.0, 0.0}));
}

// ---------------------------------------------------------------- overlap window per block

// Two tenants in one colocated block: a's samples [100,110) .. , b starts later and ends earlier.
RunResult two_tenant_block() {
  RunResult run;
  run.rounds = 1;
  run.cutoff = 0.4;
  run.mode = "timeslice";
  BlockRecord blk;
  blk.index = 0;
  blk.phase = Phase::colocated;
  blk.tenants = {"a", "b"};
  run.blocks = {blk};
  for (const char* name : {"a", "b"}) {
    TenantResult t;
    t.name = name;
    t.work = {1.0, "FLOP"};
    t.colocated.outcome.status = WorkerStatus::ok;
    const std::int64_t first = std::string(name) == "a" ? 1'000'000'000 : 1'050'000'000;
    const int n = std::string(name) == "a" ? 20 : 10;
    for (int i = 0; i < n; ++i) {
      t.colocated.start_ns.push_back(first + i * 20'000'000);
      t.colocated.duration_s.push_back(0.02);
      t.colocated.block.push_back(0);
    }
    run.tenants.push_back(t);
  }
  return run;
}

TEST(SummarizeBlocks, OverlapWindowFromSampleTimesAndCoverage) {
  RunResult run = two_tenant_block();
  summarize_blocks(run);
  const BlockRecord& b = run.blocks[0];
  // a: 1.000 .. 1.400 s; b: 1.050 .. 1.250 s -> window [1.050, 1.250].
  ASSERT_TRUE(b.overlap_start_ns.has_value());
  EXPECT_EQ(*b.overlap_start_ns, 1'050'000'000);
  EXPECT_EQ(*b.overlap_end_ns, 1'250'000'000);
  const PhaseResult& a = run.tenants[0].colocated;
  // a's samples [1.06,1.08) .. [1.22,1.24) lie inside: 9 of them (1.04 starts before, 1.24 ends after).
  EXPECT_EQ(a.stats.n, 9u);
  EXPECT_EQ(a.in_window[2], 0);  // [1.04, 1.06)
  EXPECT_EQ(a.in_window[3], 1);  // [1.06, 1.08)
  // b's samples are back to back inside [1.05, 1.25): a's counted samples are fully covered...
  ASSERT_TRUE(a.coverage_mean.has_value());
  EXPECT_NEAR(*a.coverage_mean, 1.0, kTol);
  // ... and b's are covered by a's back-to-back samples too.
  EXPECT_NEAR(*run.tenants[1].colocated.coverage_mean, 1.0, kTol);
  EXPECT_EQ(run.tenants[0].colocated.blocks, 1);
  EXPECT_EQ(run.tenants[0].colocated.blocks_counted, 1);
}

TEST(SummarizeBlocks, AnExcludedBlockKeepsItsSamplesButCountsNone) {
  RunResult run = two_tenant_block();
  run.blocks[0].status = BlockStatus::excluded;
  summarize_blocks(run);
  const PhaseResult& a = run.tenants[0].colocated;
  EXPECT_EQ(a.start_ns.size(), 20u);
  EXPECT_EQ(a.stats.n, 0u);
  EXPECT_EQ(a.blocks, 1);
  EXPECT_EQ(a.blocks_counted, 0);
  EXPECT_FALSE(a.coverage_mean.has_value());
}

// ---------------------------------------------------------------- verdicts with foreign load, aggregates

// A tenant with `blocks` exclusive and colocated blocks of `per_block` samples; E ~ 1.0, C ~ c_scale.
RunResult run_with_blocks(int blocks, int per_block, double c_scale, const std::vector<BlockStatus>& statuses = {}) {
  RunResult run;
  run.mode = "timeslice";
  run.cutoff = 0.40;
  run.rounds = blocks;
  TenantResult t;
  t.name = "t";
  t.work = {1.0, "FLOP"};
  t.exclusive.outcome.status = t.colocated.outcome.status = WorkerStatus::ok;
  std::int64_t clock = 0;
  for (int k = 0; k < 2 * blocks; ++k) {
    BlockRecord b;
    b.index = k;
    b.round = k / 2;
    b.phase = k % 2 ? Phase::colocated : Phase::exclusive;
    b.tenants = {"t"};
    if (!statuses.empty()) b.status = statuses[static_cast<std::size_t>(k)];
    PhaseResult& p = k % 2 ? t.colocated : t.exclusive;
    for (int i = 0; i < per_block; ++i) {
      const double d = (k % 2 ? c_scale : 1.0) * (1.0 + 0.01 * ((i * 37) % 11));
      p.start_ns.push_back(clock);
      p.duration_s.push_back(d);
      p.block.push_back(k);
      clock += static_cast<std::int64_t>(d * 1e9) + 1;
    }
    run.blocks.push_back(b);
  }
  t.alone = t.exclusive;
  t.alone.source = PhaseSource::exclusive;
  run.tenants = {t};
  summarize_blocks(run);
  run.tenants[0].alone = run.tenants[0].exclusive;
  run.tenants[0].alone.source = PhaseSource::exclusive;
  return run;
}

TEST(FinalizeRun, APhaseWithoutCleanBlocksIsInconclusiveNeverAPass) {
  // Every exclusive block contaminated: the slowdown against the colocated samples would pass (C = E),
  // but there is no clean baseline to compare with.
  RunResult run = run_with_blocks(3, 100, 1.0, {BlockStatus::excluded, BlockStatus::clean, BlockStatus::excluded, BlockStatus::clean, BlockStatus::excluded, BlockStatus::clean});
  finalize_run(run, 1, 200);
  const TenantResult& t = run.tenants[0];
  EXPECT_EQ(t.verdict, Verdict::inconclusive) << t.verdict_reason;
  EXPECT_NE(t.verdict_reason.find("none of the 3 exclusive blocks was clean"), std::string::npos) << t.verdict_reason;
  EXPECT_EQ(t.warnings.front().kind, WarningKind::blocks_not_counted);
  EXPECT_NE(t.warnings.front().text.find("3 of 3 exclusive block(s) not counted"), std::string::npos);
}

TEST(FinalizeRun, CleanBlocksAloneAreJudged) {
  // One exclusive block excluded: the other two still give a verdict, from their samples only.
  RunResult run = run_with_blocks(3, 100, 1.0, {BlockStatus::excluded, BlockStatus::clean, BlockStatus::clean, BlockStatus::clean, BlockStatus::clean, BlockStatus::clean});
  finalize_run(run, 1, 200);
  const TenantResult& t = run.tenants[0];
  EXPECT_EQ(t.metrics->n_exclusive, 200u);
  EXPECT_EQ(t.verdict, Verdict::pass) << t.verdict_reason;
}

TEST(FinalizeRun, DriftBetweenTheFirstAndLastRoundIsAWarning) {
  RunResult run = run_with_blocks(3, 100, 1.0);
  // The last round's exclusive samples 20% slower: more than cutoff/4 = 10%.
  for (std::size_t i = 0; i < run.tenants[0].exclusive.duration_s.size(); ++i)
    if (run.tenants[0].exclusive.block[i] == 4) run.tenants[0].exclusive.duration_s[i] *= 1.2;
  summarize_blocks(run);
  finalize_run(run, 1, 100);
  int drift = 0;
  for (const auto& w : run.tenants[0].warnings) drift += w.kind == WarningKind::drift && w.text.rfind("drift:", 0) == 0;
  EXPECT_EQ(drift, 1);
  RunResult steady = run_with_blocks(3, 100, 1.0);
  finalize_run(steady, 1, 100);
  for (const auto& w : steady.tenants[0].warnings) EXPECT_NE(w.kind, WarningKind::drift) << w.text;
  // A machine that got faster drifted too: the last round 20% quicker is a change of -16.7%.
  RunResult faster = run_with_blocks(3, 100, 1.0);
  for (std::size_t i = 0; i < faster.tenants[0].exclusive.duration_s.size(); ++i)
    if (faster.tenants[0].exclusive.block[i] == 4) faster.tenants[0].exclusive.duration_s[i] /= 1.2;
  summarize_blocks(faster);
  finalize_run(faster, 1, 100);
  int drift_faster = 0;
  for (const auto& w : faster.tenants[0].warnings) drift_faster += w.kind == WarningKind::drift;
  EXPECT_EQ(drift_faster, 1);
}

// Colocated samples that overlapped their neighbours less than 90% of their time on average: the
// neighbours were not always running, and the reader is told.
TEST(FinalizeRun, ColocatedCoverageBelowNinetyPercentIsAWarning) {
  for (const double mean : {0.70, 0.89, 0.95}) {
    RunResult run = run_with_blocks(3, 100, 1.0);
    run.tenants[0].colocated.coverage_mean = mean;
    finalize_run(run, 1, 50);
    int coverage = 0;
    for (const auto& w : run.tenants[0].warnings) coverage += w.kind == WarningKind::coverage;
    EXPECT_EQ(coverage, mean < 0.9 ? 1 : 0) << mean;
  }
}

// The mean and the 5th percentile of the counted colocated samples' coverage, by hand: b's fourth
// sample [1.11, 1.13) is missing, so a's samples [1.10, 1.12) and [1.12, 1.14) are half covered.
TEST(SummarizeBlocks, CoveragePercentileFiveIsTheLowTailNotTheHighOne) {
  RunResult run = two_tenant_block();
  PhaseResult& b = run.tenants[1].colocated;
  b.start_ns.erase(b.start_ns.begin() + 3);
  b.duration_s.erase(b.duration_s.begin() + 3);
  b.block.erase(b.block.begin() + 3);
  summarize_blocks(run);
  const PhaseResult& a = run.tenants[0].colocated;
  ASSERT_EQ(a.stats.n, 9u);
  ASSERT_TRUE(a.coverage_mean && a.coverage_p5);
  EXPECT_NEAR(*a.coverage_mean, 8.0 / 9.0, 1e-9);  // seven of 1.0, two of 0.5
  EXPECT_NEAR(*a.coverage_p5, 0.5, 1e-9);          // h = 8 x 0.05 = 0.4 between the two 0.5s
  EXPECT_LE(*a.coverage_p5, *a.coverage_mean);
}

TEST(Aggregate, JudgesAllRepetitionsTogether) {
  // Three repetitions, each C = 1.3 E: each one's CI and the pooled one lie below the cutoff.
  RunResult r1 = run_with_blocks(3, 40, 1.3), r2 = run_with_blocks(3, 40, 1.3), r3 = run_with_blocks(3, 40, 1.3);
  for (RunResult* r : {&r1, &r2, &r3}) {
    r->scenario = "s";
    finalize_run(*r, 1, 200);
  }
  const auto agg = aggregate_repetitions({&r1, &r2, &r3}, 5, 200);
  ASSERT_EQ(agg.size(), 1u);
  EXPECT_EQ(agg[0].repetitions, 3);
  EXPECT_EQ(agg[0].repetitions_measured, 3);
  EXPECT_EQ(agg[0].repetition_verdicts, (std::vector<std::string>{"pass", "pass", "pass"}));
  ASSERT_TRUE(agg[0].metrics.has_value());
  EXPECT_EQ(agg[0].metrics->n_exclusive, 3u * 3 * 40);  // every repetition's counted samples
  EXPECT_NEAR(agg[0].metrics->median_slowdown, 0.3, 1e-9);
  EXPECT_EQ(agg[0].verdict, Verdict::pass) << agg[0].verdict_reason;
  EXPECT_NE(agg[0].verdict_reason.find("over 3 repetitions"), std::string::npos);
}

TEST(Aggregate, RepetitionsThatDisagreeAreJudgedOnThePooledCiNotByAnyOne) {
  // One repetition far slower (C = 2 E), two near the cutoff: the pooled CI decides, and a single
  // repetition's fail does not make the aggregate fail by itself.
  RunResult r1 = run_with_blocks(3, 40, 1.1), r2 = run_with_blocks(3, 40, 1.1), r3 = run_with_blocks(3, 40, 2.0);
  for (RunResult* r : {&r1, &r2, &r3}) finalize_run(*r, 1, 200);
  EXPECT_EQ(r3.tenants[0].verdict, Verdict::fail);
  const auto agg = aggregate_repetitions({&r1, &r2, &r3}, 5, 400);
  // The repetition effect widens the CI across the cutoff: inconclusive, not fail.
  EXPECT_EQ(agg[0].verdict, Verdict::inconclusive) << agg[0].verdict_reason;
  EXPECT_EQ(agg[0].repetition_verdicts, (std::vector<std::string>{"pass", "pass", "fail"}));
}

// One waived repetition (its exclusive phase could not run) does not hide the measured ones: the
// aggregate is waived only when every repetition is.
TEST(Aggregate, OneWaivedRepetitionLeavesTheMeasuredOnesToBeJudged) {
  RunResult r1 = run_with_blocks(2, 40, 1.0), r2 = run_with_blocks(2, 40, 1.0);
  finalize_run(r1, 1, 50);
  r2.tenants[0].exclusive.outcome.status = WorkerStatus::waived;
  r2.tenants[0].exclusive.outcome.message = "needs 2 GPUs";
  finalize_run(r2, 1, 50);
  ASSERT_EQ(r2.tenants[0].verdict, Verdict::waived);
  const auto agg = aggregate_repetitions({&r1, &r2}, 5, 50);
  EXPECT_EQ(agg[0].verdict, Verdict::pass) << agg[0].verdict_reason;
  EXPECT_EQ(agg[0].repetitions_measured, 1);
  const auto both = aggregate_repetitions({&r2, &r2}, 5, 50);
  EXPECT_EQ(both[0].verdict, Verdict::waived);
}

TEST(Aggregate, AnErrorInAnyRepetitionIsTheAggregatesError) {
  RunResult r1 = run_with_blocks(2, 40, 1.0), r2 = run_with_blocks(2, 40, 1.0);
  finalize_run(r1, 1, 50);
  r2.tenants[0].colocated.outcome.status = WorkerStatus::crashed;
  finalize_run(r2, 1, 50);
  const auto agg = aggregate_repetitions({&r1, &r2}, 5, 50);
  EXPECT_EQ(agg[0].verdict, Verdict::error);
  EXPECT_EQ(agg[0].verdict_reason.rfind("repetition 2: ", 0), 0u) << agg[0].verdict_reason;
}


// ---------------------------------------------------------------- tail bursts

TEST(TailBursts, TheRuleByHand) {
  // L = log P95: 2.3026 2.3514 2.2824 2.3224 2.9957, median 2.3224, MAD 0.029: limit
  // max(3.5 * 1.4826 * 0.029, log 1.1) = 0.1505; block 4 is 0.673 above. T = log(P95 / median): 0.2231
  // 0.2473 0.2155 0.2305 0.9163, median 0.2305, MAD 0.015: limit max(0.0778, 0.0953) = 0.0953; block 4 is
  // 0.686 above. Only block 4 is far above on both.
  const std::vector<BlockTail> tails = {{10, 8}, {10.5, 8.2}, {9.8, 7.9}, {10.2, 8.1}, {20, 8}};
  EXPECT_EQ(tail_bursts(tails, 0.40), (std::vector<bool>{false, false, false, false, true}));
  // A block slower as a whole (a plateau: median and P95 both doubled) is not a burst.
  const std::vector<BlockTail> plateau = {{10, 8}, {10.5, 8.2}, {9.8, 7.9}, {10.2, 8.1}, {20, 16}};
  EXPECT_EQ(tail_bursts(plateau, 0.40), std::vector<bool>(5, false));
  // A tail only slightly longer (x1.08, below the floor of cutoff / 4 = 10%) is not either, however even
  // the others are.
  const std::vector<BlockTail> even = {{10, 8}, {10, 8}, {10, 8}, {10, 8}, {10.8, 8}};
  EXPECT_EQ(tail_bursts(even, 0.40), std::vector<bool>(5, false));
  // Four blocks are too few to tell.
  EXPECT_EQ(tail_bursts({{10, 8}, {10.5, 8.2}, {9.8, 7.9}, {20, 8}}, 0.40), std::vector<bool>(4, false));
  // ... and x1.15 (above the floor of cutoff / 4, below cutoff / 2: issue 37 item 13's surviving mutant)
  // is a burst when the other blocks are identical (MAD 0).
  const std::vector<BlockTail> one = {{10, 8}, {10, 8}, {10, 8}, {10, 8}, {11.5, 8}};
  EXPECT_EQ(tail_bursts(one, 0.40), (std::vector<bool>{false, false, false, false, true}));
}

// The last 10 of a block's 100 samples 2.5 times longer: its P95 far above its median.
void burst(PhaseResult& p, int block) {
  int seen = 0;
  for (std::size_t i = 0; i < p.duration_s.size(); ++i)
    if (p.block[i] == block && ++seen > 90) p.duration_s[i] *= 2.5;
}

TEST(TailBursts, AnExclusiveBurstIsAnOutlierAndAColocatedOneIsNamed) {
  RunResult run = run_with_blocks(6, 100, 1.0);
  burst(run.tenants[0].exclusive, 4);   // round 3's exclusive block
  burst(run.tenants[0].colocated, 9);   // round 5's colocated block
  summarize_blocks(run);
  EXPECT_EQ(run.blocks[4].status, BlockStatus::outlier);
  EXPECT_EQ(run.blocks[4].tail_bursts, std::vector<std::string>{"t"});
  EXPECT_NE(run.blocks[4].reason.find("tail burst"), std::string::npos) << run.blocks[4].reason;
  EXPECT_EQ(run.blocks[9].status, BlockStatus::clean);  // it may be interference: kept
  EXPECT_EQ(run.blocks[9].tail_bursts, std::vector<std::string>{"t"});
  for (int k : {0, 1, 2, 3, 5, 6, 7, 8, 10, 11}) EXPECT_TRUE(run.blocks[k].tail_bursts.empty()) << k;
  EXPECT_EQ(run.tenants[0].exclusive.stats.n, 500u);   // the outlier's 100 samples not counted
  EXPECT_EQ(run.tenants[0].colocated.stats.n, 600u);
  // Summarised again (a look, then the end): the same, not one more block flagged.
  summarize_blocks(run);
  EXPECT_EQ(run.tenants[0].exclusive.stats.n, 500u);
  EXPECT_EQ(run.blocks[9].tail_bursts.size(), 1u);
  run.tenants[0].alone = run.tenants[0].exclusive;
  run.tenants[0].alone.source = PhaseSource::exclusive;
  finalize_run(run, 1, 100);
  int named = 0;
  for (const auto& w : run.tenants[0].warnings)
    named += w.kind == WarningKind::tail_burst && w.text.rfind("colocated block 9 (round 5) drove the tail", 0) == 0;
  EXPECT_EQ(named, 1);
}

TEST(TailBursts, ABlockJustMeasuredIsJudgedAgainstTheEarlierOnes) {
  RunResult run = run_with_blocks(6, 100, 1.0);
  burst(run.tenants[0].exclusive, 2);
  burst(run.tenants[0].exclusive, 8);
  // Block 2 is the phase's second block: too few to tell at the time. Block 8 is its fifth.
  EXPECT_EQ(tail_burst_now(run, 2), "");
  const std::string why = tail_burst_now(run, 8);
  EXPECT_NE(why.find("t: tail burst: P95"), std::string::npos) << why;
  EXPECT_EQ(run.blocks[8].tail_bursts, std::vector<std::string>{"t"});
  EXPECT_EQ(tail_burst_now(run, 6), "");  // a plain block, with block 2 among its references
}

// ---------------------------------------------------------------- deciding

TEST(Deciding, AFixedRunHasOneLookAtNinetyFivePercent) {
  StoppingOptions o;
  o.until = StopRule::fixed;
  o.rounds = 10;
  o.duration_s = 4.0;
  const Stopping st = plan_stopping(o, 1, 1, 0);
  EXPECT_EQ(st.until, StopRule::fixed);
  EXPECT_EQ(st.max_rounds, 10);
  EXPECT_EQ(st.looks, std::vector<int>{10});
  EXPECT_EQ(st.boundaries, std::vector<double>{kZ95});
  EXPECT_EQ(st.stopped_by, StoppedBy::fixed);
  // Without resampling there is nothing to decide on: fixed whatever --until says.
  o.until = StopRule::decided;
  o.resamples = 0;
  EXPECT_EQ(plan_stopping(o, 1, 1, 0).until, StopRule::fixed);
}

TEST(Deciding, TheLastRepetitionLooksEveryPairOfRoundsUpToItsBudget) {
  StoppingOptions o;
  o.rounds = 10;
  o.duration_s = 4.0;  // 0.4 s blocks; the default budget 2 x 4 s = 20 rounds
  EXPECT_EQ(budget_rounds(o), 20);
  const Stopping one = plan_stopping(o, 1, 1, 0);
  EXPECT_EQ(one.until, StopRule::decided);
  EXPECT_EQ(one.looks, planned_looks(10, 2, 20));
  EXPECT_EQ(one.boundaries, obrien_fleming_boundaries(planned_looks(10, 2, 20), kSequentialAlpha));
  EXPECT_EQ(one.z, one.boundaries.back());
  // Three repetitions: the first two are fixed restarts; the last counts their 20 rounds in its looks.
  EXPECT_EQ(plan_stopping(o, 1, 3, 0).until, StopRule::fixed);
  EXPECT_EQ(plan_stopping(o, 2, 3, 10).looks, std::vector<int>{20});
  const Stopping last = plan_stopping(o, 3, 3, 20);
  EXPECT_EQ(last.looks, planned_looks(30, 2, 40));
  EXPECT_EQ(last.earlier_rounds, 20);
  // --max-duration 6 s: 15 rounds of 0.4 s; one below --duration still gives the first 10.
  o.max_duration_s = 6.0;
  EXPECT_EQ(budget_rounds(o), 15);
  o.max_duration_s = 1.0;
  EXPECT_EQ(budget_rounds(o), 10);
}

// run_with_blocks with every sample scaled by exp(0.2 N(0, 1)), seeded: rounds that differ.
RunResult noisy_run(int rounds, double c_scale, std::uint64_t seed) {
  RunResult run = run_with_blocks(rounds, 100, c_scale);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 0.2);
  for (PhaseResult* p : {&run.tenants[0].exclusive, &run.tenants[0].colocated})
    for (double& d : p->duration_s) d *= std::exp(z(rng));
  summarize_blocks(run);
  return run;
}

TEST(Deciding, ALookStopsWhenEveryVerdictIsDecidedOrResolved) {
  LookSettings s;
  s.resamples = 300;
  EXPECT_EQ(look_at({}, noisy_run(10, 1.0, 1), 3.0, s), StoppedBy::decided);  // C like E: a clear pass
  EXPECT_EQ(look_at({}, noisy_run(10, 4.0, 2), 3.0, s), StoppedBy::decided);  // four times slower: a clear fail
  const RunResult at_cutoff = noisy_run(10, 1.4, 3);
  EXPECT_EQ(look_at({}, at_cutoff, 3.0, s), std::nullopt);  // straddles the cutoff: go on
  s.resolution = 5.0;  // any interval is narrow enough
  EXPECT_EQ(look_at({}, at_cutoff, 3.0, s), StoppedBy::resolution);
  // The look judges the repetitions so far together: an earlier one that is undecided keeps it going.
  LookSettings plain;
  plain.resamples = 300;
  EXPECT_EQ(look_at({&at_cutoff}, noisy_run(10, 1.4, 4), 3.0, plain), std::nullopt);
}

}  // namespace
}  // namespace ib
