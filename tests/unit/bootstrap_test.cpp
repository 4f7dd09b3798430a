// Paired round bootstrap (harness/stats/bootstrap.h; docs/design.md section 4, "Confidence intervals"). Exact values are worked out in the comments; the statistical tests use seeded synthetic
// data with a known answer and are sized so that a broken implementation fails them (see each test).
#include "harness/stats/bootstrap.h"
#include "harness/core/errors.h"

#include "harness/stats/stats.h"
#include "tests/unit/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace ib {
namespace {

using namespace ib::test;

constexpr double kPi = 3.14159265358979323846;

// Standard normals by Box-Muller from mt19937_64 (whose output the C++ standard fixes), so the
// synthetic data sets are the same on every platform, unlike std::normal_distribution's.
class Normals {
 public:
  explicit Normals(std::uint64_t seed) : rng_(seed) {}
  double operator()() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double r = std::sqrt(-2.0 * std::log(uniform())), t = 2.0 * kPi * uniform();
    spare_ = r * std::sin(t);
    has_spare_ = true;
    return r * std::cos(t);
  }
  std::uint64_t bits() { return rng_(); }

 private:
  double uniform() { return (static_cast<double>(rng_() >> 11) + 0.5) * 0x1.0p-53; }  // in (0, 1)
  std::mt19937_64 rng_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// n samples k * exp(Z), Z a stationary AR(1) with lag-1 correlation rho and marginal N(0, sigma^2),
// started from that marginal (no burn-in needed). Every sample's P95 is k * exp(1.6449 sigma), so the
// P95 ratio of two such phases is exactly the ratio of their k. rho = 0: i.i.d. log-normal samples.
std::vector<double> lognormal_ar1(Normals& g, std::size_t n, double rho, double k, double sigma = 0.1) {
  std::vector<double> x(n);
  const double innovation = sigma * std::sqrt(1.0 - rho * rho);
  double z = sigma * g();
  for (std::size_t t = 0; t < n; ++t) {
    if (t > 0) z = rho * z + innovation * g();
    x[t] = k * std::exp(z);
  }
  return x;
}

struct Layout {
  std::size_t reps, blocks, n_min, n_max;  // block sizes uniform in [n_min, n_max]
};

// One phase of independent blocks; repetition r's samples are multiplied by rep_scale[r] if given.
BlockedSamples make_phase(Normals& g, const Layout& l, double rho, double k,
                          const std::vector<double>& rep_scale = {}) {
  BlockedSamples d(l.reps);
  for (std::size_t r = 0; r < l.reps; ++r) {
    const double scale = rep_scale.empty() ? 1.0 : rep_scale[r];
    for (std::size_t b = 0; b < l.blocks; ++b) {
      const std::size_t n = l.n_min + static_cast<std::size_t>(g.bits() % (l.n_max - l.n_min + 1));
      d[r].push_back(lognormal_ar1(g, n, rho, k * scale));
    }
  }
  return d;
}

double width(const Estimate& e) { return e.ci_high - e.ci_low; }

// One repetition of `rounds` rounds, each with an E block and a C block of n_min..n_max samples whose
// level is the round's plateau: 1 or `plateau`, at random (a machine with two speeds, as this VM's CPU:
// both blocks of a round see the same one). C's level is k_c times E's, so the pooled C is k_c times
// the pooled E in distribution and the true P95 ratio is exactly k_c.
struct RoundData {
  BlockedSamples E, C;
};
RoundData plateau_rounds(Normals& g, std::size_t reps, std::size_t rounds, std::size_t n_min, std::size_t n_max,
                         double rho, double k_c, double plateau) {
  RoundData d{BlockedSamples(reps), BlockedSamples(reps)};
  for (std::size_t r = 0; r < reps; ++r)
    for (std::size_t k = 0; k < rounds; ++k) {
      const double level = g.bits() % 2 ? plateau : 1.0;
      const auto size = [&] { return n_min + static_cast<std::size_t>(g.bits() % (n_max - n_min + 1)); };
      d.E[r].push_back(lognormal_ar1(g, size(), rho, level));
      d.C[r].push_back(lognormal_ar1(g, size(), rho, k_c * level));
    }
  return d;
}

// The 95% interval of P95(C)/P95(E) - 1 (the estimate the verdicts use).
Estimate ci(const BlockedSamples& C, const BlockedSamples& E, std::uint64_t seed, int resamples,
            Pairing pairing = Pairing::paired, std::size_t block_length = 0) {
  return percentile_ratio_estimate(C, E, pairing, 95.0, seed, resamples, block_length);
}

// ---------------------------------------------------------------- lag1_autocorrelation

TEST(Bootstrap, Lag1AutocorrelationHandComputed) {
  // [1..6]: mean 3.5, deviations -2.5 -1.5 -0.5 0.5 1.5 2.5; sum of squares 17.5; lagged products
  // 3.75 + 0.75 - 0.25 + 0.75 + 3.75 = 8.75; 8.75 / 17.5 = 0.5.
  EXPECT_NEAR(lag1_autocorrelation({1, 2, 3, 4, 5, 6}), 0.5, kTol);
  // [1,3,2,4]: mean 2.5, deviations -1.5 0.5 -0.5 1.5; squares 5; products -0.75 - 0.25 - 0.75 = -1.75;
  // -1.75 / 5 = -0.35.
  EXPECT_NEAR(lag1_autocorrelation({1, 3, 2, 4}), -0.35, kTol);
  EXPECT_TRUE(std::isnan(lag1_autocorrelation({})));
  EXPECT_TRUE(std::isnan(lag1_autocorrelation({1, 2})));
  EXPECT_TRUE(std::isnan(lag1_autocorrelation({4, 4, 4, 4})));  // zero variance
}

// ---------------------------------------------------------------- moving_block_length

// A square wave of period 2p (p ones, p zeros), n a multiple of 2p: deviations are +-0.5, so the
// lag-1 autocorrelation is ((n - 1) - 2 * transitions) / n with n/p - 1 transitions.
std::vector<double> square_wave(std::size_t n, std::size_t p) {
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = (i / p) % 2 == 0 ? 1.0 : 0.0;
  return x;
}

TEST(Bootstrap, MovingBlockLengthRuleExactValues) {
  ASSERT_EQ(kBlockLengthTauFactor, 3.0);  // the expected values below are worked out for 3
  // p = 10, n = 1000: rho = (999 - 2 * 99) / 1000 = 0.801; 3 * 1.801 / 0.199 = 27.15 -> 28;
  // ceil(cbrt(1000)) = 10; cap 500 -> 28.
  const auto wave10 = square_wave(1000, 10);
  EXPECT_NEAR(lag1_autocorrelation(wave10), 0.801, kTol);
  EXPECT_EQ(moving_block_length(wave10), 28u);
  // p = 100, n = 2000: rho = (1999 - 2 * 19) / 2000 = 0.9805, clamped to 0.95: 3 * 1.95 / 0.05 = 117;
  // ceil(cbrt(2000)) = 13; cap 1000 -> 117.
  EXPECT_EQ(moving_block_length(square_wave(2000, 100)), 117u);
  // Alternating 0,1 (p = 1), n = 1000: rho = (999 - 2 * 999) / 1000 = -0.999, clamped to 0: 3 * 1 / 1 = 3;
  // ceil(cbrt(1000)) = 10 -> 10 (the size term).
  EXPECT_EQ(moving_block_length(square_wave(1000, 1)), 10u);
  // Constant: rho NaN counts as 0 -> max(ceil(cbrt(1000)), 3) = 10.
  EXPECT_EQ(moving_block_length(std::vector<double>(1000, 2.0)), 10u);
  // [1..6]: rho = 0.5 -> 3 * 1.5 / 0.5 = 9, capped at 6 / 2 = 3.
  EXPECT_EQ(moving_block_length({1, 2, 3, 4, 5, 6}), 3u);
  EXPECT_EQ(moving_block_length({5.0}), 1u);
  EXPECT_EQ(moving_block_length({}), 1u);
}

// Negative autocorrelation counts as none (rho clamped to [0, 0.95], not [-0.95, 0.95]): with few
// samples, where ceil(cbrt(n)) is below the dependence term's 3, that term decides.
TEST(Bootstrap, NegativeAutocorrelationGivesTheIndependentLengthNotAShorterOne) {
  // Alternating 0,1 (p = 1), n = 8: rho = (7 - 2 * 7) / 8 = -0.875, clamped to 0: 3 * 1 / 1 = 3;
  // ceil(cbrt(8)) = 2; cap 4 -> 3. Unclamped below 0: 3 * 0.125 / 1.875 = 0.2 -> 1, and 2 would win.
  EXPECT_NEAR(lag1_autocorrelation(square_wave(8, 1)), -0.875, kTol);
  EXPECT_EQ(moving_block_length(square_wave(8, 1)), 3u);
}

TEST(Bootstrap, MovingBlockLengthIsLongerForAutocorrelatedData) {
  Normals g(11);
  const auto iid = lognormal_ar1(g, 2000, 0.0, 1.0);
  const auto ar = lognormal_ar1(g, 2000, 0.8, 1.0);
  // i.i.d.: rho near 0 -> 3 * (1 + rho) / (1 - rho) near 3, below ceil(cbrt(2000)) = 13.
  EXPECT_EQ(moving_block_length(iid), 13u);
  // AR(1) rho 0.8: 3 * 1.8 / 0.2 = 27 at the true rho; the estimate is within about +-0.03 of it.
  const std::size_t l_ar = moving_block_length(ar);
  EXPECT_GE(l_ar, 22u);
  EXPECT_LE(l_ar, 34u);
}

// ---------------------------------------------------------------- the resampler's structure

std::vector<double> side(const RoundResampler& plan, std::size_t s, const std::vector<std::vector<Piece>>& pieces) {
  std::vector<double> out;
  plan.materialize(s, pieces[s], out);
  return out;
}

TEST(Bootstrap, ResamplerDrawsContiguousRunsWithinOneBlock) {
  // One block 0..99, forced run length 7: the output has the block's 100 samples in runs of 7
  // consecutive values (the last cut to 100 - 14 * 7 = 2), each run inside the block.
  BlockedSamples data(1, std::vector<std::vector<double>>(1, std::vector<double>(100)));
  for (std::size_t i = 0; i < 100; ++i) data[0][0][i] = static_cast<double>(i);
  const RoundResampler plan({&data}, Pairing::paired, 7);
  std::mt19937_64 rng(3);
  std::vector<std::vector<Piece>> pieces;
  for (int rep = 0; rep < 20; ++rep) {
    plan.draw(rng, pieces);
    const auto out = side(plan, 0, pieces);
    ASSERT_EQ(out.size(), 100u);
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (i % 7 == 0) EXPECT_LE(out[i], 93.0);  // a whole run of 7 fits after its start
      else EXPECT_EQ(out[i], out[i - 1] + 1.0) << "position " << i;
    }
  }
}

