// Statistics (docs/design.md section 4) against hand-computed values. Every expected number below is
// worked out in the comment next to it, not produced by the code under test.
#include "harness/stats/stats.h"
#include "tests/unit/test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace ib {
namespace {

using namespace ib::test;


std::vector<double> one_to_ten() { return {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; }

// ---------------------------------------------------------------- mean / stddev / cv

TEST(Stats, MeanOfKnownValues) {
  // (2+4+4+4+5+5+7+9) / 8 = 40 / 8 = 5
  EXPECT_DOUBLE_EQ(mean({2, 4, 4, 4, 5, 5, 7, 9}), 5.0);
  // (1+...+10) / 10 = 55 / 10 = 5.5
  EXPECT_DOUBLE_EQ(mean(one_to_ten()), 5.5);
  EXPECT_DOUBLE_EQ(mean({-3.0, 3.0}), 0.0);
}

TEST(Stats, StddevUsesNMinusOne) {
  // deviations from 5: -3 -1 -1 -1 0 0 2 4; squares sum 9+1+1+1+0+0+4+16 = 32.
  // n-1 = 7: sqrt(32/7) = 2.138089935299395 (population n=8 would give sqrt(4) = 2).
  EXPECT_NEAR(stddev({2, 4, 4, 4, 5, 5, 7, 9}), 2.138089935299395, kTol);
  // [1..10]: sum of squared deviations from 5.5 = 2*(0.25+2.25+6.25+12.25+20.25) = 82.5;
  // sqrt(82.5/9) = 3.0276503540974917.
  EXPECT_NEAR(stddev(one_to_ten()), 3.0276503540974917, kTol);
  // Two values: sqrt(((1-2)^2 + (3-2)^2) / 1) = sqrt(2).
  EXPECT_NEAR(stddev({1, 3}), std::sqrt(2.0), kTol);
  EXPECT_DOUBLE_EQ(stddev({7, 7, 7, 7}), 0.0);
}

TEST(Stats, CvIsStddevOverMean) {
  // 2.138089935299395 / 5 = 0.427617987059879
  EXPECT_NEAR(cv({2, 4, 4, 4, 5, 5, 7, 9}), 0.427617987059879, kTol);
  // 3.0276503540974917 / 5.5 = 0.5504818825631803
  EXPECT_NEAR(cv(one_to_ten()), 0.5504818825631803, kTol);
  // Mean 0: undefined.
  EXPECT_TRUE(std::isnan(cv({-1.0, 1.0})));
}

TEST(Stats, EmptyAndSingleElement) {
  const std::vector<double> empty;
  EXPECT_TRUE(std::isnan(mean(empty)));
  EXPECT_TRUE(std::isnan(stddev(empty)));
  EXPECT_TRUE(std::isnan(cv(empty)));
  EXPECT_TRUE(std::isnan(median(empty)));
  EXPECT_TRUE(std::isnan(percentile(empty, 50)));
  EXPECT_TRUE(std::isnan(percentile_sorted(empty, 95)));

  const std::vector<double> one = {3.25};
  EXPECT_DOUBLE_EQ(mean(one), 3.25);
  EXPECT_TRUE(std::isnan(stddev(one)));  // n-1 = 0
  EXPECT_TRUE(std::isnan(cv(one)));
  EXPECT_DOUBLE_EQ(median(one), 3.25);
  EXPECT_DOUBLE_EQ(percentile(one, 0), 3.25);
  EXPECT_DOUBLE_EQ(percentile(one, 95), 3.25);
  EXPECT_DOUBLE_EQ(percentile(one, 100), 3.25);
}

// ---------------------------------------------------------------- median / percentiles

TEST(Stats, MedianOddEvenAndUnsorted) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  // even n: h = 3 * 0.5 = 1.5 over sorted [1,2,3,4] -> 2 + 0.5*(3-2) = 2.5
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({10, -5}), 2.5);
}

TEST(Stats, PercentileNumpyLinearOneToTen) {
  const auto x = one_to_ten();
  // h = (n-1) q/100 = 9 * 0.95 = 8.55 -> x[8] + 0.55 (x[9] - x[8]) = 9 + 0.55 = 9.55
  EXPECT_NEAR(percentile_sorted(x, 95), 9.55, kTol);
  // h = 9 * 0.05 = 0.45 -> x[0] + 0.45 (x[1] - x[0]) = 1.45
  EXPECT_NEAR(percentile_sorted(x, 5), 1.45, kTol);
  // h = 9 * 0.99 = 8.91 -> 9 + 0.91 = 9.91
  EXPECT_NEAR(percentile_sorted(x, 99), 9.91, kTol);
  // h = 4.5 -> 5 + 0.5 = 5.5
  EXPECT_NEAR(percentile_sorted(x, 50), 5.5, kTol);
  // h = 0 and h = 9: the ends exactly.
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 100), 10.0);
}

