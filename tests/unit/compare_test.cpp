// compare (harness/analysis/compare.h): classes on hand-made CIs, figures on hand-computed samples,
// and whole comparisons whose CIs are bounded by the samples' ranges.
#include "harness/analysis/compare.h"
#include "harness/core/numbers.h"
#include "harness/core/exit_codes.h"
#include "harness/stats/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ib {
namespace {


Estimate ci(double low, double high) { return Estimate{(low + high) / 2, low, high, 0.95, 100, 1}; }

TEST(CompareClassify, SlowdownsAgainstTheThreshold) {
  const double x = 0.05;
  EXPECT_EQ(classify_change(ci(0.06, 0.10), x, true), ChangeClass::worse);
  EXPECT_EQ(classify_change(ci(0.01, 0.06), x, true), ChangeClass::inconclusive);  // reaches beyond, not wholly
  EXPECT_EQ(classify_change(ci(-0.03, 0.04), x, true), ChangeClass::same);
  EXPECT_EQ(classify_change(ci(-0.10, 0.02), x, true), ChangeClass::same);  // maybe better: not a regression
  EXPECT_EQ(classify_change(ci(-0.10, -0.06), x, true), ChangeClass::better);
  EXPECT_EQ(classify_change(ci(0.05, 0.05), x, true), ChangeClass::same);  // at the threshold is not beyond it
  EXPECT_EQ(classify_change(Estimate{0.2, kNaN, kNaN, 0.95, 0, 1}, x, true), ChangeClass::inconclusive);
}

TEST(CompareClassify, ThroughputWhereLowerIsWorse) {
  const double x = 0.05;
  EXPECT_EQ(classify_change(ci(-0.10, -0.06), x, false), ChangeClass::worse);
  EXPECT_EQ(classify_change(ci(-0.06, 0.02), x, false), ChangeClass::inconclusive);
  EXPECT_EQ(classify_change(ci(-0.04, 0.30), x, false), ChangeClass::same);
  EXPECT_EQ(classify_change(ci(0.06, 0.08), x, false), ChangeClass::better);
}

TEST(CompareClassify, TheWorstClassStandsForAll) {
  using C = ChangeClass;
  EXPECT_EQ(worst_class({C::same, C::better, C::inconclusive}), C::inconclusive);
  EXPECT_EQ(worst_class({C::inconclusive, C::worse, C::better}), C::worse);
  EXPECT_EQ(worst_class({C::same, C::better}), C::better);
  EXPECT_EQ(worst_class({C::same, C::same}), C::same);
  EXPECT_EQ(worst_class({}), C::same);
}

// One repetition of one block per phase.
TenantSamples samples(std::vector<double> e, std::vector<double> c, double work) {
  TenantSamples s;
  s.E = {{e}};
  s.C = {{c}};
  s.D = {{c}};
  s.work_per_sample = work;
  return s;
}

// Issue 37 item 13 (a surviving mutant: dropping "exclusive.source == baseline"): a run whose exclusive phase
// came from a baseline file is compared as independent samples, never paired by round, even with blocks.
TEST(CompareSamples, ABaselineSourcedPhaseIsIndependentNotPaired) {
  RunResult run;
  run.rounds = 1;
  BlockRecord b;
  b.index = 0;
  b.phase = Phase::colocated;
  run.blocks.push_back(b);
  TenantResult t;
  for (PhaseResult* p : {&t.exclusive, &t.colocated}) {
    p->start_ns = {1, 2};
    p->duration_s = {1.0, 1.0};
    p->block = {0, 0};
    p->counted = {1, 1};
  }
  t.exclusive.source = PhaseSource::measured;
  EXPECT_EQ(tenant_samples({{&run, &t}}).pairing, Pairing::paired);
  t.exclusive.source = PhaseSource::baseline;
  EXPECT_EQ(tenant_samples({{&run, &t}}).pairing, Pairing::independent);
}

TEST(CompareSamples, PointChangesAreHandComputed) {
  // BASE: E = 1..5, C = 2E. P95 (h = 3.8): E 4.8, C 9.6 -> +1.0; medians 3 and 6 -> +1.0; throughput 10 / 6.
  // NEW: C = 3E: P95 14.4 -> +2.0; median 9 -> +2.0; throughput 10 / 9.
  const TenantSamples base = samples({1, 2, 3, 4, 5}, {2, 4, 6, 8, 10}, 10.0);
  const TenantSamples next = samples({1, 2, 3, 4, 5}, {3, 6, 9, 12, 15}, 10.0);
  const auto m = compare_samples(base, next, CompareOptions{0.05, 1, 200});
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].metric, ComparedMetric::p95_slowdown);
  EXPECT_NEAR(m[0].base, 1.0, 1e-12);
  EXPECT_NEAR(m[0].next, 2.0, 1e-12);
  EXPECT_NEAR(m[0].change.value, 1.0, 1e-12);
  // 5 values per phase: below the 72 a P95 needs, whatever the CI says.
  EXPECT_EQ(m[0].verdict, ChangeClass::inconclusive);
  EXPECT_NE(m[0].reason.find("fewer than 72"), std::string::npos) << m[0].reason;
  EXPECT_EQ(m[1].metric, ComparedMetric::median_slowdown);
  EXPECT_NEAR(m[1].change.value, 1.0, 1e-12);
  EXPECT_EQ(m[2].metric, ComparedMetric::throughput);
  EXPECT_NEAR(m[2].base, 10.0 / 6.0, 1e-12);
  EXPECT_NEAR(m[2].next, 10.0 / 9.0, 1e-12);
  EXPECT_NEAR(m[2].change.value, -1.0 / 3.0, 1e-12);
}

