#include "harness/analysis/ranks.h"

#include "harness/core/reference_names.h"
#include "harness/stats/collectives.h"
#include "kernels/workload.h"

#include <algorithm>
#include <cstdint>

namespace ib {

void summarize_ranks(PhaseResult& p) {
  p.rank_figures.reset();
  const std::size_t n = p.start_ns.size();
  // The straggler is told by arrivals: a phase without them (a file written before they were kept) has none.
  if (p.rank_start_ns.empty() || p.counted.size() != n) return;
  std::vector<std::vector<std::int64_t>> counted(p.rank_start_ns.size());
  for (std::size_t r = 0; r < p.rank_start_ns.size(); ++r) {
    if (p.rank_start_ns[r].size() != n) return;  // not one arrival per sample: nothing to say
    for (std::size_t i = 0; i < n; ++i)
      if (p.counted[i]) counted[r].push_back(p.rank_start_ns[r][i]);
  }
  if (counted[0].empty()) return;
  const Straggler s = straggler_rank(counted);
  p.rank_figures = PhaseResult::RankFigures{static_cast<int>(counted.size()), s.rank, s.share};
}

namespace {
// Each rank's counted durations of phase `p`.
std::vector<std::vector<double>> counted_by_rank(const PhaseResult& p) {
  std::vector<std::vector<double>> out(p.rank_duration_s.size());
  for (std::size_t r = 0; r < p.rank_duration_s.size(); ++r)
    for (std::size_t i = 0; i < p.rank_duration_s[r].size() && i < p.counted.size(); ++i)
      if (p.counted[i]) out[r].push_back(p.rank_duration_s[r][i]);
  return out;
}
}  // namespace

std::optional<TenantMetrics::Collective> collective_metrics(const TenantResult& t, double cutoff, double timeout_s) {
  const auto e = counted_by_rank(t.exclusive), c = counted_by_rank(t.colocated);
  if (e.empty() || e.size() != c.size()) return std::nullopt;
  // The stall is judged per collective, as a timeout applies: each counted sample's longest collective where
  // the workload reports it, else the whole sample (one collective per sample, or a program of the user's).
  const auto longest = t.colocated.counter_samples.find(kLongestCollectiveCounter);
  const std::vector<double>& per_sample = longest != t.colocated.counter_samples.end() &&
                                                  longest->second.size() == t.colocated.duration_s.size()
                                              ? longest->second
                                              : t.colocated.duration_s;
  std::vector<double> colocated;
  for (std::size_t i = 0; i < per_sample.size() && i < t.colocated.counted.size(); ++i)
    if (t.colocated.counted[i]) colocated.push_back(per_sample[i]);
  if (colocated.empty()) return std::nullopt;
  for (std::size_t r = 0; r < e.size(); ++r)
    if (e[r].empty() || c[r].empty()) return std::nullopt;
  TenantMetrics::Collective m;
  m.ranks = static_cast<int>(e.size());
  m.blast_threshold = cutoff / 4.0;
  m.blast_radius = blast_radius(e, c, m.blast_threshold);
  const StallMargin s = stall_margin(colocated, timeout_s);
  m.longest_stall_s = s.longest_stall_s;
  m.timeout_s = s.timeout_s;
  m.stall_margin = s.margin;
  return m;
}

namespace {
// The most ranks tenant `tenant` ran with in the runs of (`scenario`, `mode`): 0 or 1 for a tenant without ranks.
std::size_t ranks_in(const std::vector<RunResult>& runs, const std::string& scenario, const std::string& mode,
                     const std::string& tenant) {
  std::size_t most = 0;
  for (const RunResult& r : runs)
    if (r.scenario == scenario && r.mode == mode)
      for (const TenantResult& t : r.tenants)
        if (t.name == tenant)
          most = std::max({most, t.exclusive.rank_duration_s.size(), t.colocated.rank_duration_s.size()});
  return most;
}
}  // namespace

void attach_amplification(const std::vector<RunResult>& runs, std::vector<TenantAggregate>& aggregates) {
  for (TenantAggregate& a : aggregates) {
    a.amplification.reset();
    if (!a.metrics || is_single_rank_reference_name(a.scenario)) continue;
    const std::string reference = single_rank_reference_name(a.scenario);
    // The tenant that asked: ranks in its scenario, one rank in the reference (its neighbours are unchanged).
    if (ranks_in(runs, a.scenario, a.mode, a.tenant) < 2 || ranks_in(runs, reference, a.mode, a.tenant) > 1) continue;
    const auto it = std::find_if(aggregates.begin(), aggregates.end(), [&](const TenantAggregate& b) {
      return b.scenario == reference && b.mode == a.mode && b.tenant == a.tenant && b.metrics;
    });
    if (it == aggregates.end()) continue;
    const double collective = a.metrics->p95_slowdown.value, single = it->metrics->p95_slowdown.value;
    a.amplification = TenantAggregate::Amplification{reference, collective, single, amplification(collective, single)};
  }
}

}  // namespace ib
