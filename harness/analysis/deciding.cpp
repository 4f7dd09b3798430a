#include "harness/analysis/deciding.h"

#include "harness/analysis/analysis.h"
#include "harness/core/errors.h"
#include "harness/stats/sequential.h"

#include <algorithm>
#include <cmath>

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