// 100 values in two blocks: E in [1.000, 1.009], C in [2.000, 2.009] (scaled by `c_scale`). Every
// resample's P95 and median slowdown then lie in [2 c_scale / 1.009 - 1, 2.009 c_scale - 1], and its
// mean C in [2 c_scale, 2.009 c_scale]: bounds on the CIs that hold for any seed.
TenantSamples tight(double c_scale) {
  TenantSamples s;
  std::vector<double> e1, e2, c1, c2;
  for (int i = 0; i < 50; ++i) {
    e1.push_back(1.0 + 0.001 * (i % 10));
    e2.push_back(1.0 + 0.001 * ((i * 7) % 10));
    c1.push_back(c_scale * (2.0 + 0.001 * ((i * 3) % 10)));
    c2.push_back(c_scale * (2.0 + 0.001 * (i % 10)));
  }
  s.E = {{e1, e2}};
  s.C = {{c1, c2}};
  s.D = s.C;
  s.work_per_sample = 1.0;
  return s;
}

// n values per phase in two blocks, E ~ 1, C ~ 2.
TenantSamples of_size(std::size_t n) {
  TenantSamples s;
  std::vector<double> e1, e2, c1, c2;
  for (std::size_t i = 0; i < n; ++i) {
    (i % 2 ? e2 : e1).push_back(1.0 + 0.001 * static_cast<double>(i % 10));
    (i % 2 ? c2 : c1).push_back(2.0 + 0.001 * static_cast<double>((i * 3) % 10));
  }
  s.E = {{e1, e2}};
  s.C = {{c1, c2}};
  s.D = s.C;
  s.work_per_sample = 1.0;
  return s;
}

// With few rounds resampled whole, Student's t widens the interval: 10 rounds give
// sqrt(10/9) x t(0.975; 9) = 1.0541 x 2.2622 = 2.3846, 3 rounds sqrt(3/2) x 4.3027 = 5.2697; rounds
// in runs (not whole) or a single cluster get the normal 1.96.
TEST(CompareSamples, FewWholeRoundsWidenTheIntervalByStudentsT) {
  EXPECT_NEAR(interval_factor(10, true), std::sqrt(10.0 / 9.0) * 2.262157, 1e-4);
  EXPECT_NEAR(interval_factor(3, true), std::sqrt(1.5) * 4.302653, 1e-3);
  EXPECT_NEAR(interval_factor(10, false), 1.959964, 1e-5);
  EXPECT_NEAR(interval_factor(1, true), 1.959964, 1e-5);
}

