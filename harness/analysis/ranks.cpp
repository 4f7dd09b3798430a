#include "harness/analysis/ranks.h"

#include "harness/stats/collectives.h"

namespace ib {

void summarize_ranks(PhaseResult& p) {
  p.rank_figures.reset();
  const std::size_t n = p.start_ns.size();
  if (p.rank_duration_s.empty()) return;
  std::vector<std::vector<double>> counted(p.rank_duration_s.size());
  for (std::size_t r = 0; r < p.rank_duration_s.size(); ++r) {
    if (p.rank_duration_s[r].size() != n) return;  // not one duration per sample: nothing to say
    for (std::size_t i = 0; i < n; ++i)
      if (p.counted.size() == n && p.counted[i]) counted[r].push_back(p.rank_duration_s[r][i]);
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
  std::vector<double> colocated;
  for (std::size_t i = 0; i < t.colocated.duration_s.size() && i < t.colocated.counted.size(); ++i)
    if (t.colocated.counted[i]) colocated.push_back(t.colocated.duration_s[i]);
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

}  // namespace ib
