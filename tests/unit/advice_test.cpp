// The advice for a user's workload (harness/analysis/advice.h) on hand-made inputs: each rule's
// threshold on both sides, unknown inputs said as unknown, the choice, the cost per step.
#include "harness/analysis/advice.h"

#include <gtest/gtest.h>

namespace ib {
namespace {

const AdviceRule& rule(const Advice& a, const std::string& id) {
  for (const auto& r : a.rules)
    if (r.id == id) return r;
  throw std::logic_error("no rule " + id);
}

TEST(Advice, NothingKnownIsUnknownAndSaysWhy) {
  const Advice a = advise({});
  EXPECT_EQ(a.choice, CardChoice::unknown);
  EXPECT_EQ(a.rules.size(), 7u);
  for (const auto& r : a.rules) {
    EXPECT_EQ(r.holds, RuleHolds::unknown) << r.id;
    EXPECT_FALSE(r.source.empty()) << r.id;
    EXPECT_FALSE(r.evidence.empty()) << r.id;
  }
  EXPECT_EQ(rule(a, "peak_memory_above_70pct").evidence, "peak GPU memory unknown (no NVML per-process reading)");
  EXPECT_FALSE(a.cost_per_step_shared.has_value());
}

TEST(Advice, MemoryAboveSeventyPercentMeansTheWholeCard) {
  AdviceInputs in;
  in.peak_memory_fraction = 0.71;
  in.p95_verdict = Verdict::pass;
  Advice a = advise(in);
  EXPECT_EQ(rule(a, "peak_memory_above_70pct").holds, RuleHolds::yes);
  EXPECT_EQ(rule(a, "peak_memory_above_70pct").evidence, "peak GPU memory 71% of the card in the exclusive phase");
  EXPECT_EQ(a.choice, CardChoice::exclusive);
  EXPECT_EQ(a.reason, "exclusive: peak_memory_above_70pct");
  in.peak_memory_fraction = 0.70;  // the rule is "above"
  a = advise(in);
  EXPECT_EQ(rule(a, "peak_memory_above_70pct").holds, RuleHolds::no);
  EXPECT_EQ(rule(a, "peak_memory_below_50pct_and_p95_pass").holds, RuleHolds::no);  // 70% is not below 50%
}

TEST(Advice, SharedOnlyWithLowMemoryAPassAndNothingForTheWholeCard) {
  AdviceInputs in;
  in.peak_memory_fraction = 0.30;
  in.p95_verdict = Verdict::pass;
  in.run_length_h = 0.5;
  in.interruptible = true;
  in.step_exclusive_s = 0.010;
  in.step_shared_s = 0.012;
  Advice a = advise(in);
  EXPECT_EQ(rule(a, "peak_memory_below_50pct_and_p95_pass").holds, RuleHolds::yes);
  EXPECT_EQ(rule(a, "long_or_uninterruptible").holds, RuleHolds::no);
  EXPECT_EQ(rule(a, "shared_at_least_2x_slower").holds, RuleHolds::no);
  EXPECT_EQ(a.choice, CardChoice::shared);
  // The run length not declared: shared looks possible, but it cannot be judged.
  in.run_length_h.reset();
  a = advise(in);
  EXPECT_EQ(a.choice, CardChoice::unknown);
  EXPECT_NE(a.reason.find("long_or_uninterruptible cannot be judged"), std::string::npos) << a.reason;
  // An inconclusive verdict with low memory: the shared rule is unknown, not a yes.
  in.run_length_h = 0.5;
  in.p95_verdict = Verdict::inconclusive;
  a = advise(in);
  EXPECT_EQ(rule(a, "peak_memory_below_50pct_and_p95_pass").holds, RuleHolds::unknown);
  EXPECT_EQ(a.choice, CardChoice::unknown);
}

// Issue 37 item 13 (a surviving mutant, "< 0.50" -> "<= 0.50"): "below 50%" is strict; exactly half the
// card is not low memory, a hair under it is.
TEST(Advice, PeakMemoryOfExactlyHalfTheCardIsNotBelowHalf) {
  AdviceInputs in;
  in.p95_verdict = Verdict::pass;
  in.peak_memory_fraction = 0.50;
  EXPECT_EQ(rule(advise(in), "peak_memory_below_50pct_and_p95_pass").holds, RuleHolds::no);
  in.peak_memory_fraction = 0.4999;
  EXPECT_EQ(rule(advise(in), "peak_memory_below_50pct_and_p95_pass").holds, RuleHolds::yes);
}

TEST(Advice, LongRunsUninterruptibleJobsAFailAndTwiceAsSlowMeanExclusive) {
  AdviceInputs in;
  in.run_length_h = 8.5;
  EXPECT_EQ(rule(advise(in), "long_or_uninterruptible").holds, RuleHolds::yes);
  in.run_length_h = 8.0;
  in.interruptible = true;
  EXPECT_EQ(rule(advise(in), "long_or_uninterruptible").holds, RuleHolds::no);
  in.interruptible = false;
  EXPECT_EQ(rule(advise(in), "long_or_uninterruptible").holds, RuleHolds::yes);
  AdviceInputs f;
  f.p95_verdict = Verdict::fail;
  EXPECT_EQ(rule(advise(f), "p95_slowdown_over_cutoff").holds, RuleHolds::yes);
  EXPECT_EQ(advise(f).choice, CardChoice::exclusive);
  AdviceInputs s;
  s.step_exclusive_s = 0.010;
  s.step_shared_s = 0.020;  // exactly 2x: the whole card
  EXPECT_EQ(rule(advise(s), "shared_at_least_2x_slower").holds, RuleHolds::yes);
  EXPECT_EQ(rule(advise(s), "shared_at_least_2x_slower").evidence,
            "median step 0.02 s shared vs 0.01 s exclusive (2.00x)");
  s.step_shared_s = 0.0199;
  EXPECT_EQ(rule(advise(s), "shared_at_least_2x_slower").holds, RuleHolds::no);
}

TEST(Advice, LowUtilisationSaysTheBottleneckIsNotTheCard) {
  AdviceInputs in;
  in.gpu_util_pct = 29.0;
  const Advice a = advise(in);
  EXPECT_EQ(rule(a, "gpu_utilisation_below_30pct").holds, RuleHolds::yes);
  EXPECT_EQ(rule(a, "gpu_utilisation_below_30pct").points_to, CardChoice::unknown);  // informs, never chooses
  EXPECT_EQ(a.choice, CardChoice::unknown);
  in.gpu_util_pct = 30.0;
  EXPECT_EQ(rule(advise(in), "gpu_utilisation_below_30pct").holds, RuleHolds::no);
}

TEST(Advice, CostPerStepIsPriceTimesStepTime) {
  // Seed 000's example: 15 min shared at 8/h vs 10 min exclusive at 15/h -> 2.0 vs 2.5: shared cheaper.
  AdviceInputs in;
  in.step_shared_s = 15 * 60.0;
  in.step_exclusive_s = 10 * 60.0;
  in.price_shared_per_h = 8.0;
  in.price_exclusive_per_h = 15.0;
  Advice a = advise(in);
  ASSERT_TRUE(a.cost_per_step_shared && a.cost_per_step_exclusive);
  EXPECT_DOUBLE_EQ(*a.cost_per_step_shared, 2.0);
  EXPECT_DOUBLE_EQ(*a.cost_per_step_exclusive, 2.5);
  EXPECT_EQ(rule(a, "cost_per_step").holds, RuleHolds::no);
  in.price_shared_per_h = 12.0;  // 3.0 > 2.5: the whole card is cheaper per step
  a = advise(in);
  EXPECT_EQ(rule(a, "cost_per_step").holds, RuleHolds::yes);
  EXPECT_EQ(a.choice, CardChoice::exclusive);
  in.price_shared_per_h.reset();
  EXPECT_EQ(rule(advise(in), "cost_per_step").evidence, "price_per_hour of exclusive and shared not both declared");
}

}  // namespace
}  // namespace ib