// A P95 needs kMinSamplesP95 (72) counted values in every phase of both runs: 72 is enough, 71 is not.
TEST(CompareSamples, TheP95NeedsSeventyTwoValuesExactly) {
  ASSERT_EQ(kMinSamplesP95, 72u);
  const auto enough = compare_samples(of_size(72), of_size(72), CompareOptions{});
  EXPECT_EQ(enough[0].reason.find("fewer than 72"), std::string::npos) << enough[0].reason;
  EXPECT_EQ(enough[0].verdict, ChangeClass::same) << enough[0].reason;
  const auto short_one = compare_samples(of_size(72), of_size(71), CompareOptions{});
  EXPECT_NE(short_one[0].reason.find("fewer than 72 counted values"), std::string::npos) << short_one[0].reason;
  EXPECT_EQ(short_one[0].verdict, ChangeClass::inconclusive);
}

TEST(CompareSamples, ASetAgainstItselfIsTheSame) {
  const auto m = compare_samples(tight(1.0), tight(1.0), CompareOptions{});
  for (const auto& c : m) {
    EXPECT_EQ(c.change.value, 0.0) << to_string(c.metric);
    // Slowdowns within [2/1.009 - 1, 1.009]: their difference within +-0.027; throughput within +-0.45%.
    EXPECT_GE(c.change.ci_low, -0.0275) << to_string(c.metric);
    EXPECT_LE(c.change.ci_high, 0.0275) << to_string(c.metric);
    EXPECT_EQ(c.verdict, ChangeClass::same) << c.reason;
  }
}

TEST(CompareSamples, ColocatedTimesOneAndAHalfAreWorse) {
  const auto m = compare_samples(tight(1.0), tight(1.5), CompareOptions{});
  // Slowdowns: NEW >= 3/1.009 - 1 = 1.973, BASE <= 1.009, so every change >= 0.964.
  EXPECT_GE(m[0].change.ci_low, 0.96);
  EXPECT_EQ(m[0].verdict, ChangeClass::worse);
  EXPECT_EQ(m[1].verdict, ChangeClass::worse);
  // Throughput: NEW / BASE - 1 <= 2.009 / 3 - 1 = -0.330.
  EXPECT_LE(m[2].change.ci_high, -0.33);
  EXPECT_EQ(m[2].verdict, ChangeClass::worse);
  EXPECT_NE(m[0].reason.find("worse than 5.0 points"), std::string::npos) << m[0].reason;
}

// Ten rounds whose speed alternates x1 / x2 (the E and C blocks of a round share it), C = factor(k) E.
TenantSamples plateau_rounds(const std::vector<double>& factors) {
  TenantSamples s;
  s.E.resize(1);
  s.C.resize(1);
  for (std::size_t k = 0; k < factors.size(); ++k) {
    std::vector<double> e, c;
    for (int i = 1; i <= 20; ++i) {
      e.push_back((k % 2 ? 2.0 : 1.0) * i);
      c.push_back(factors[k] * e.back());
    }
    s.E[0].push_back(e);
    s.C[0].push_back(c);
  }
  s.D = s.C;
  s.work_per_sample = 1.0;
  return s;
}

TEST(CompareSamples, RoundsArePairedAndAnInconclusiveChangeNamesTheWiderSide) {
  // BASE: every round's C is 1.2 times its E, so any replicate of paired rounds has a P95 slowdown of
  // exactly +20% however many slow rounds it drew: BASE resolves exactly. Drawn apart, the plateaus
  // make it vary.
  const TenantSamples base = plateau_rounds(std::vector<double>(10, 1.2));
  const auto self = compare_samples(base, base, CompareOptions{0.05, 1, 300});
  EXPECT_NEAR(self[0].base_resolution, 0.0, 1e-12);
  EXPECT_NEAR(self[0].resolution, 0.0, 1e-12);
  EXPECT_EQ(self[0].verdict, ChangeClass::same) << self[0].reason;
  TenantSamples apart = base;
  apart.pairing = Pairing::independent;
  EXPECT_GT(compare_samples(apart, apart, CompareOptions{0.05, 1, 300})[0].base_resolution, 0.05);
  // NEW: its slow rounds at x1.05 or x1.35: its P95 slowdown (set by the slow rounds' tails) varies
  // from replicate to replicate between about +5% and +35%; the change is inconclusive, and the reason
  // says NEW's interval is the one to narrow.
  const TenantSamples next = plateau_rounds({1.2, 1.05, 1.2, 1.35, 1.2, 1.05, 1.2, 1.35, 1.2, 1.05});
  const auto m = compare_samples(base, next, CompareOptions{0.05, 1, 300});
  EXPECT_EQ(m[0].verdict, ChangeClass::inconclusive) << m[0].reason;
  EXPECT_GT(m[0].next_resolution, m[0].base_resolution);
  EXPECT_NEAR(m[0].resolution, (m[0].change.ci_high - m[0].change.ci_low) / 2, 1e-12);
  EXPECT_NE(m[0].reason.find("NEW's interval is the wider"), std::string::npos) << m[0].reason;
}

