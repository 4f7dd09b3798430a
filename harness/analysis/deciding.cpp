#include "harness/analysis/deciding.h"

#include "harness/analysis/analysis.h"
#include "harness/core/errors.h"
#include "harness/core/text.h"
#include "harness/stats/sequential.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace ib {

int budget_rounds(const StoppingOptions& o) {
  const int rounds = std::max(1, o.rounds);
  const double budget = o.max_duration_s > 0.0 ? o.max_duration_s : kDefaultBudgetFactor * o.duration_s;
  const double block_s = o.duration_s / rounds;
  if (!(block_s > 0.0)) return rounds;
  // 1e-9: a budget that is a whole number of blocks up to rounding gets all of them.
  return std::max(rounds, static_cast<int>(std::floor(budget / block_s + 1e-9)));
}

StopRule stop_rule(StopRule until, int resamples, bool mode_runs_fixed) {
  return until == StopRule::decided && resamples >= 2 && !mode_runs_fixed ? StopRule::decided : StopRule::fixed;
}

int counted_intervals_per_block(double block_s, double interval_s) {
  if (!(interval_s > 0.0) || !(block_s > 0.0)) return 0;
  return std::max(0, static_cast<int>(std::floor(block_s / interval_s + 1e-9)) - 2);
}

std::string interval_shortfall(const StoppingOptions& o, int repetitions, double interval_s) {
  const int rounds = std::max(1, o.rounds), reps = std::max(1, repetitions);
  const int last_rounds = stop_rule(o.until, o.resamples) == StopRule::decided ? budget_rounds(o) : rounds;
  const int all_rounds = (reps - 1) * rounds + last_rounds;
  const double block_s = o.duration_s / rounds;
  const int per_block = counted_intervals_per_block(block_s, interval_s);
  const auto need = static_cast<int>(kMinSamplesP95);
  if (static_cast<long long>(per_block) * all_rounds >= need) return "";
  // At the planned rounds of every repetition (the first look): ceil(72 / rounds) counted per block.
  const int per_block_needed = (need + reps * rounds - 1) / (reps * rounds);
  const double duration_needed = std::ceil((per_block_needed + 2) * interval_s * rounds);
  const auto g = [](double v) { return formatted("%g", v); };
  const auto n = [](long long v) { return std::to_string(v); };
  // The action first: a bad-input line is cut at 200 characters.
  return "reports every " + g(interval_s) + " s (metric.interval_s): give --duration " + g(duration_needed) +
         " or more (blocks of " + g(duration_needed / rounds) + " s in " + n(rounds) + " rounds), fewer --rounds, or a "
         "program that reports more often; a P95 verdict needs " + n(need) + " intervals a phase, and a phase of " +
         g(o.duration_s) + " s (blocks of " + g(block_s) + " s, each losing the 2 intervals at its edges) counts at most " +
         n(per_block) + " a block, " + n(static_cast<long long>(per_block) * all_rounds) + " in all " + n(all_rounds) +
         " rounds the run may take";
}

Stopping plan_stopping(const StoppingOptions& o, int repetition, int repetitions, int earlier_rounds) {
  Stopping st;
  st.first_rounds = std::max(1, o.rounds);
  st.earlier_rounds = earlier_rounds;
  st.resolution = o.resolution;
  // Only the last repetition runs until decided; the earlier ones are restarts of the same fixed length.
  const bool adaptive = stop_rule(o.until, o.resamples) == StopRule::decided && repetition == repetitions;
  st.until = adaptive ? StopRule::decided : StopRule::fixed;
  st.max_rounds = adaptive ? budget_rounds(o) : st.first_rounds;
  st.looks = planned_looks(earlier_rounds + st.first_rounds, o.look_every, earlier_rounds + st.max_rounds);
  st.boundaries = adaptive ? obrien_fleming_boundaries(st.looks, kSequentialAlpha) : std::vector<double>{kZ95};
  st.stopped_by = adaptive ? StoppedBy::budget : StoppedBy::fixed;
  st.z = st.boundaries.back();
  return st;
}

std::optional<StoppedBy> look_at(const std::vector<const RunResult*>& earlier, const RunResult& so_far, double z,
                                 const LookSettings& settings, const StopCheck& stop) {
  RunResult now = so_far;
  summarize_blocks(now);  // counted samples, tail bursts: as the results will have them
  std::vector<const RunResult*> reps = earlier;
  reps.push_back(&now);
  std::vector<std::optional<TenantMetrics>> metrics;
  try {
    metrics = tenant_metrics(reps, settings.seed, settings.resamples, z, stop);
  } catch (const Interrupted&) {
    return std::nullopt;
  }
  bool all_decided = true, all_done = true;
  for (const auto& m : metrics) {
    if (!m) return std::nullopt;  // a tenant without both phases yet
    const Verdict v = slowdown_verdict(m->n_exclusive, m->n_colocated, m->p95_slowdown, so_far.cutoff).verdict;
    const bool decided = v == Verdict::pass || v == Verdict::fail;
    const double half = (m->p95_slowdown.ci_high - m->p95_slowdown.ci_low) / 2.0;
    all_decided &= decided;
    all_done &= decided || (settings.resolution > 0.0 && half <= settings.resolution);
  }
  if (metrics.empty()) return std::nullopt;
  if (all_decided) return StoppedBy::decided;
  if (all_done) return StoppedBy::resolution;
  return std::nullopt;
}

}  // namespace ib