TEST(Stats, PercentileOtherHandComputedCases) {
  const std::vector<double> x = {10, 20, 30, 40, 50};
  // h = 4 * 0.30 = 1.2 -> x[1] + 0.2 (x[2] - x[1]) = 20 + 2 = 22
  EXPECT_NEAR(percentile_sorted(x, 30), 22.0, kTol);
  // h = 4 * 0.95 = 3.8 -> 40 + 0.8 * 10 = 48
  EXPECT_NEAR(percentile_sorted(x, 95), 48.0, kTol);
  // h = 4 * 0.25 = 1.0 exactly -> x[1] = 20 (no interpolation)
  EXPECT_NEAR(percentile_sorted(x, 25), 20.0, kTol);

  // Uneven gaps: sorted [1, 2, 4, 8, 100]; h = 4 * 0.9 = 3.6 -> 8 + 0.6 (100 - 8) = 63.2
  // percentile() sorts its input first.
  EXPECT_NEAR(percentile({100, 4, 1, 8, 2}, 90), 63.2, kTol);
  // h = 4 * 0.1 = 0.4 -> 1 + 0.4 (2 - 1) = 1.4
  EXPECT_NEAR(percentile({100, 4, 1, 8, 2}, 10), 1.4, kTol);

  // Two values: h = 0.95 -> 1 + 0.95 (3 - 1) = 2.9
  EXPECT_NEAR(percentile({3, 1}, 95), 2.9, kTol);
}

TEST(Stats, PercentileOutOfRangeQIsNaN) {
  EXPECT_TRUE(std::isnan(percentile(one_to_ten(), -1)));
  EXPECT_TRUE(std::isnan(percentile(one_to_ten(), 100.5)));
}

// ---------------------------------------------------------------- summarize

TEST(Stats, SummarizeAllFields) {
  // Shuffled 1..10 so summarize has to sort.
  const Summary s = summarize({7, 3, 10, 1, 5, 9, 2, 8, 4, 6});
  EXPECT_EQ(s.n, 10u);
  EXPECT_NEAR(s.mean, 5.5, kTol);
  EXPECT_NEAR(s.stddev, 3.0276503540974917, kTol);
  EXPECT_NEAR(s.cv, 0.5504818825631803, kTol);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_NEAR(s.p5, 1.45, kTol);
  EXPECT_NEAR(s.p50, 5.5, kTol);
  EXPECT_NEAR(s.median, 5.5, kTol);
  EXPECT_NEAR(s.p95, 9.55, kTol);
  EXPECT_NEAR(s.p99, 9.91, kTol);
}

TEST(Stats, SummarizeEmptyIsAllNaN) {
  const Summary s = summarize({});
  EXPECT_EQ(s.n, 0u);
  for (double v : {s.mean, s.median, s.stddev, s.cv, s.min, s.max, s.p5, s.p50, s.p95, s.p99})
    EXPECT_TRUE(std::isnan(v));
}

TEST(Stats, SummarizeSingleElement) {
  const Summary s = summarize({0.004});
  EXPECT_EQ(s.n, 1u);
  EXPECT_DOUBLE_EQ(s.mean, 0.004);
  EXPECT_TRUE(std::isnan(s.stddev));
  EXPECT_TRUE(std::isnan(s.cv));
  for (double v : {s.min, s.max, s.p5, s.p50, s.median, s.p95, s.p99}) EXPECT_DOUBLE_EQ(v, 0.004);
}

// The selection percentile (nth_element: the array is only partly sorted afterwards) must interpolate
// between the same two order statistics as the sorted one, on data where the neighbour of the
// selected element is not the next order statistic: random values, many sizes and levels.
TEST(Stats, PercentileBySelectionEqualsTheSortedOneOnRandomData) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::size_t n : {2u, 3u, 5u, 17u, 100u, 1001u}) {
    std::vector<double> x(n);
    for (auto& v : x) v = u(rng);
    std::vector<double> sorted = x;
    std::sort(sorted.begin(), sorted.end());
    for (double q : {0.0, 1.0, 5.0, 33.3, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0}) {
      std::vector<double> work = x;  // percentile_select reorders its argument
      EXPECT_EQ(percentile_select(work, q), percentile_sorted(sorted, q)) << "n=" << n << " q=" << q;
    }
  }
}

// ---------------------------------------------------------------- MAD outliers