// A run may start at every one of the n - run + 1 places where it fits, the last one included: with
// runs of one sample, every sample of the block appears in the replicates (the last one too).
TEST(Bootstrap, EveryStartIncludingTheLastIsDrawn) {
  BlockedSamples data(1, std::vector<std::vector<double>>(1, std::vector<double>(10)));
  for (std::size_t i = 0; i < 10; ++i) data[0][0][i] = static_cast<double>(i);
  const RoundResampler plan({&data}, Pairing::paired, 1);
  std::mt19937_64 rng(5);
  std::vector<std::vector<Piece>> pieces;
  std::vector<int> seen(10, 0);
  for (int rep = 0; rep < 100; ++rep) {  // 1000 draws of 10 starts: P(one never drawn) = 10 x 0.9^1000
    plan.draw(rng, pieces);
    for (double v : side(plan, 0, pieces)) ++seen.at(static_cast<std::size_t>(v));
  }
  for (std::size_t i = 0; i < 10; ++i) EXPECT_GT(seen[i], 0) << "sample " << i << " never drawn";
}

// Repetition r, round k: E holds 1000 r + 100 k + [0, 10 + k), C the same + 0.5. A paired replicate
// takes, for every drawn round, E's block and C's block of that same round: the two sides' sequences of
// (repetition, round) are equal, rounds of a slot come from one repetition, and draws repeat.
BlockedSamples labelled(int reps, int rounds, double offset) {
  BlockedSamples data(static_cast<std::size_t>(reps));
  for (int r = 0; r < reps; ++r)
    for (int k = 0; k < rounds; ++k) {
      std::vector<double> x;
      for (int i = 0; i < 10 + k; ++i) x.push_back(1000.0 * r + 100.0 * k + i + offset);
      data[static_cast<std::size_t>(r)].push_back(x);
    }
  return data;
}

