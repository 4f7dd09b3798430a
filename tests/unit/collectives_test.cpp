// The collective tenant's figures (harness/stats/collectives.h) on hand-computed values.
#include "harness/stats/collectives.h"
#include "harness/analysis/ranks.h"
#include "kernels/workload.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ib {
namespace {

TEST(Collectives, BusBandwidthFactorsAreNcclTests) {
  // 8 ranks: allreduce 2*7/8 = 1.75; allgather, reduce-scatter, alltoall 7/8; broadcast 1.
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allgather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::reduce_scatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::alltoall, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::broadcast, 8), 1.0);
  // 2 ranks: allreduce 1, the others 1/2; one rank moves nothing but a broadcast's copy.
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allgather, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 1), 0.0);
  EXPECT_THROW(busbw_factor(Collective::allreduce, 0), std::invalid_argument);
}

TEST(Collectives, AlgorithmAndBusBandwidth) {
  // 256 MiB allreduce in 2 ms over 4 ranks: algbw 134.2 GB/s, busbw x 1.5 = 201.3 GB/s.
  const double bytes = 256.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(algbw(bytes, 0.002), 134217728000.0);
  EXPECT_DOUBLE_EQ(busbw(Collective::allreduce, 4, bytes, 0.002), 201326592000.0);
}

TEST(Collectives, NamesRoundTrip) {
  for (Collective c : {Collective::allreduce, Collective::allgather, Collective::reduce_scatter, Collective::alltoall,
                       Collective::broadcast})
    EXPECT_EQ(parse_collective(collective_name(c)), c);
  EXPECT_FALSE(parse_collective("all-reduce").has_value());
}

TEST(Collectives, ASampleIsTheSlowestRank) {
  EXPECT_DOUBLE_EQ(collective_sample({0.010, 0.013, 0.011}), 0.013);
  EXPECT_THROW(collective_sample({}), std::invalid_argument);
}

// The straggler is the rank that arrives last (arrivals in ns, [rank][iteration]). Per iteration the latest:
// 0 -> rank 1 (150), 1 -> rank 2 (210), 2 -> rank 1 (350), 3 -> rank 1 (450): rank 1 in 3 of 4. The earliest
// arrival would name rank 0 (iterations 0, 2, 3); so would the longest duration, since every rank's duration
// runs from its arrival to the same completion.
TEST(Collectives, TheStragglerIsTheRankThatArrivesLastMostOften) {
  const auto s = straggler_rank({{100, 200, 300, 400}, {150, 190, 350, 450}, {120, 210, 310, 410}});
  EXPECT_EQ(s.rank, 1);
  EXPECT_DOUBLE_EQ(s.share, 0.75);
  // One rank is last every time, by a single nanosecond.
  const auto one = straggler_rank({{10, 20, 30}, {11, 21, 31}});
  EXPECT_EQ(one.rank, 1);
  EXPECT_DOUBLE_EQ(one.share, 1.0);
}

TEST(Collectives, TiesGoToTheLowerRank) {
  // An exact tie in arrival (iteration 0) is the lower rank's: rank 0 last in both iterations, share 1
  // (counting the tie for rank 1 would give 0.5 each).
  const auto exact = straggler_rank({{5, 7}, {5, 6}});
  EXPECT_EQ(exact.rank, 0);
  EXPECT_DOUBLE_EQ(exact.share, 1.0);
  // A tie in counts: rank 1 last in iteration 0, rank 2 in iteration 1: rank 1, half the iterations.
  const auto counts = straggler_rank({{0, 0}, {5, 1}, {1, 5}});
  EXPECT_EQ(counts.rank, 1);
  EXPECT_DOUBLE_EQ(counts.share, 0.5);
}

TEST(Collectives, AStragglerNeedsEqualIterationsOfEveryRank) {
  EXPECT_THROW(straggler_rank({{1, 2}, {1}}), std::invalid_argument);
  EXPECT_THROW(straggler_rank({{}, {}}), std::invalid_argument);
  EXPECT_THROW(straggler_rank({}), std::invalid_argument);
}