TEST(Stats, MadOutliersFlagsFarPoint) {
  // [1,2,3,4,100]: median 3; |x - 3| = [2,1,0,1,97] -> MAD = median = 1.
  // M = 0.6745 (x - 3) / 1 = [-1.349, -0.6745, 0, 0.6745, 65.41]: only 100 exceeds 3.5.
  const auto f = mad_outliers({1, 2, 3, 4, 100});
  EXPECT_EQ(f, (std::vector<std::uint8_t>{0, 0, 0, 0, 1}));
  // Below the median too: [-100, 1, 2, 3, 4]: median 2, |x-2| = [102,1,0,1,2] -> MAD 1.
  EXPECT_EQ(mad_outliers({-100, 1, 2, 3, 4}), (std::vector<std::uint8_t>{1, 0, 0, 0, 0}));
}

TEST(Stats, MadOutliersThresholdBoundary) {
  // [1,2,3,4,5,6,v] with v >= 7: median 4; |x-4| = [3,2,1,0,1,2,v-4] -> sorted 0,1,1,2,2,3,v-4,
  // MAD = 2. M_v = 0.6745 (v - 4) / 2 > 3.5  <=>  v > 4 + 7/0.6745 = 14.378.
  // v = 14.5: M = 0.6745 * 10.5 / 2 = 3.5411 -> flagged.
  EXPECT_EQ(mad_outliers({1, 2, 3, 4, 5, 6, 14.5}), (std::vector<std::uint8_t>{0, 0, 0, 0, 0, 0, 1}));
  // v = 14.3: M = 0.6745 * 10.3 / 2 = 3.4737 -> not flagged (a 1.4826-style factor would flag it).
  EXPECT_EQ(mad_outliers({1, 2, 3, 4, 5, 6, 14.3}), (std::vector<std::uint8_t>(7, 0)));
  // Custom threshold 1.0: M(1) = 0.6745 * 3 / 2 = 1.01175 > 1 flagged; M(2) = M(6) = 0.6745 not;
  // M(14.3) = 3.4737 flagged.
  EXPECT_EQ(mad_outliers({1, 2, 3, 4, 5, 6, 14.3}, 1.0), (std::vector<std::uint8_t>{1, 0, 0, 0, 0, 0, 1}));
}

TEST(Stats, MadOutliersAtExactlyTheThresholdAreNotFlagged) {
  // Flagged when |M| > threshold, not >=: a threshold equal to a point's |M| (computed the same way)
  // leaves it unflagged. [1,2,3,4,5,6,20]: median 4, deviations [3,2,1,0,1,2,16] -> MAD 2.
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 20};
  const double m_of_20 = std::fabs(0.6745 * (20.0 - 4.0) / 2.0);  // 5.396
  EXPECT_EQ(mad_outliers(x, m_of_20), (std::vector<std::uint8_t>(7, 0)));
  EXPECT_EQ(mad_outliers(x, std::nextafter(m_of_20, 0.0)), (std::vector<std::uint8_t>{0, 0, 0, 0, 0, 0, 1}));
}

TEST(Stats, MadZeroFlagsNothing) {
  // median 5, deviations [0,0,0,0,95] -> MAD 0: nothing flagged, even the 100.
  EXPECT_EQ(mad_outliers({5, 5, 5, 5, 100}), (std::vector<std::uint8_t>(5, 0)));
  EXPECT_TRUE(mad_outliers({}).empty());
  EXPECT_EQ(mad_outliers({42}), (std::vector<std::uint8_t>{0}));
}

// ---------------------------------------------------------------- window throughput CV


TEST(Stats, WindowCvSamplesExactlyFillingWindows) {
  // Windows start at the first sample's start (a 5 s offset here), window_s = 1, work 10/sample:
  //   w0: two 0.5 s samples      -> 20 work -> 20/s
  //   w1: one 1.0 s sample       -> 10/s
  //   w2: four 0.25 s samples    -> 40/s
  // mean 70/3, sample stddev sqrt(((20-70/3)^2 + (10-70/3)^2 + (40-70/3)^2)/2) = sqrt(700/3) = 15.275
  // CV = 15.275 / 23.333 = 0.6546536707079772
  const std::int64_t t0 = 5 * kSec;
  const std::vector<std::int64_t> start = {t0,
                                           t0 + kSec / 2,
                                           t0 + kSec,
                                           t0 + 2 * kSec,
                                           t0 + 2 * kSec + kSec / 4,
                                           t0 + 2 * kSec + kSec / 2,
                                           t0 + 2 * kSec + 3 * kSec / 4};
  const std::vector<double> dur = {0.5, 0.5, 1.0, 0.25, 0.25, 0.25, 0.25};
  EXPECT_NEAR(window_throughput_cv(start, dur, 10.0), 0.6546536707079772, 1e-9);
  // Equal windows: CV 0.
  EXPECT_NEAR(window_throughput_cv({0, kSec}, {1.0, 1.0}, 3.0), 0.0, 1e-12);
}