// The (repetition, round) of each block in a materialized side, in order.
std::vector<std::pair<int, int>> rounds_drawn(const std::vector<double>& out) {
  std::vector<std::pair<int, int>> seen;
  for (std::size_t pos = 0; pos < out.size();) {
    const int rep = static_cast<int>(out[pos] / 1000.0), k = static_cast<int>((out[pos] - 1000.0 * rep) / 100.0);
    const std::size_t n = static_cast<std::size_t>(10 + k);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(static_cast<int>(out.at(pos + i) / 1000.0), rep);
      EXPECT_EQ(static_cast<int>((out.at(pos + i) - 1000.0 * rep) / 100.0), k);
    }
    seen.push_back({rep, k});
    pos += n;
  }
  return seen;
}

TEST(Bootstrap, PairedResamplerTakesBothBlocksOfEachDrawnRound) {
  const BlockedSamples E = labelled(2, 4, 0.0), C = labelled(2, 4, 0.5);
  const RoundResampler plan({&C, &E}, Pairing::paired);
  std::mt19937_64 rng(5);
  std::vector<std::vector<Piece>> pieces;
  bool repeated = false;
  for (int draw = 0; draw < 50; ++draw) {
    plan.draw(rng, pieces);
    const auto c = rounds_drawn(side(plan, 0, pieces)), e = rounds_drawn(side(plan, 1, pieces));
    ASSERT_EQ(c, e) << "a round's colocated block without its exclusive block";
    ASSERT_EQ(c.size(), 8u);  // 2 repetitions x 4 rounds
    for (std::size_t slot = 0; slot < 2; ++slot)
      for (std::size_t k = 1; k < 4; ++k) EXPECT_EQ(c[slot * 4 + k].first, c[slot * 4].first);
    for (std::size_t i = 0; i < c.size(); ++i)
      repeated |= std::count(c.begin(), c.end(), c[i]) > 1;
  }
  EXPECT_TRUE(repeated);
}

