// Amplification's single-rank reference (single_rank.h).
#include "harness/scenario/single_rank.h"

#include <algorithm>

namespace ib {

namespace {

// Shared on one machine only: CPU 0 (or GPU 0) of node 1 is not CPU 0 of node 0, so a neighbour placed on another
// node than the rank shares nothing with it, whatever its numbers (`by_number_only`: whether the numbers meet).
bool share(const Placement& a, const Placement& b, int scenario_device, Backend backend, bool by_number_only = false) {
  if (a.node != b.node && !by_number_only) return false;
  for (int cpu : a.cpus)
    if (std::find(b.cpus.begin(), b.cpus.end(), cpu) != b.cpus.end()) return true;
  return backend == Backend::cuda && a.device.value_or(scenario_device) == b.device.value_or(scenario_device);
}

// Whether rank `r` of `collective` shares a CPU or GPU with any rank of another tenant of `s`.
bool rank_shares(const Scenario& s, const Tenant& collective, int r, Backend backend, bool by_number_only = false) {
  for (const Tenant& other : s.tenants) {
    if (other.name == collective.name) continue;
    for (int k = 0; k < other.ranks; ++k)
      if (share(collective.placement_of(r), other.placement_of(k), s.device, backend, by_number_only)) return true;
  }
  return false;
}

}  // namespace

std::optional<int> shared_rank(const Scenario& s, const Tenant& collective, Backend backend, std::string& why) {
  std::vector<int> sharing;
  for (int r = 0; r < collective.ranks; ++r)
    if (rank_shares(s, collective, r, backend)) sharing.push_back(r);
  if (sharing.size() == 1) return sharing.front();
  const std::string where = backend == Backend::cuda ? "CPUs (placement.cpus) or GPU (placement.device)" : "CPUs (placement.cpus)";
  why = sharing.empty()
            ? "no other tenant shares one of its ranks' " + where + ": amplification needs a neighbour on exactly one rank's"
            : std::to_string(sharing.size()) + " of its ranks share their " + where +
                  " with other tenants: amplification needs a neighbour on exactly one rank's";
  if (sharing.empty())  // kept short: a line of bad input is cut at 200 characters
    for (int r = 0; r < collective.ranks; ++r)
      if (rank_shares(s, collective, r, backend, true)) {
        why = "rank " + std::to_string(r) + "'s neighbour is on another node (the same numbers, another machine's): "
              "amplification needs a neighbour on exactly one rank's node";
        break;
      }
  return std::nullopt;
}

std::vector<Scenario> with_single_rank_references(const std::vector<Scenario>& scenarios) {
  std::vector<Scenario> out;
  for (const Scenario& s : scenarios) {
    out.push_back(s);
    const auto asking = std::find_if(s.tenants.begin(), s.tenants.end(), [](const Tenant& t) { return t.amplification; });
    if (asking == s.tenants.end() || asking->shared_rank < 0) continue;
    Scenario reference = s;
    reference.name = single_rank_reference_name(s.name);
    reference.description = "the single-rank reference of tenant " + asking->name + " of " + s.name +
                            ": its rank " + std::to_string(asking->shared_rank) + " alone, beside the same neighbours (amplification)";
    Tenant& one = reference.tenants[static_cast<std::size_t>(asking - s.tenants.begin())];
    one.placement = asking->placement_of(asking->shared_rank);
    one.ranks = 1;
    one.rank_placements.clear();
    one.amplification = false;
    one.shared_rank = -1;
    out.push_back(std::move(reference));
  }
  return out;
}

}  // namespace ib