// Issue 37 item 13 (a surviving mutant: change_factor max -> min). BASE: 8 paired rounds resampled whole
// (Student's t: 2.53), each at exactly x1.2, so its P95 slowdown is the same in every replicate; NEW: 2
// rounds, resampled in runs (1.96). The change's replicates are NEW's less a constant, so the ratio of the
// change's half-width to NEW's own is the ratio of their factors: the wider factor (BASE's) must win.
TEST(CompareSamples, TheChangesIntervalTakesTheWiderFactorOfItsSides) {
  const TenantSamples base = plateau_rounds(std::vector<double>(8, 1.2));
  const TenantSamples next = plateau_rounds({1.05, 1.35});
  const auto m = compare_samples(base, next, CompareOptions{0.05, 1, 300});
  ASSERT_GT(m[0].next_resolution, 0.01);
  EXPECT_NEAR(m[0].base_resolution, 0.0, 1e-12);
  EXPECT_NEAR(m[0].resolution / m[0].next_resolution, interval_factor(8, true) / interval_factor(2, false), 1e-6);
  EXPECT_GT(interval_factor(8, true) / interval_factor(2, false), 1.25);
}

// Issue 37 item 11: each side's own throughput width is a fraction of its figure, like the change's, not
// work per second ("BASE alone +/-45751569854.4" for a copy tenant).
TEST(CompareSamples, EachSidesThroughputWidthIsAFractionOfItsFigure) {
  TenantSamples base = tight(1.0), next = tight(1.0);
  base.work_per_sample = next.work_per_sample = 1e12;  // bytes per sample: about 5e11 per second
  const auto m = compare_samples(base, next, CompareOptions{});
  ASSERT_EQ(m[2].metric, ComparedMetric::throughput);
  ASSERT_GT(m[2].base, 1e11);
  // C within [2, 2.009]: any replicate's throughput within 0.45% of the point figure.
  EXPECT_GT(m[2].base_resolution, 0.0);
  EXPECT_LT(m[2].base_resolution, 0.0045);
  EXPECT_LT(m[2].next_resolution, 0.0045);
  EXPECT_NE(m[2].reason.find("%"), std::string::npos) << m[2].reason;
}

TEST(CompareSamples, SeededAndDeterministic) {
  const TenantSamples base = samples({1, 2, 3, 4, 5, 6, 7, 8}, {2, 3, 5, 7, 11, 13, 17, 19}, 1.0);
  const TenantSamples next = samples({1, 2, 3, 4, 5, 6, 7, 9}, {2, 3, 5, 7, 11, 13, 17, 23}, 1.0);
  const auto a = compare_samples(base, next, CompareOptions{0.05, 42, 300});
  const auto b = compare_samples(base, next, CompareOptions{0.05, 42, 300});
  const auto c = compare_samples(base, next, CompareOptions{0.05, 43, 300});
  bool differs = false;
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(a[i].change.ci_low, b[i].change.ci_low);
    EXPECT_EQ(a[i].change.ci_high, b[i].change.ci_high);
    EXPECT_EQ(a[i].change.seed, 42u);
    differs |= a[i].change.ci_low != c[i].change.ci_low || a[i].change.ci_high != c[i].change.ci_high;
  }
  EXPECT_TRUE(differs);
}

TEST(CompareSamples, NoResamplesNoCiInconclusive) {
  const auto m = compare_samples(tight(1.0), tight(1.0), CompareOptions{0.05, 1, 0});
  for (const auto& c : m) {
    EXPECT_TRUE(std::isnan(c.change.ci_low));
    EXPECT_EQ(c.verdict, ChangeClass::inconclusive);
  }
}

