// Interference metrics and verdicts (docs/design.md section 4) against hand-computed values.
#include "harness/stats/metrics.h"
#include "harness/core/numbers.h"
#include "tests/unit/test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace ib {
namespace {

using namespace ib::test;


// Deterministic, well-behaved sample times around `base` (spread +-5%), n values, in a scrambled
// order. (i * 37) % 100 runs over 0..99 once per 100 indices.
std::vector<double> spread(double base, int n, int stride = 37) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(base * (0.95 + 0.1 * ((i * stride) % 100) / 100.0));
  return v;
}

// One repetition of one block: the flat data of the tests below.
BlockedSamples one(const std::vector<double>& x) { return {{x}}; }

// An estimate with this point value and CI (what the verdict judges).
Estimate est(double value, double lo, double hi) { return Estimate{value, lo, hi, 0.95, 1000, 1}; }

// ---------------------------------------------------------------- p95_slowdown

TEST(Metrics, P95SlowdownPointValue) {
  // E = [1..10]: h = 9 * 0.95 = 8.55 -> P95(E) = 9 + 0.55 * 1 = 9.55.
  // C = [2,4,...,18,30]: P95(C) = 18 + 0.55 * (30 - 18) = 24.6.
  // P95(C)/P95(E) - 1 = 24.6 / 9.55 - 1 = 1.575916230366492.
  const std::vector<double> E = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const std::vector<double> C = {30, 2, 4, 6, 8, 10, 12, 14, 16, 18};  // unsorted on purpose
  const Estimate e = p95_slowdown(one(C), one(E), 7, 200);
  EXPECT_NEAR(e.value, 1.575916230366492, kTol);
  EXPECT_EQ(e.resamples, 200);
  EXPECT_EQ(e.seed, 7u);
  EXPECT_DOUBLE_EQ(e.confidence, 0.95);
}

TEST(Metrics, P95SlowdownOfScaledDataIsTheScale) {
  // C = 1.25 E exactly: P95 scales linearly, so the slowdown is 0.25.
  const auto E = spread(1e-3, 100);
  std::vector<double> C;
  for (double x : E) C.push_back(1.25 * x);
  EXPECT_NEAR(p95_slowdown(one(C), one(E), 1, 0).value, 0.25, 1e-12);
  // Faster colocated: negative slowdown, C = 0.8 E -> -0.2.
  std::vector<double> F;
  for (double x : E) F.push_back(0.8 * x);
  EXPECT_NEAR(p95_slowdown(one(F), one(E), 1, 0).value, -0.2, 1e-12);
}

TEST(Metrics, P95SlowdownCiContainsPointValue) {
  const auto E = spread(1.0, 200, 37);
  const auto C = spread(1.3, 300, 59);
  const Estimate e = p95_slowdown(one(C), one(E), 12345, 1000);
  ASSERT_FALSE(std::isnan(e.ci_low));
  ASSERT_FALSE(std::isnan(e.ci_high));
  EXPECT_LT(e.ci_low, e.ci_high);
  EXPECT_LE(e.ci_low, e.value);
  EXPECT_GE(e.ci_high, e.value);
  // Both samples lie within +-5% of 1.0 and 1.3, so every replicate is in
  // [1.3*0.95/1.05 - 1, 1.3*1.05/0.95 - 1] = [0.176, 0.437].
  EXPECT_GT(e.ci_low, 1.3 * 0.95 / 1.05 - 1.0);
  EXPECT_LT(e.ci_high, 1.3 * 1.05 / 0.95 - 1.0);
}

TEST(Metrics, P95SlowdownCiReproducibleFromSeed) {
  const auto E = spread(1.0, 150, 37);
  const auto C = spread(1.2, 150, 59);
  const Estimate a = p95_slowdown(one(C), one(E), 42, 500);
  const Estimate b = p95_slowdown(one(C), one(E), 42, 500);
  EXPECT_EQ(a.ci_low, b.ci_low);
  EXPECT_EQ(a.ci_high, b.ci_high);
  EXPECT_EQ(a.value, b.value);
  const Estimate c = p95_slowdown(one(C), one(E), 43, 500);
  EXPECT_EQ(a.value, c.value);  // the point value does not depend on the seed
  EXPECT_TRUE(a.ci_low != c.ci_low || a.ci_high != c.ci_high);
}