TEST(Collectives, AmplificationIsTheJobsSlowdownOverOneGpus) {
  // One GPU alone slows by 25% under the aggressor; the 8-rank job by 60%: amplified 2.4x.
  EXPECT_DOUBLE_EQ(*amplification(0.60, 0.25), 2.4);
  EXPECT_DOUBLE_EQ(*amplification(0.25, 0.25), 1.0);
  EXPECT_FALSE(amplification(0.30, 0.005).has_value());  // nothing to amplify
}

TEST(Collectives, BlastRadiusCountsTheRanksThatSlowed) {
  // Medians exclusive 1.0 each; colocated 1.3, 1.04, 1.2, 1.0: with a 10% threshold ranks 0 and 2.
  const std::vector<std::vector<double>> e = {{1.0, 1.0, 1.0}, {1.0, 1.0, 1.0}, {1.0, 1.0, 1.0}, {1.0, 1.0, 1.0}};
  const std::vector<std::vector<double>> c = {{1.3, 1.2, 1.4}, {1.04, 1.0, 1.1}, {1.2, 1.2, 1.2}, {1.0, 1.0, 1.0}};
  EXPECT_EQ(blast_radius(e, c, 0.10), 2);
  EXPECT_EQ(blast_radius(e, c, 0.03), 3);
  EXPECT_THROW(blast_radius(e, {{1.0}}, 0.1), std::invalid_argument);
}

// The threshold is relative to each rank's own exclusive median: 10% of a 10 s collective is 1 s. A rank at
// 10.5 s (+5%) has not slowed past it; one at 11.5 s (+15%) has. Added as seconds (10 + 0.1) both would count.
TEST(Collectives, TheBlastRadiusThresholdIsAFractionOfEachRanksMedian) {
  const std::vector<std::vector<double>> e = {{10.0, 10.0, 10.0}, {10.0, 10.0, 10.0}, {0.01, 0.01, 0.01}};
  const std::vector<std::vector<double>> c = {{10.5, 10.5, 10.5}, {11.5, 11.5, 11.5}, {0.0105, 0.0105, 0.0105}};
  EXPECT_EQ(blast_radius(e, c, 0.10), 1);
  EXPECT_EQ(blast_radius(e, c, 0.04), 3);  // 5% above each: past a 4% threshold, the 10 ms rank too
}

TEST(Collectives, TheLongestStallAgainstATimeout) {
  // PyTorch's default NCCL timeout, 600 s, against a 150 s stall: a margin of 4.
  const auto m = stall_margin({0.02, 150.0, 0.03}, 600.0);
  EXPECT_DOUBLE_EQ(m.longest_stall_s, 150.0);
  EXPECT_DOUBLE_EQ(m.margin, 4.0);
  EXPECT_LT(stall_margin({700.0}, 600.0).margin, 1.0);  // that job would have been killed
}

}  // namespace
}  // namespace ib

namespace ib {
namespace {

// A tenant with ranks (issues 35, 46): the straggler from the arrivals of the counted samples only; nothing
// for a phase without arrivals or whose arrival columns do not match its samples. Every sample ends when
// both ranks are done (at 150, 250, 350, 450 ns), so the durations name the rank that waited: rank 0 the
// longest in samples 0 and 1. The arrivals name rank 1 last in samples 0 and 1, rank 0 in 2 (and in the
// uncounted 3, which would have tied it).
TEST(RankFigures, StragglerFromTheArrivalsOfTheCountedSamples) {
  PhaseResult p;
  p.start_ns = {100, 200, 300, 390};
  p.counted = {1, 1, 1, 0};
  p.rank_start_ns = {{100, 200, 310, 400}, {110, 205, 300, 390}};
  p.rank_duration_s = {{50e-9, 50e-9, 40e-9, 50e-9}, {40e-9, 45e-9, 50e-9, 60e-9}};
  summarize_ranks(p);
  ASSERT_TRUE(p.rank_figures);
  EXPECT_EQ(p.rank_figures->ranks, 2);
  EXPECT_EQ(p.rank_figures->straggler_rank, 1);
  EXPECT_DOUBLE_EQ(p.rank_figures->straggler_share, 2.0 / 3.0);
  p.rank_start_ns[1].pop_back();
  summarize_ranks(p);
  EXPECT_FALSE(p.rank_figures);
  p.rank_start_ns.clear();  // durations without arrivals (a file of schema 2.6): no straggler
  summarize_ranks(p);
  EXPECT_FALSE(p.rank_figures);
}

}  // namespace
}  // namespace ib