TEST(Bootstrap, IndependentSidesDrawTheirOwnRounds) {
  const BlockedSamples E = labelled(1, 6, 0.0), C = labelled(1, 6, 0.5);
  const RoundResampler plan({&C, &E}, Pairing::independent);
  std::mt19937_64 rng(6);
  std::vector<std::vector<Piece>> pieces;
  int differ = 0;
  for (int draw = 0; draw < 20; ++draw) {
    plan.draw(rng, pieces);
    differ += rounds_drawn(side(plan, 0, pieces)) != rounds_drawn(side(plan, 1, pieces));
  }
  EXPECT_GE(differ, 18);
}

TEST(Bootstrap, PairedSidesOfDifferentShapesAreRefused) {
  const BlockedSamples a = labelled(1, 3, 0.0), b = labelled(1, 4, 0.0), c = labelled(2, 3, 0.0);
  EXPECT_THROW(RoundResampler({&a, &b}, Pairing::paired), std::invalid_argument);
  EXPECT_THROW(RoundResampler({&a, &c}, Pairing::paired), std::invalid_argument);
  EXPECT_NO_THROW(RoundResampler({&a, &b}, Pairing::independent));
}

TEST(Bootstrap, ARoundWithOneSideEmptyIsStillACluster) {
  // Round 1 lost its exclusive block (excluded): drawing it adds colocated values only.
  BlockedSamples E = labelled(1, 3, 0.0), C = labelled(1, 3, 0.5);
  E[0][1].clear();
  const RoundResampler plan({&C, &E}, Pairing::paired);
  std::mt19937_64 rng(7);
  std::vector<std::vector<Piece>> pieces;
  for (int draw = 0; draw < 30; ++draw) {
    plan.draw(rng, pieces);
    const auto c = rounds_drawn(side(plan, 0, pieces)), e = rounds_drawn(side(plan, 1, pieces));
    ASSERT_EQ(c.size(), 3u);
    std::vector<std::pair<int, int>> c_without_round1;
    for (const auto& x : c)
      if (x.second != 1) c_without_round1.push_back(x);
    EXPECT_EQ(e, c_without_round1);
  }
}

TEST(Bootstrap, PieceQuantileEqualsTheQuantileOfTheMaterializedReplicate) {
  // The fast path (counts below a window, copies in it) and the fall-back (materialize) against
  // percentile_select of the replicate's values, for quantiles across the range and plateau data whose
  // replicates' P95 often falls below the window.
  Normals g(17);
  const RoundData d = plateau_rounds(g, 2, 12, 20, 90, 0.6, 1.3, 2.5);
  const RoundResampler plan({&d.C, &d.E}, Pairing::paired);
  std::mt19937_64 rng(9);
  std::vector<std::vector<Piece>> pieces;
  std::vector<double> scratch, values;
  for (double q : {0.0, 5.0, 50.0, 80.0, 95.0, 99.0, 100.0}) {
    const PieceQuantile c_q(plan, 0, q), e_q(plan, 1, q);
    for (int draw = 0; draw < 200; ++draw) {
      plan.draw(rng, pieces);
      plan.materialize(0, pieces[0], values);
      EXPECT_EQ(c_q(pieces[0], scratch), percentile_select(values, q)) << q;
      plan.materialize(1, pieces[1], values);
      EXPECT_EQ(e_q(pieces[1], scratch), percentile_select(values, q)) << q;
    }
  }
}

