#include "harness/analysis/advice.h"

#include <fmt/format.h>

namespace ib {

namespace {

RuleHolds holds(bool b) { return b ? RuleHolds::yes : RuleHolds::no; }

std::string pct(double fraction) { return fmt::format("{:.0f}%", fraction * 100.0); }

AdviceRule memory_high(const AdviceInputs& in) {
  AdviceRule r{"peak_memory_above_70pct", RuleHolds::unknown, CardChoice::exclusive,
               "peak GPU memory above 70% of the card: a shared card's partition or time-slice switching "
               "does not leave it room, rent the whole card",
               "peak GPU memory unknown (no NVML per-process reading)", "seed 000 (peak memory, > 70%)"};
  if (in.peak_memory_fraction) {
    r.holds = holds(*in.peak_memory_fraction > kAdviceExclusiveMemory);
    r.evidence = "peak GPU memory " + pct(*in.peak_memory_fraction) + " of the card in the exclusive phase";
  }
  return r;
}

AdviceRule memory_low_and_pass(const AdviceInputs& in) {
  AdviceRule r{"peak_memory_below_50pct_and_p95_pass", RuleHolds::unknown, CardChoice::shared,
               "peak GPU memory below 50% of the card and the P95 slowdown under the cutoff: a shared card is "
               "possible",
               "", "seed 000 (peak memory, < 50%); docs/design.md section 4 (P95 verdict)"};
  const std::string verdict = std::string("P95 verdict ") + verdict_name(in.p95_verdict);
  if (!in.peak_memory_fraction) {
    r.evidence = "peak GPU memory unknown; " + verdict;
    if (in.p95_verdict == Verdict::fail) r.holds = RuleHolds::no;
    return r;
  }
  r.evidence = "peak GPU memory " + pct(*in.peak_memory_fraction) + "; " + verdict;
  const bool low = *in.peak_memory_fraction < kAdviceSharedMemory;
  if (!low || in.p95_verdict == Verdict::fail) r.holds = RuleHolds::no;
  else if (in.p95_verdict == Verdict::pass) r.holds = RuleHolds::yes;
  return r;  // low memory but no verdict yet (inconclusive): unknown
}

AdviceRule p95_fail(const AdviceInputs& in) {
  AdviceRule r{"p95_slowdown_over_cutoff", RuleHolds::unknown, CardChoice::exclusive,
               "the P95 slowdown beside its neighbours is over the cutoff: on this shared card the job is that "
               "much slower at its tail",
               std::string("P95 verdict ") + verdict_name(in.p95_verdict), "docs/design.md section 4 (40% cutoff)"};
  if (in.p95_verdict == Verdict::fail || in.p95_verdict == Verdict::pass) r.holds = holds(in.p95_verdict == Verdict::fail);
  return r;
}

AdviceRule long_or_uninterruptible(const AdviceInputs& in) {
  AdviceRule r{"long_or_uninterruptible", RuleHolds::unknown, CardChoice::exclusive,
               "a run of more than 8 h, or one that cannot be interrupted: a shared pool may pre-empt it, "
               "rent the whole card",
               "", "seed 000 (run length > 8 h; interruption tolerance)"};
  const bool long_run = in.run_length_h && *in.run_length_h > kAdviceLongRunH;
  const bool fragile = in.interruptible && !*in.interruptible;
  r.evidence = (in.run_length_h ? fmt::format("declared run length {:g} h", *in.run_length_h) : "run length not declared") +
               std::string("; ") +
               (in.interruptible ? (*in.interruptible ? "declared interruptible" : "declared not interruptible")
                                 : "interruption tolerance not declared");
  if (long_run || fragile) r.holds = RuleHolds::yes;
  else if (in.run_length_h && in.interruptible) r.holds = RuleHolds::no;
  return r;
}

AdviceRule much_slower(const AdviceInputs& in) {
  AdviceRule r{"shared_at_least_2x_slower", RuleHolds::unknown, CardChoice::exclusive,
               "a step on the shared card takes at least twice as long as on the whole card: pay for the whole card",
               "step times unknown", "seed 004 (whole card when >= 2x faster)"};
  if (in.step_exclusive_s && in.step_shared_s && *in.step_exclusive_s > 0.0) {
    const double ratio = *in.step_shared_s / *in.step_exclusive_s;
    r.holds = holds(ratio >= kAdviceSlowerFactor);
    r.evidence = fmt::format("median step {:.4g} s shared vs {:.4g} s exclusive ({:.2f}x)", *in.step_shared_s,
                             *in.step_exclusive_s, ratio);
  }
  return r;
}

AdviceRule low_util(const AdviceInputs& in) {
  AdviceRule r{"gpu_utilisation_below_30pct", RuleHolds::unknown, CardChoice::unknown,
               "GPU utilisation below 30%: the bottleneck is data loading or the CPU, not the card; a bigger or "
               "whole card will not make it faster",
               "GPU utilisation unknown (no NVML reading)", "seed 004 (utilisation < 30%)"};
  if (in.gpu_util_pct) {
    r.holds = holds(*in.gpu_util_pct < kAdviceLowUtilPct);
    r.evidence = fmt::format("mean GPU utilisation {:.0f}% in the exclusive phase", *in.gpu_util_pct);
  }
  return r;
}

AdviceRule cost(const AdviceInputs& in, Advice& a) {
  AdviceRule r{"cost_per_step", RuleHolds::unknown, CardChoice::exclusive,
               "the shared card costs more per step (T_shared x price_shared > T_exclusive x price_exclusive): "
               "switch to the whole card",
               "", "seed 000 (cost model T_s x P_s vs T_e x P_e)"};
  if (!in.price_exclusive_per_h || !in.price_shared_per_h) {
    r.evidence = "price_per_hour of exclusive and shared not both declared";
    return r;
  }
  if (!in.step_exclusive_s || !in.step_shared_s) {
    r.evidence = "step times unknown";
    return r;
  }
  a.cost_per_step_exclusive = *in.step_exclusive_s * *in.price_exclusive_per_h / 3600.0;
  a.cost_per_step_shared = *in.step_shared_s * *in.price_shared_per_h / 3600.0;
  r.holds = holds(*a.cost_per_step_shared > *a.cost_per_step_exclusive);
  r.evidence = fmt::format("per step {:.3g} shared vs {:.3g} exclusive", *a.cost_per_step_shared,
                           *a.cost_per_step_exclusive);
  return r;
}

}  // namespace

Advice advise(const AdviceInputs& in) {
  Advice a;
  a.inputs = in;
  a.rules = {memory_high(in), p95_fail(in), long_or_uninterruptible(in), much_slower(in),
             memory_low_and_pass(in), low_util(in), cost(in, a)};
  std::vector<std::string> for_exclusive, unknown_exclusive;
  bool shared_ok = false;
  for (const AdviceRule& r : a.rules) {
    if (r.points_to == CardChoice::exclusive && r.holds == RuleHolds::yes) for_exclusive.push_back(r.id);
    if (r.points_to == CardChoice::exclusive && r.holds == RuleHolds::unknown && r.id != "cost_per_step")
      unknown_exclusive.push_back(r.id);
    if (r.points_to == CardChoice::shared && r.holds == RuleHolds::yes) shared_ok = true;
  }
  const auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  if (!for_exclusive.empty()) {
    a.choice = CardChoice::exclusive;
    a.reason = "exclusive: " + list(for_exclusive);
  } else if (shared_ok && unknown_exclusive.empty()) {
    a.choice = CardChoice::shared;
    a.reason = "shared: peak memory below 50% with a P95 pass, and no rule for the whole card holds";
  } else {
    a.choice = CardChoice::unknown;
    a.reason = shared_ok ? "unknown: a shared card looks possible, but " + list(unknown_exclusive) + " cannot be judged"
                         : "unknown: no rule decides (see each rule's evidence)";
  }
  return a;
}

}  // namespace ib