// ---- whole results

PhaseResult phase_of_values(const std::vector<std::vector<double>>& blocks) {
  PhaseResult p;
  p.outcome.status = WorkerStatus::ok;
  std::int64_t t = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b)
    for (double d : blocks[b]) {
      p.start_ns.push_back(t += 1000);
      p.duration_s.push_back(d);
      p.block.push_back(static_cast<int>(b));
      p.in_window.push_back(1);
      p.counted.push_back(1);
      p.outlier.push_back(0);
    }
  return p;
}

TenantResult tenant(const std::string& name, nlohmann::json params, const TenantSamples& s) {
  TenantResult t;
  t.name = name;
  t.workload = "host-compute";
  t.params = std::move(params);
  t.work = {s.work_per_sample, "FLOP"};
  t.exclusive = phase_of_values(s.E[0]);
  t.colocated = phase_of_values(s.C[0]);
  return t;
}

Results results_with(std::vector<TenantResult> tenants) {
  Results r;
  RunResult run;
  run.scenario = "pair";
  run.mode = "timeslice";
  run.tenants = std::move(tenants);
  r.runs = {run};
  return r;
}

TEST(CompareResults, TenantsMatchByScenarioModeNameWorkloadAndParams) {
  const Results base = results_with({tenant("victim", {{"n", 64}}, tight(1.0)), tenant("other", {{"n", 64}}, tight(1.0))});
  const Results next = results_with({tenant("victim", {{"n", 64}}, tight(1.0)), tenant("other", {{"n", 128}}, tight(1.0))});
  const Comparison c = compare_results(base, next, CompareOptions{});
  ASSERT_EQ(c.tenants.size(), 1u);
  EXPECT_EQ(c.tenants[0].id.tenant, "victim");
  EXPECT_EQ(c.tenants[0].verdict, ChangeClass::same);
  EXPECT_EQ(c.tenants[0].base_exclusive_n, 100u);
  ASSERT_EQ(c.only_in_base.size(), 1u);
  EXPECT_EQ(c.only_in_base[0].params, "{\"n\":64}");
  ASSERT_EQ(c.only_in_next.size(), 1u);
  EXPECT_EQ(c.only_in_next[0].params, "{\"n\":128}");
  EXPECT_EQ(c.same, 1);
  EXPECT_EQ(c.exit_code, kExitPass);
}

TEST(CompareResults, AWorseTenantExitsOneAndAnInconclusiveFive) {
  const Results base = results_with({tenant("victim", {}, tight(1.0)), tenant("aggressor", {}, tight(1.0))});
  const Results worse = results_with({tenant("victim", {}, tight(1.5)), tenant("aggressor", {}, tight(1.0))});
  const Comparison w = compare_results(base, worse, CompareOptions{});
  EXPECT_EQ(w.worse, 1);
  EXPECT_EQ(w.same, 1);
  EXPECT_EQ(w.tenants[0].verdict, ChangeClass::worse);
  EXPECT_EQ(w.exit_code, kExitVerdictFailed);
  // Too few values for a P95 in NEW's victim: inconclusive, nothing worse -> 5.
  const Results short_run = results_with({tenant("victim", {}, samples({1, 1, 1}, {2, 2, 2}, 1.0)),
                                          tenant("aggressor", {}, tight(1.0))});
  const Comparison s = compare_results(base, short_run, CompareOptions{});
  EXPECT_EQ(s.tenants[0].verdict, ChangeClass::inconclusive);
  EXPECT_EQ(s.worse, 0);
  EXPECT_EQ(s.exit_code, kExitInconclusive);
}

TEST(CompareResults, WaivedRunsAreLeftOutAndNothingMatchedIsInconclusive) {
  Results base = results_with({tenant("victim", {}, tight(1.0))});
  Results next = base;
  next.runs[0].status = RunStatus::waived;
  const Comparison c = compare_results(base, next, CompareOptions{});
  EXPECT_TRUE(c.tenants.empty());
  EXPECT_EQ(c.only_in_base.size(), 1u);
  EXPECT_TRUE(c.only_in_next.empty());
  EXPECT_EQ(c.exit_code, kExitInconclusive);
}

}  // namespace
}  // namespace ib