// ---------------------------------------------------------------- point value, interval, edge cases

TEST(Bootstrap, PointValueIsTheRatioOfPooledPercentiles) {
  // Pooled E = [1..10]: P95 = 9 + 0.55 * 1 = 9.55; pooled C = [2,4,...,18,30]: P95 = 18 + 0.55 * 12 = 24.6;
  // 24.6 / 9.55 - 1 = 1.575916230366492, however the samples are split into repetitions and rounds.
  const BlockedSamples E = {{{3, 1, 2}, {10}}, {{4, 5, 6, 7, 8, 9}, {}}};
  const BlockedSamples C = {{{30, 2, 4, 6, 8}, {}}, {{10, 12}, {14, 16, 18}}};
  const Estimate e = ci(C, E, 7, 200);
  EXPECT_NEAR(e.value, 1.575916230366492, kTol);
  EXPECT_EQ(e.resamples, 200);
  EXPECT_EQ(e.seed, 7u);
  EXPECT_EQ(e.pairing, Pairing::paired);
  EXPECT_NEAR(e.confidence, 0.95, 1e-9);
  EXPECT_LE(e.ci_low, e.value);
  EXPECT_GE(e.ci_high, e.value);
}

TEST(Bootstrap, IntervalIsNormalOnTheLogRatio) {
  // value 0.5, log_se 0.1, few clusters (runs within blocks: the quantile is z): log(1.5) = 0.405465;
  // -/+ 1.96 * 0.1 -> exp(0.209465) - 1 = 0.233023 and exp(0.601465) - 1 = 0.824784; at z = 3:
  // exp(0.105465) - 1 = 0.111227 and exp(0.705465) - 1 = 1.024788.
  Estimate e{0.5, 0, 0, 0.95, 1000, 1};
  e.log_se = 0.1;
  const Estimate a = interval_at(e, kZ95);
  EXPECT_NEAR(a.ci_low, 0.233023, 1e-6);
  EXPECT_NEAR(a.ci_high, 0.824784, 1e-6);
  EXPECT_NEAR(a.confidence, 0.95, 1e-9);
  EXPECT_EQ(a.quantile, kZ95);
  const Estimate b = interval_at(e, 3.0);
  EXPECT_NEAR(b.ci_low, 0.111227, 1e-6);
  EXPECT_NEAR(b.ci_high, 1.024788, 1e-6);
  EXPECT_NEAR(b.confidence, 0.997300, 1e-6);
  EXPECT_EQ(b.z, 3.0);
  // 10 rounds resampled whole: Student's t with 9 degrees of freedom at the same tail, 2.262157:
  // exp(0.405465 -/+ 0.2262157) - 1 = 0.196319 and 0.880769.
  e.clusters = 10;
  e.whole_rounds = true;
  const Estimate t = interval_at(e, kZ95);
  EXPECT_NEAR(t.quantile, 2.262157, 1e-6);
  EXPECT_NEAR(t.ci_low, 0.196319, 1e-6);
  EXPECT_NEAR(t.ci_high, 0.880769, 1e-6);
  e.log_se = std::nan("");
  EXPECT_TRUE(std::isnan(interval_at(e, kZ95).ci_low));
}

TEST(Bootstrap, StudentTQuantilesFromTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706205, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.262157, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 19), 2.093024, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.995, 29), 2.756386, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.959966, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.025, 9), -2.262157, 1e-6);
  EXPECT_NEAR(student_t_cdf(2.262157, 9), 0.975, 1e-7);
  EXPECT_NEAR(student_t_cdf(0.0, 5), 0.5, 1e-12);
  EXPECT_TRUE(std::isnan(student_t_quantile(1.0, 9)));
  EXPECT_TRUE(std::isnan(student_t_quantile(0.5, 0)));
}

