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

}  // namespace ib