TEST(Stats, WindowCvStraddlingSampleSplitProportionally) {
  // work 10/sample, window 1 s:
  //   [0, 0.5)        -> w0 gets 10
  //   [0.5, 1.5)      -> straddles: 0.5/1.0 of it in w0 (5), 0.5/1.0 in w1 (5)
  //   [1.5, 1.75), [1.75, 2.0) -> w1 gets 20
  //   [2.0, 3.0)      -> w2 gets 10
  // windows [15, 25, 10]: mean 50/3, stddev sqrt((25/9 + 625/9 + 400/9)/2) = sqrt(350/6) = 7.6376
  // CV = 7.6376 / 16.667 = 0.458257569495584.
  // (Counting the straddler wholly in its start window gives [20, 20, 10], CV 0.3464.)
  const std::vector<std::int64_t> start = {0, kSec / 2, 3 * kSec / 2, 7 * kSec / 4, 2 * kSec};
  const std::vector<double> dur = {0.5, 1.0, 0.25, 0.25, 1.0};
  EXPECT_NEAR(window_throughput_cv(start, dur, 10.0), 0.458257569495584, 1e-9);
}

TEST(Stats, WindowCvStraddlerBalancesWindows) {
  // [0,0.6) in w0; [0.6,1.4) straddles 0.4/0.8 each side; [1.4,2.0) in w1.
  // w0 = 10 + 10*0.5 = 15, w1 = 10*0.5 + 10 = 15 -> CV 0.
  const std::vector<std::int64_t> start = {0, 6 * kSec / 10, 14 * kSec / 10};
  const std::vector<double> dur = {0.6, 0.8, 0.6};
  EXPECT_NEAR(window_throughput_cv(start, dur, 10.0), 0.0, 1e-12);
}

TEST(Stats, WindowCvTrailingPartialWindowDropped) {
  // w0: two 0.5 s samples -> 20; w1: one 1.0 s sample -> 10; then [2.0, 2.5) only half-fills w2,
  // which is dropped. CV of [20, 10] = 7.0711 / 15 = 0.4714045207910317.
  // (Keeping the partial window would give [20, 10, 10] or [20, 10, 20].)
  const std::vector<std::int64_t> start = {0, kSec / 2, kSec, 2 * kSec};
  const std::vector<double> dur = {0.5, 0.5, 1.0, 0.5};
  EXPECT_NEAR(window_throughput_cv(start, dur, 10.0), 0.4714045207910317, 1e-9);
}

TEST(Stats, WindowCvFewerThanTwoCompleteWindowsIsNaN) {
  // Samples cover 1.9 s: one complete window.
  EXPECT_TRUE(std::isnan(window_throughput_cv({0, kSec}, {1.0, 0.9}, 1.0)));
  // Exactly one window.
  EXPECT_TRUE(std::isnan(window_throughput_cv({0}, {1.0}, 1.0)));
  EXPECT_TRUE(std::isnan(window_throughput_cv({}, {}, 1.0)));
  // Mismatched lengths and a non-positive window are rejected.
  EXPECT_TRUE(std::isnan(window_throughput_cv({0, kSec}, {1.0}, 1.0)));
  EXPECT_TRUE(std::isnan(window_throughput_cv({0, kSec}, {1.0, 1.0}, 1.0, 0.0)));
}

TEST(Stats, WindowCvHonoursWindowLength) {
  // window_s = 0.5: samples [0,0.5) [0.5,1.0) [1.0,1.5) with durations chosen so windows get
  // 1 sample, 1 sample, 2 samples: [0,0.5), [0.5,1.0), [1.0,1.25), [1.25,1.5). Work 1 each:
  // throughputs [2, 2, 4]/s: mean 8/3, stddev sqrt((4/9+4/9+16/9)/2) = sqrt(4/3) = 1.1547,
  // CV = 1.1547 / 2.6667 = 0.4330127018922193.
  const std::vector<std::int64_t> start = {0, kSec / 2, kSec, 5 * kSec / 4};
  const std::vector<double> dur = {0.5, 0.5, 0.25, 0.25};
  EXPECT_NEAR(window_throughput_cv(start, dur, 1.0, 0.5), 0.4330127018922193, 1e-9);
}

}  // namespace
}  // namespace ib