TEST(Metrics, P95SlowdownZeroResamplesGivesNaNCi) {
  const std::vector<double> E = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const Estimate e = p95_slowdown(one(E), one(E), 1, 0);
  EXPECT_NEAR(e.value, 0.0, kTol);
  EXPECT_TRUE(std::isnan(e.ci_low));
  EXPECT_TRUE(std::isnan(e.ci_high));
  EXPECT_EQ(e.resamples, 0);
}

TEST(Metrics, P95SlowdownEmptyInputIsNaN) {
  const std::vector<double> E = {1, 2, 3};
  const Estimate a = p95_slowdown({}, one(E), 1, 100);
  EXPECT_TRUE(std::isnan(a.value));
  EXPECT_TRUE(std::isnan(a.ci_low));
  const Estimate b = p95_slowdown(one(E), {}, 1, 100);
  EXPECT_TRUE(std::isnan(b.value));
  EXPECT_TRUE(std::isnan(b.ci_high));
}

TEST(Metrics, P95SlowdownConstantDataHasDegenerateCi) {
  // Every replicate of constant data is 1.5/1.0 - 1 = 0.5.
  const std::vector<double> E(80, 1.0), C(80, 1.5);
  const Estimate e = p95_slowdown(one(C), one(E), 9, 100);
  EXPECT_NEAR(e.value, 0.5, kTol);
  EXPECT_NEAR(e.ci_low, 0.5, kTol);
  EXPECT_NEAR(e.ci_high, 0.5, kTol);
}

// ---------------------------------------------------------------- median-based ratios

TEST(Metrics, MedianRatios) {
  // median(C) = median([3,1,2,9]) = (2+3)/2 = 2.5; median(E) = median([1,2]) = 1.5;
  // median(A) = median([2,2,2]) = 2.
  const std::vector<double> C = {3, 1, 2, 9}, E = {1, 2}, A = {2, 2, 2};
  EXPECT_NEAR(median_slowdown(C, E), 2.5 / 1.5 - 1.0, kTol);  // +0.6667: a slowdown is a ratio minus 1
  EXPECT_NEAR(partition_cost(A, E), 2.0 / 1.5, kTol);   // 1.3333
  EXPECT_NEAR(interference(C, A), 2.5 / 2.0, kTol);     // 1.25
  // The three compose: 1 + median_slowdown = partition_cost * interference.
  EXPECT_NEAR(1.0 + median_slowdown(C, E), partition_cost(A, E) * interference(C, A), kTol);
}

TEST(Metrics, MedianRatiosUndefinedDenominator) {
  EXPECT_TRUE(std::isnan(median_slowdown({1, 2}, {})));
  EXPECT_TRUE(std::isnan(partition_cost({1, 2}, {0, 0})));
  EXPECT_TRUE(std::isnan(interference({1, 2}, {})));
}

// ---------------------------------------------------------------- STP / ANTT

TEST(Metrics, SystemThroughputAndAntt) {
  // Tenant 0: A 1, C 2 -> A/C = 0.5, C/A = 2.
  // Tenant 1: A 3, C 4 -> A/C = 0.75, C/A = 4/3.
  // STP = 0.5 + 0.75 = 1.25; ANTT = (2 + 4/3) / 2 = 5/3.
  const std::vector<MedianPair> t = {{1.0, 2.0}, {3.0, 4.0}};
  EXPECT_NEAR(system_throughput(t), 1.25, kTol);
  EXPECT_NEAR(average_normalised_turnaround(t), 5.0 / 3.0, kTol);

  // No interference: STP = number of tenants, ANTT = 1.
  const std::vector<MedianPair> none = {{0.01, 0.01}, {0.2, 0.2}, {3.0, 3.0}};
  EXPECT_NEAR(system_throughput(none), 3.0, kTol);
  EXPECT_NEAR(average_normalised_turnaround(none), 1.0, kTol);

  EXPECT_TRUE(std::isnan(system_throughput({})));
  EXPECT_TRUE(std::isnan(average_normalised_turnaround({})));
}

// ---------------------------------------------------------------- verdicts