TEST(Bootstrap, StandardErrorIsTheStddevOfTheLogReplicatesScaledForTheClusters) {
  // 12 rounds, resampled whole: log_se = stddev(replicates) * sqrt(12 / 11), the interval at t_11.
  Normals g(41);
  const RoundData d = plateau_rounds(g, 1, 12, 100, 200, 0.6, 1.3, 1.5);
  const std::vector<double> reps = log_ratio_replicates(d.C, d.E, Pairing::paired, 95.0, 8, 400);
  ASSERT_EQ(reps.size(), 400u);
  const Estimate e = ci(d.C, d.E, 8, 400);
  EXPECT_EQ(e.clusters, 12);
  EXPECT_NEAR(e.log_se, stddev(reps) * std::sqrt(12.0 / 11.0), 1e-15);
  EXPECT_NEAR(e.quantile, student_t_quantile(0.975, 11), 1e-9);
  EXPECT_NEAR(std::log1p(e.ci_high) - std::log1p(e.value), e.quantile * e.log_se, 1e-12);
  EXPECT_NEAR(std::log1p(e.value) - std::log1p(e.ci_low), e.quantile * e.log_se, 1e-12);
}

TEST(Bootstrap, EnoughRoundsAreResampledWholeFewerInRuns) {
  Normals g(43);
  const RoundData many = plateau_rounds(g, 1, kMinRoundsResampledWhole, 50, 50, 0.5, 1.3, 1.0);
  const RoundData few = plateau_rounds(g, 1, kMinRoundsResampledWhole - 1, 50, 50, 0.5, 1.3, 1.0);
  const RoundResampler whole({&many.C, &many.E}, Pairing::paired), runs({&few.C, &few.E}, Pairing::paired);
  EXPECT_TRUE(whole.whole_rounds());
  EXPECT_FALSE(runs.whole_rounds());
  std::mt19937_64 rng(1);
  std::vector<std::vector<Piece>> pieces;
  whole.draw(rng, pieces);
  for (const Piece& p : pieces[0]) EXPECT_TRUE(p.start == 0 && p.take == 50);
  runs.draw(rng, pieces);
  EXPECT_GT(pieces[0].size(), few.C[0].size());  // several runs per block
  // A block length asked for is used whatever the number of rounds.
  EXPECT_FALSE(RoundResampler({&many.C, &many.E}, Pairing::paired, 5).whole_rounds());
}

TEST(Bootstrap, EmptyRoundsAndRepetitionsAreSkipped) {
  Normals g(21);
  const RoundData d = plateau_rounds(g, 2, 3, 50, 80, 0.5, 1.3, 1.0);
  // Independent sides: empty rounds and repetitions interleaved give the same plan, so the same draws.
  BlockedSamples C2 = {{}, {{}, d.C[0][0], {}, d.C[0][1], d.C[0][2]}, {{}}, d.C[1]};
  BlockedSamples E2 = {d.E[0], {}, {d.E[1][0], {}, d.E[1][1], {}, d.E[1][2]}};
  const Estimate a = ci(d.C, d.E, 9, 300, Pairing::independent);
  const Estimate b = ci(C2, E2, 9, 300, Pairing::independent);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.ci_low, b.ci_low);
  EXPECT_EQ(a.ci_high, b.ci_high);
  // Paired: a round empty on both sides is no cluster.
  BlockedSamples C3 = d.C, E3 = d.E;
  C3[0].insert(C3[0].begin() + 1, std::vector<double>{});
  E3[0].insert(E3[0].begin() + 1, std::vector<double>{});
  EXPECT_EQ(ci(d.C, d.E, 9, 300).ci_low, ci(C3, E3, 9, 300).ci_low);
}

TEST(Bootstrap, NoSamplesOrNoResamples) {
  const BlockedSamples some = {{{1.0, 2.0, 3.0}}};
  for (const BlockedSamples& none : {BlockedSamples{}, BlockedSamples{{}}, BlockedSamples{{{}, {}}}}) {
    const Estimate a = ci(none, some, 1, 1000, Pairing::independent);
    const Estimate b = ci(some, none, 1, 1000, Pairing::independent);
    for (const Estimate& e : {a, b}) {
      EXPECT_TRUE(std::isnan(e.value));
      EXPECT_TRUE(std::isnan(e.ci_low));
      EXPECT_TRUE(std::isnan(e.ci_high));
    }
    EXPECT_TRUE(log_ratio_replicates(none, some, Pairing::independent, 95.0, 1).empty());
  }
  // fewer than 2 resamples: the value only. [2,4,6] / [1,2,3] at P50 -> 4 / 2 - 1 = 1.
  const BlockedSamples twice = {{{2.0, 4.0, 6.0}}};
  for (int resamples : {0, 1, -5}) {
    const Estimate e = percentile_ratio_estimate(twice, some, Pairing::paired, 50.0, 1, resamples);
    EXPECT_NEAR(e.value, 1.0, kTol);
    EXPECT_TRUE(std::isnan(e.ci_low));
    EXPECT_TRUE(std::isnan(e.ci_high));
    EXPECT_TRUE(std::isnan(e.log_se));
  }
}