namespace ib {
namespace {

// Blast radius and stall margin of a tenant with ranks (issue 35), on hand values: rank 0 slowed by 50%
// (median 1 -> 1.5), rank 1 by 5% (under the 10% threshold a 40% cutoff gives); the longest counted
// colocated sample is 4 s against a 600 s timeout: margin 150. An uncounted 900 s sample is not a stall
// of the measurement.
TEST(RankFigures, BlastRadiusAndStallMarginOnHandValues) {
  TenantResult t;
  t.exclusive.counted = {1, 1, 1};
  t.exclusive.duration_s = {1.0, 1.0, 1.0};
  t.exclusive.rank_duration_s = {{1.0, 1.0, 1.0}, {1.0, 1.0, 1.0}};
  t.colocated.counted = {1, 1, 1, 0};
  t.colocated.duration_s = {1.5, 1.5, 4.0, 900.0};
  t.colocated.rank_duration_s = {{1.5, 1.5, 4.0, 900.0}, {1.05, 1.05, 1.0, 1.0}};
  const auto m = collective_metrics(t, 0.40, 600.0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->ranks, 2);
  EXPECT_EQ(m->blast_radius, 1);
  EXPECT_DOUBLE_EQ(m->blast_threshold, 0.10);
  EXPECT_DOUBLE_EQ(m->longest_stall_s, 4.0);
  EXPECT_DOUBLE_EQ(m->stall_margin, 150.0);
  t.exclusive.rank_duration_s.pop_back();  // rank counts differ: nothing to say
  EXPECT_FALSE(collective_metrics(t, 0.40, 600.0));
  TenantResult plain;  // no ranks
  EXPECT_FALSE(collective_metrics(plain, 0.40, 600.0));
}

// The stall is judged per collective where the workload reports each sample's longest one
// (kLongestCollectiveCounter): the 4 s sample of 16 collectives whose longest took 0.5 s is a 0.5 s stall,
// margin 1200 against 600 s, not the whole sample's 150; the uncounted sample's 300 s collective is not the
// measurement's. A counter column of the wrong length falls back to the samples.
TEST(RankFigures, TheStallIsTheLongestCollectiveWhereTheSampleSaysSo) {
  TenantResult t;
  t.exclusive.counted = {1, 1};
  t.exclusive.rank_duration_s = {{1.0, 1.0}, {1.0, 1.0}};
  t.colocated.counted = {1, 1, 0};
  t.colocated.duration_s = {1.0, 4.0, 900.0};
  t.colocated.rank_duration_s = {{1.0, 4.0, 900.0}, {1.0, 4.0, 900.0}};
  t.colocated.counter_samples[kLongestCollectiveCounter] = {0.1, 0.5, 300.0};
  auto m = collective_metrics(t, 0.40, 600.0);
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->longest_stall_s, 0.5);
  EXPECT_DOUBLE_EQ(m->stall_margin, 1200.0);
  t.colocated.counter_samples[kLongestCollectiveCounter].pop_back();
  m = collective_metrics(t, 0.40, 600.0);
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->longest_stall_s, 4.0);
}

}  // namespace
}  // namespace ib
