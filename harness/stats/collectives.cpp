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

Straggler straggler_rank(const std::vector<std::vector<std::int64_t>>& arrival_ns) {
  if (arrival_ns.empty() || arrival_ns[0].empty()) throw std::invalid_argument("straggler_rank: no iteration");
  const std::size_t iterations = arrival_ns[0].size();
  for (const auto& rank : arrival_ns)
    if (rank.size() != iterations) throw std::invalid_argument("straggler_rank: ranks with different iteration counts");
  std::vector<int> last(arrival_ns.size(), 0);
  for (std::size_t i = 0; i < iterations; ++i) {
    std::size_t latest = 0;
    for (std::size_t r = 1; r < arrival_ns.size(); ++r)
      if (arrival_ns[r][i] > arrival_ns[latest][i]) latest = r;  // strictly: an exact tie stays with the lower rank
    ++last[latest];
  }
  const auto most = std::max_element(last.begin(), last.end());  // the first: the lowest rank on a tie
  return {static_cast<int>(most - last.begin()), static_cast<double>(*most) / static_cast<double>(iterations)};
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