TEST(Bootstrap, ConstantSidesGiveAPointInterval) {
  // Every resample of a constant phase is that constant: every replicate is log(3 / 2), log_se 0.
  const BlockedSamples C = {{std::vector<double>(40, 3.0), std::vector<double>(30, 3.0)}, {std::vector<double>(50, 3.0)}};
  const BlockedSamples E = {{std::vector<double>(60, 2.0)}};
  const Estimate e = ci(C, E, 4, 100, Pairing::independent);
  EXPECT_NEAR(e.value, 0.5, kTol);
  EXPECT_NEAR(e.log_se, 0.0, kTol);
  EXPECT_NEAR(e.ci_low, 0.5, kTol);
  EXPECT_NEAR(e.ci_high, 0.5, kTol);
}

TEST(Bootstrap, SameSeedSameCiOtherSeedDifferent) {
  Normals g(31);
  const RoundData d = plateau_rounds(g, 2, 10, 300, 400, 0.7, 1.3, 1.2);
  const Estimate a = ci(d.C, d.E, 42, 500), b = ci(d.C, d.E, 42, 500), c = ci(d.C, d.E, 43, 500);
  EXPECT_EQ(a.ci_low, b.ci_low);
  EXPECT_EQ(a.ci_high, b.ci_high);
  EXPECT_EQ(log_ratio_replicates(d.C, d.E, Pairing::paired, 95.0, 42, 500),
            log_ratio_replicates(d.C, d.E, Pairing::paired, 95.0, 42, 500));
  EXPECT_TRUE(a.ci_low != c.ci_low || a.ci_high != c.ci_high);
  EXPECT_EQ(a.value, c.value);  // the point value does not depend on the seed
}

// ---------------------------------------------------------------- coverage with a known answer

// Over 200 seeded data sets of one repetition x 20 rounds x 100-200 samples per block and side, AR(1)
// rho 0.5 within blocks, every round on one of two speed plateaus (x1 or x1.6, shared by its E and C
// blocks), C 1.3 times E: the fraction of 95% intervals that contain the true P95 slowdown 0.3.
// 300 resamples per interval keeps the test to a few seconds.
struct IntervalCoverage {
  double covered, mean_width;
};
IntervalCoverage interval_coverage(Pairing pairing, double plateau, std::uint64_t seed_base) {
  constexpr int kSets = 200;
  int covered = 0;
  double widths = 0.0;
  for (int s = 0; s < kSets; ++s) {
    Normals g(seed_base + static_cast<std::uint64_t>(s));
    const RoundData d = plateau_rounds(g, 1, 20, 100, 200, 0.5, 1.3, plateau);
    const Estimate e = ci(d.C, d.E, static_cast<std::uint64_t>(s), 300, pairing);
    covered += e.ci_low <= 0.3 && 0.3 <= e.ci_high;
    widths += width(e);
  }
  return {static_cast<double>(covered) / kSets, widths / kSets};
}

TEST(BootstrapSimulation, PairedRoundsCoverTheTruthOnATwoSpeedMachine) {
  const IntervalCoverage paired = interval_coverage(Pairing::paired, 1.6, 1000);
  std::printf("[ bootstrap ] paired rounds, two plateaus: coverage %.3f, mean width %.3f\n", paired.covered,
              paired.mean_width);
  EXPECT_GE(paired.covered, 0.90);
  EXPECT_LE(paired.covered, 0.99);
}

TEST(BootstrapSimulation, IndependentSidesOnATwoSpeedMachineAreFarWiderAndOverCover) {
  // The same data resampled with E and C apart (the old method, or rounds taken without their
  // blocks): the plateau a round's E and C share counts as noise twice. The interval is much wider
  // and covers nearly always: the coverage test above rejects it.
  const IntervalCoverage paired = interval_coverage(Pairing::paired, 1.6, 1000), apart = interval_coverage(Pairing::independent, 1.6, 1000);
  std::printf("[ bootstrap ] independent sides, two plateaus: coverage %.3f, mean width %.3f (paired %.3f)\n",
              apart.covered, apart.mean_width, paired.mean_width);
  EXPECT_GT(apart.covered, 0.99);
  EXPECT_GT(apart.mean_width, 2.0 * paired.mean_width);
}

