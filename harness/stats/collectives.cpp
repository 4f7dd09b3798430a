#include "harness/stats/collectives.h"
#include "harness/stats/stats.h"

#include <algorithm>
#include <stdexcept>

namespace ib {

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::allreduce: return "allreduce";
    case Collective::allgather: return "allgather";
    case Collective::reduce_scatter: return "reduce-scatter";
    case Collective::alltoall: return "alltoall";
    case Collective::broadcast: return "broadcast";
  }
  return "allreduce";
}

std::optional<Collective> parse_collective(const std::string& name) {
  for (Collective c : {Collective::allreduce, Collective::allgather, Collective::reduce_scatter, Collective::alltoall,
                       Collective::broadcast})
    if (name == collective_name(c)) return c;
  return std::nullopt;
}

double busbw_factor(Collective c, int ranks) {
  if (ranks < 1) throw std::invalid_argument("busbw_factor: ranks must be at least 1");
  const double n = ranks;
  switch (c) {
    case Collective::allreduce: return 2.0 * (n - 1.0) / n;
    case Collective::allgather:
    case Collective::reduce_scatter:
    case Collective::alltoall: return (n - 1.0) / n;
    case Collective::broadcast: return 1.0;
  }
  return 1.0;
}

double algbw(double bytes, double seconds) { return bytes / seconds; }

double busbw(Collective c, int ranks, double bytes, double seconds) {
  return algbw(bytes, seconds) * busbw_factor(c, ranks);
}

double collective_sample(const std::vector<double>& per_rank) {
  if (per_rank.empty()) throw std::invalid_argument("collective_sample: no rank");
  return *std::max_element(per_rank.begin(), per_rank.end());
}

Straggler straggler_rank(const std::vector<std::vector<double>>& per_rank_iterations) {
  if (per_rank_iterations.empty() || per_rank_iterations[0].empty())
    throw std::invalid_argument("straggler_rank: no iteration");
  const std::size_t iterations = per_rank_iterations[0].size();
  std::vector<int> slowest(per_rank_iterations.size(), 0);
  for (std::size_t i = 0; i < iterations; ++i) {
    std::size_t worst = 0;
    for (std::size_t r = 0; r < per_rank_iterations.size(); ++r) {
      if (per_rank_iterations[r].size() != iterations)
        throw std::invalid_argument("straggler_rank: ranks with different iteration counts");
      if (per_rank_iterations[r][i] > per_rank_iterations[worst][i]) worst = r;
    }
    ++slowest[worst];
  }
  const auto most = std::max_element(slowest.begin(), slowest.end());  // the first: the lowest rank on a tie
  return {static_cast<int>(most - slowest.begin()), static_cast<double>(*most) / static_cast<double>(iterations)};
}

std::optional<double> amplification(double collective_slowdown, double single_gpu_slowdown, double min_single) {
  if (single_gpu_slowdown < min_single) return std::nullopt;
  return collective_slowdown / single_gpu_slowdown;
}

int blast_radius(const std::vector<std::vector<double>>& exclusive, const std::vector<std::vector<double>>& colocated,
                 double threshold) {
  if (exclusive.size() != colocated.size()) throw std::invalid_argument("blast_radius: rank counts differ");
  int slowed = 0;
  for (std::size_t r = 0; r < exclusive.size(); ++r)
    if (!exclusive[r].empty() && !colocated[r].empty() &&
        median(colocated[r]) > median(exclusive[r]) * (1.0 + threshold))
      ++slowed;
  return slowed;
}

StallMargin stall_margin(const std::vector<double>& samples, double timeout_s) {
  if (samples.empty()) throw std::invalid_argument("stall_margin: no sample");
  const double longest = *std::max_element(samples.begin(), samples.end());
  return {longest, timeout_s, timeout_s / longest};
}

}  // namespace ib