TEST(Metrics, VerdictInconclusiveBelow72Samples) {
  EXPECT_EQ(kMinSamplesP95, 72u);
  // 71 in either phase: inconclusive even when the CI would pass or fail.
  EXPECT_EQ(slowdown_verdict(71, 1000, est(0.1, 0.0, 0.2), 0.4).verdict, Verdict::inconclusive);
  EXPECT_EQ(slowdown_verdict(1000, 71, est(0.1, 0.0, 0.2), 0.4).verdict, Verdict::inconclusive);
  EXPECT_EQ(slowdown_verdict(71, 71, est(5.0, 4.0, 6.0), 0.4).verdict, Verdict::inconclusive);
  EXPECT_EQ(slowdown_verdict(0, 0, est(0.0, 0.0, 0.0), 0.4).verdict, Verdict::inconclusive);
  // 72 is enough.
  EXPECT_EQ(slowdown_verdict(72, 72, est(0.1, 0.0, 0.2), 0.4).verdict, Verdict::pass);
  EXPECT_EQ(slowdown_verdict(72, 72, est(5.0, 4.0, 6.0), 0.4).verdict, Verdict::fail);
  const auto r = slowdown_verdict(71, 80, est(0.1, 0.0, 0.2), 0.4);
  EXPECT_NE(r.reason.find("72"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("exclusive 71"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("colocated 80"), std::string::npos) << r.reason;
}

TEST(Metrics, VerdictIsJudgedOnTheCiNotThePointEstimate) {
  // pass: the whole CI at or below the cutoff (the upper bound exactly at it passes).
  EXPECT_EQ(slowdown_verdict(100, 100, est(0.30, 0.20, 0.40), 0.40).verdict, Verdict::pass);
  EXPECT_EQ(slowdown_verdict(100, 100, est(-0.1, -0.2, 0.0), 0.40).verdict, Verdict::pass);
  // fail: the whole CI above the cutoff.
  EXPECT_EQ(slowdown_verdict(100, 100, est(0.60, 0.4000001, 0.8), 0.40).verdict, Verdict::fail);
  // inconclusive: the CI straddles the cutoff, whichever side the point estimate is on. A verdict on the
  // point estimate would pass the first and fail the second.
  const auto a = slowdown_verdict(100, 100, est(0.376, 0.19, 0.66), 0.40);
  EXPECT_EQ(a.verdict, Verdict::inconclusive);
  EXPECT_NE(a.reason.find("straddles"), std::string::npos) << a.reason;
  EXPECT_NE(a.reason.find("[19%, 66%]"), std::string::npos) << a.reason;
  EXPECT_EQ(slowdown_verdict(100, 100, est(0.45, 0.39, 0.50), 0.40).verdict, Verdict::inconclusive);
  // The lower bound exactly at the cutoff is not "above" it.
  EXPECT_EQ(slowdown_verdict(100, 100, est(0.5, 0.40, 0.6), 0.40).verdict, Verdict::inconclusive);
  // Another cutoff.
  EXPECT_EQ(slowdown_verdict(100, 100, est(0.15, 0.12, 0.18), 0.10).verdict, Verdict::fail);
  EXPECT_EQ(slowdown_verdict(100, 100, est(0.05, 0.02, 0.08), 0.10).verdict, Verdict::pass);
  EXPECT_DOUBLE_EQ(kDefaultCutoff, 0.40);
}

TEST(Metrics, VerdictWithoutCiOrValueIsInconclusive) {
  const auto r = slowdown_verdict(100, 100, est(kNaN, kNaN, kNaN), 0.40);
  EXPECT_EQ(r.verdict, Verdict::inconclusive);
  EXPECT_FALSE(r.reason.empty());
  // --resamples 0: a point estimate far below the cutoff is still not judged alone.
  const auto z = slowdown_verdict(100, 100, est(0.01, kNaN, kNaN), 0.40);
  EXPECT_EQ(z.verdict, Verdict::inconclusive);
  EXPECT_NE(z.reason.find("no confidence interval"), std::string::npos) << z.reason;
}

TEST(Metrics, VerdictNames) {
  EXPECT_STREQ(verdict_name(Verdict::pass), "pass");
  EXPECT_STREQ(verdict_name(Verdict::fail), "fail");
  EXPECT_STREQ(verdict_name(Verdict::inconclusive), "inconclusive");
  EXPECT_STREQ(verdict_name(Verdict::baseline), "baseline");
  EXPECT_STREQ(verdict_name(Verdict::waived), "waived");
  EXPECT_STREQ(verdict_name(Verdict::error), "error");
}

}  // namespace
}  // namespace ib
