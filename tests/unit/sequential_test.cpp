// Stopping a run when it has decided (harness/stats/sequential.h; docs/design.md section 4, "Deciding"):
// the O'Brien-Fleming boundaries against published values, and the rule as the run applies it
// (looks, boundaries, the round bootstrap's interval, the three-way verdict) on seeded sequences of
// rounds whose true P95 slowdown is at or near the cutoff, where a wrong decision is most likely.
#include "harness/stats/sequential.h"

#include "harness/stats/bootstrap.h"
#include "harness/stats/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

namespace ib {
namespace {

TEST(Sequential, OneLookIsTheFixedLengthQuantile) {
  const auto z = obrien_fleming_boundaries({10});
  ASSERT_EQ(z.size(), 1u);
  EXPECT_NEAR(z[0], 1.959964, 2e-4);
  EXPECT_NEAR(upper_crossing_probability({1.0}, {1.959964}), 0.025, 1e-6);
}

TEST(Sequential, ObrienFlemingConstantsMatchThePublishedTable) {
  // Jennison and Turnbull (2000), Table 2.3, two-sided alpha 0.05, K equally spaced looks: the final
  // boundary C_B(K) is 1.960, 1.977, 2.004, 2.024, 2.040 for K = 1..5; the first is C_B sqrt(K).
  const double published[] = {1.960, 1.977, 2.004, 2.024, 2.040};
  for (int K = 1; K <= 5; ++K) {
    std::vector<int> looks;
    for (int k = 1; k <= K; ++k) looks.push_back(4 * k);
    const auto z = obrien_fleming_boundaries(looks);
    EXPECT_NEAR(z.back(), published[K - 1], 2e-3) << K;
    EXPECT_NEAR(z.front(), published[K - 1] * std::sqrt(static_cast<double>(K)), 5e-3) << K;
    for (std::size_t k = 1; k < z.size(); ++k) EXPECT_LT(z[k], z[k - 1]);  // strict early, lenient late
  }
}

TEST(Sequential, CrossingProbabilityOfTwoLooksByHand) {
  // Looks at t = 0.5 and 1 with z = 2 and 2: P(Z1 >= 2) + P(Z1 < 2, Z2 >= 2), Z1 and Z2 standard normal
  // with correlation sqrt(0.5). P(Z1 >= 2) = 0.0227501; the second term is 0.0227501 - P(both >= 2),
  // and P(both >= 2) for correlation 0.7071 is 0.0078 (bivariate normal tables), so about 0.0377.
  const double p = upper_crossing_probability({0.5, 1.0}, {2.0, 2.0});
  EXPECT_NEAR(p, 0.0377, 6e-4);
}

TEST(Sequential, BadLooksAreRefused) {
  EXPECT_THROW(obrien_fleming_boundaries({}), std::invalid_argument);
  EXPECT_THROW(obrien_fleming_boundaries({10, 10}), std::invalid_argument);
  EXPECT_THROW(obrien_fleming_boundaries({12, 10}), std::invalid_argument);
  EXPECT_THROW(obrien_fleming_boundaries({0, 10}), std::invalid_argument);
  EXPECT_THROW(obrien_fleming_boundaries({10}, 1.5), std::invalid_argument);
}

TEST(Sequential, PlannedLooks) {
  EXPECT_EQ(planned_looks(10, 2, 30), (std::vector<int>{10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30}));
  EXPECT_EQ(planned_looks(10, 2, 15), (std::vector<int>{10, 12, 14, 15}));  // the budget is always a look
  EXPECT_EQ(planned_looks(10, 2, 10), (std::vector<int>{10}));
  EXPECT_EQ(planned_looks(10, 2, 4), (std::vector<int>{10}));  // a budget below the first look: one look
  EXPECT_EQ(planned_looks(3, 0, 5), (std::vector<int>{3, 4, 5}));
}

// ---------------------------------------------------------------- optional stopping, by simulation

// Box-Muller normals from mt19937_64 (fixed by the standard), so the sequences are the same everywhere.
class OneNormalPerPair {
 public:
  explicit OneNormalPerPair(std::uint64_t seed) : rng_(seed) {}
  double operator()() {
    const double u1 = (static_cast<double>(rng_() >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = (static_cast<double>(rng_() >> 11) + 0.5) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  std::uint64_t bits() { return rng_(); }

 private:
  std::mt19937_64 rng_;
};

// A block of n samples level * exp(Z), Z AR(1) with rho 0.5 and sd 0.1.
std::vector<double> block(OneNormalPerPair& g, std::size_t n, double level) {
  std::vector<double> x(n);
  double z = 0.1 * g();
  for (std::size_t t = 0; t < n; ++t) {
    if (t > 0) z = 0.5 * z + 0.1 * std::sqrt(0.75) * g();
    x[t] = level * std::exp(z);
  }
  return x;
}

struct Outcome {
  int passed = 0, failed = 0, undecided = 0;
};

// `sequences` sequences of up to 30 rounds (two-speed plateaus shared by a round's E and C blocks, 30-50
// samples per block and side), true P95 slowdown `truth`, judged at the looks 10, 12, ..., 30 with
// boundary z(k) until a verdict is decided: what the run would conclude.
template <typename Boundary>
Outcome stop_by_rule(double truth, int sequences, std::uint64_t seed_base, Boundary z_at) {
  const std::vector<int> looks = planned_looks(10, 2, 30);
  Outcome o;
  for (int s = 0; s < sequences; ++s) {
    OneNormalPerPair g(seed_base + static_cast<std::uint64_t>(s));
    BlockedSamples E(1), C(1);
    Verdict v = Verdict::inconclusive;
    for (std::size_t k = 0; k < looks.size() && v == Verdict::inconclusive; ++k) {
      while (static_cast<int>(E[0].size()) < looks[k]) {
        const double level = g.bits() % 2 ? 1.6 : 1.0;
        E[0].push_back(block(g, 30 + g.bits() % 21, level));
        C[0].push_back(block(g, 30 + g.bits() % 21, (1.0 + truth) * level));
      }
      const Estimate e = interval_at(p95_slowdown(C, E, static_cast<std::uint64_t>(s), 200), z_at(looks, k));
      std::size_t n = 0;
      for (const auto& b : E[0]) n += b.size();
      v = slowdown_verdict(n, n, e, kDefaultCutoff).verdict;
    }
    (v == Verdict::pass ? o.passed : v == Verdict::fail ? o.failed : o.undecided)++;
  }
  return o;
}

constexpr int kSequences = 400;

double obrien_fleming(const std::vector<int>& looks, std::size_t k) {
  static const std::vector<double> z = obrien_fleming_boundaries(planned_looks(10, 2, 30), kSequentialAlpha);
  (void)looks;
  return z[k];
}
double naive(const std::vector<int>&, std::size_t) { return kZ95; }

void print(const char* what, double truth, const Outcome& o) {
  std::printf("[ stopping ] %s, truth %+.0f%%: pass %d, fail %d, undecided %d of %d\n", what, truth * 100.0, o.passed,
              o.failed, o.undecided, kSequences);
}

TEST(SequentialSimulation, AtTheCutoffTheRuleDecidesWronglyAtMostAsOftenAsAFixed95PercentVerdict) {
  // The truth exactly at the cutoff: every decided verdict is wrong. At most 2.5% per side (over 2000
  // sequences from other seeds the rule decides 1.75-2.4% wrongly per side).
  const Outcome o = stop_by_rule(kDefaultCutoff, kSequences, 100000, obrien_fleming);
  print("O'Brien-Fleming", kDefaultCutoff, o);
  EXPECT_LE(o.passed, kSequences * 25 / 1000);
  EXPECT_LE(o.failed, kSequences * 25 / 1000);
}

TEST(SequentialSimulation, NearTheCutoffTheRuleRarelyDecidesTheWrongSide) {
  // 3 points below the cutoff a fail is wrong, 3 points above a pass: at most 2.5% each.
  const Outcome below = stop_by_rule(kDefaultCutoff - 0.03, kSequences, 200000, obrien_fleming);
  const Outcome above = stop_by_rule(kDefaultCutoff + 0.03, kSequences, 300000, obrien_fleming);
  print("O'Brien-Fleming", kDefaultCutoff - 0.03, below);
  print("O'Brien-Fleming", kDefaultCutoff + 0.03, above);
  EXPECT_LE(below.failed, kSequences * 25 / 1000);
  EXPECT_LE(above.passed, kSequences * 25 / 1000);
}

TEST(SequentialSimulation, StoppingAtTheFirstDecided95PercentIntervalFailsTheSameTest) {
  // The naive rule looks eleven times at 95% and stops at the first decided interval: noise crossing the
  // cutoff once is enough, so it decides wrongly far more often than 2.5% per side.
  const Outcome o = stop_by_rule(kDefaultCutoff, kSequences, 100000, naive);
  print("naive 95% at every look", kDefaultCutoff, o);
  EXPECT_GT(o.passed + o.failed, kSequences * 5 / 100);
  EXPECT_TRUE(o.passed > kSequences * 25 / 1000 || o.failed > kSequences * 25 / 1000);
}

TEST(Sequential, FarFromTheCutoffTheRuleDecidesAtTheFirstLooks) {
  // Where the answer is clear the boundaries cost little: a truth of +5% passes, +120% fails.
  const Outcome low = stop_by_rule(0.05, 40, 400000, obrien_fleming);
  const Outcome high = stop_by_rule(1.2, 40, 500000, obrien_fleming);
  EXPECT_EQ(low.passed, 40);
  EXPECT_EQ(high.failed, 40);
}

}  // namespace
}  // namespace ib