TEST(BootstrapSimulation, PairedRoundsCoverOnASteadyMachineToo) {
  const IntervalCoverage steady = interval_coverage(Pairing::paired, 1.0, 3000);
  std::printf("[ bootstrap ] paired rounds, one speed: coverage %.3f\n", steady.covered);
  EXPECT_GE(steady.covered, 0.90);
  EXPECT_LE(steady.covered, 0.99);
}

// ---------------------------------------------------------------- what broken variants would do

TEST(Bootstrap, WithFewRoundsMovingBlocksWidenTheCiOnAutocorrelatedData) {
  // Three rounds (too few to resample alone), AR(1) rho 0.7 within blocks: runs of
  // moving_block_length() keep the dependence that i.i.d. resampling (run length 1) throws away.
  double blocks = 0.0, iid = 0.0;
  for (std::uint64_t s = 0; s < 10; ++s) {
    Normals g(8000 + s);
    const RoundData d = plateau_rounds(g, 1, 3, 1000, 1000, 0.7, 1.3, 1.0);
    blocks += width(ci(d.C, d.E, s, 300));
    iid += width(ci(d.C, d.E, s, 300, Pairing::paired, 1));
  }
  std::printf("[ bootstrap ] 3 rounds: width moving blocks / i.i.d. on AR(1) 0.7 = %.3f\n", blocks / iid);
  EXPECT_GT(blocks / iid, 1.3);
}

TEST(Bootstrap, RepetitionEffectWidensTheCi) {
  // 3 repetitions whose interference differs (C x1.30, x1.38, x1.46 over E): resampling repetitions
  // carries that spread into the interval; the same rounds pooled into one repetition average it away.
  double hier = 0.0, pooled = 0.0;
  for (std::uint64_t s = 0; s < 10; ++s) {
    Normals g(9000 + s);
    RoundData d{BlockedSamples(3), BlockedSamples(3)};
    for (std::size_t r = 0; r < 3; ++r) {
      const RoundData one = plateau_rounds(g, 1, 6, 300, 300, 0.5, 1.30 + 0.08 * static_cast<double>(r), 1.0);
      d.E[r] = one.E[0];
      d.C[r] = one.C[0];
    }
    RoundData p{BlockedSamples(1), BlockedSamples(1)};
    for (std::size_t r = 0; r < 3; ++r) {
      p.E[0].insert(p.E[0].end(), d.E[r].begin(), d.E[r].end());
      p.C[0].insert(p.C[0].end(), d.C[r].begin(), d.C[r].end());
    }
    hier += width(ci(d.C, d.E, s, 300));
    pooled += width(ci(p.C, p.E, s, 300));
  }
  std::printf("[ bootstrap ] width 3 repetitions / pooled into one = %.3f\n", hier / pooled);
  EXPECT_GT(hier / pooled, 1.3);
}

// ---------------------------------------------------------------- stopping

TEST(Bootstrap, AStopRequestEndsTheResamplingAtTheNextCheck) {
  Normals g(51);
  const RoundData d = plateau_rounds(g, 1, 4, 100, 100, 0.5, 1.2, 1.0);
  int asked = 0;
  // Asked before replicates 0, 64, 128, ...: saying yes at the third question stops before replicate 128.
  const StopCheck stop_at_third = [&asked] { return ++asked == 3; };
  EXPECT_THROW(log_ratio_replicates(d.C, d.E, Pairing::paired, 95.0, 7, 1000, 0, stop_at_third), Interrupted);
  EXPECT_EQ(asked, 3);
  // A check that never says stop changes nothing: the same replicates as without one.
  const StopCheck never = [] { return false; };
  EXPECT_EQ(log_ratio_replicates(d.C, d.E, Pairing::paired, 95.0, 7, 300, 0, never),
            log_ratio_replicates(d.C, d.E, Pairing::paired, 95.0, 7, 300));
  EXPECT_THROW(percentile_ratio_estimate(d.C, d.E, Pairing::paired, 95.0, 7, 1000, 0, [] { return true; }), Interrupted);
}

}  // namespace
}  // namespace ib
