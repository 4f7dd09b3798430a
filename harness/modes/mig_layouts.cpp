// Enumeration and checking of MIG layouts (see mig_layouts.h): a search over multisets of profiles in canonical
// order, each checked for instance counts, the compute-slice total and, last, a placement of every instance.
#include "harness/modes/mig_layouts.h"

#include "harness/core/text.h"

#include <algorithm>
#include <numeric>
#include <sstream>
#include <tuple>

namespace ib {

namespace {

// A profile ready for the search: its placements sorted by start, so the placement found is deterministic.
struct Candidate {
  const MigGpuInstanceProfile* profile = nullptr;
  std::vector<MigPlacement> placements;
};

// What every search shares: the candidates in canonical order (larger first), the GPU's compute slices and the
// memory slices already taken by instances that are not the sweep's.
struct Board {
  std::vector<Candidate> candidates;
  unsigned gpu_slices = 0;
  std::vector<MigPlacement> occupied;
};

// Canonical rank: more compute slices first, then more memory, then name and id (a total order, so layouts sort
// the same way whatever order NVML listed the profiles in).
bool larger_first(const MigGpuInstanceProfile* a, const MigGpuInstanceProfile* b) {
  return std::make_tuple(b->slice_count, b->memory_mib, a->name, a->id) <
         std::make_tuple(a->slice_count, a->memory_mib, b->name, b->id);
}

Board make_board(const std::vector<MigGpuInstanceProfile>& profiles, const std::vector<MigPlacement>& occupied) {
  std::vector<const MigGpuInstanceProfile*> ordered;
  for (const auto& p : profiles) ordered.push_back(&p);
  std::sort(ordered.begin(), ordered.end(), larger_first);
  Board board;
  board.occupied = occupied;
  for (const auto* p : ordered) {
    Candidate c{p, p->placements};
    std::sort(c.placements.begin(), c.placements.end(), [](const MigPlacement& a, const MigPlacement& b) {
      return std::make_pair(a.start, a.size) < std::make_pair(b.start, b.size);
    });
    board.gpu_slices = std::max(board.gpu_slices, p->slice_count);
    board.candidates.push_back(std::move(c));
  }
  return board;
}

// Gives picks[k..] placements that overlap nothing in `taken` (appending them to `chosen`). A run of one profile
// takes its placements in increasing order from `first`: the same instances in another order are the same layout.
bool place_from(const Board& board, const std::vector<std::size_t>& picks, std::size_t k, std::size_t first,
                std::vector<MigPlacement>& taken, std::vector<MigPlacement>& chosen) {
  if (k == picks.size()) return true;
  const auto& placements = board.candidates[picks[k]].placements;
  for (std::size_t j = first; j < placements.size(); ++j) {
    const MigPlacement& pl = placements[j];
    if (std::any_of(taken.begin(), taken.end(), [&](const MigPlacement& t) { return t.overlaps(pl); })) continue;
    taken.push_back(pl);
    chosen.push_back(pl);
    std::size_t next_first = (k + 1 < picks.size() && picks[k + 1] == picks[k]) ? j + 1 : 0;
    if (place_from(board, picks, k + 1, next_first, taken, chosen)) return true;
    taken.pop_back();
    chosen.pop_back();
  }
  return false;
}

// One placement per pick (canonical order) beside `occupied`, or nullopt when they cannot all be placed.
std::optional<MigLayout> place(const Board& board, const std::vector<std::size_t>& picks,
                               const std::vector<MigPlacement>& occupied) {
  std::vector<MigPlacement> taken = occupied, chosen;
  if (!place_from(board, picks, 0, 0, taken, chosen)) return std::nullopt;
  MigLayout layout;
  for (std::size_t k = 0; k < picks.size(); ++k)
    layout.instances.push_back({board.candidates[picks[k]].profile->name, chosen[k]});
  return layout;
}

// The count rules, for picks in canonical order: none over its profile's instance count, and no more compute
// slices in all than the GPU has. Returns the first rule broken (with its reason in *reason) or none.
MigLayoutProblem count_problem(const Board& board, const std::vector<std::size_t>& picks, std::string* reason) {
  unsigned slices = 0;
  for (std::size_t k = 0; k < picks.size(); ++k) {
    const MigGpuInstanceProfile& p = *board.candidates[picks[k]].profile;
    slices += p.slice_count;
    auto same = static_cast<unsigned>(std::count(picks.begin(), picks.end(), picks[k]));
    if (same > p.instance_count) {
      if (reason)
        *reason = std::to_string(same) + " x " + p.name + ", but the GPU holds at most " +
                  std::to_string(p.instance_count) + " at once";
      return MigLayoutProblem::over_instance_count;
    }
  }
  if (slices > board.gpu_slices) {
    if (reason)
      *reason = std::to_string(slices) + " compute slices in all, but the GPU has " + std::to_string(board.gpu_slices);
    return MigLayoutProblem::over_slice_count;
  }
  return MigLayoutProblem::none;
}

// Extends `picks` (non-decreasing candidate ranks) to `tenants` instances, appending each valid layout to `out`.
// Generating ranks in increasing order yields the layouts already sorted; a prefix that breaks a count rule is cut.
void extend(const Board& board, unsigned tenants, std::vector<std::size_t>& picks, std::vector<MigLayout>& out) {
  if (picks.size() == tenants) {
    if (auto layout = place(board, picks, board.occupied)) out.push_back(std::move(*layout));
    return;
  }
  std::size_t from = picks.empty() ? 0 : picks.back();
  for (std::size_t r = from; r < board.candidates.size(); ++r) {
    picks.push_back(r);
    if (count_problem(board, picks, nullptr) == MigLayoutProblem::none) extend(board, tenants, picks, out);
    picks.pop_back();
  }
}

// A profile's placements as `nvidia-smi mig -lgipp` shows them: "{0,4}:4" (or "0:1,2:2" for mixed sizes).
std::string placements_text(const std::vector<MigPlacement>& placements) {
  bool one_size = std::all_of(placements.begin(), placements.end(),
                              [&](const MigPlacement& p) { return p.size == placements.front().size; });
  std::string out;
  for (const auto& p : placements)
    out += (out.empty() ? "" : ",") + std::to_string(p.start) + (one_size ? "" : ":" + std::to_string(p.size));
  if (one_size) out = "{" + out + "}:" + (placements.empty() ? "0" : std::to_string(placements.front().size));
  return out;
}

std::string trimmed(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// The candidate rank of each name in a layout line, sorted (canonical order); an unknown name sets the problem.
std::vector<std::size_t> ranks_of(const Board& board, const std::string& text, MigLayoutCheck& check) {
  std::vector<std::size_t> picks;
  std::stringstream in(trimmed(text) + ",");  // the ',' makes a trailing one's empty entry a token too
  std::string name;
  while (std::getline(in, name, ',')) {
    name = trimmed(name);
    if (name.empty()) {  // "a,,b" or a trailing ',': a slip the user should see, not a layout of fewer instances
      check.problem = MigLayoutProblem::empty;
      check.reason = "an empty entry between commas (\"a,,b\" or a trailing ',')";
      return {};
    }
    auto it = std::find_if(board.candidates.begin(), board.candidates.end(),
                           [&](const Candidate& c) { return c.profile->name == name; });
    if (it == board.candidates.end()) {
      std::string offered;
      for (const auto& c : board.candidates) offered += (offered.empty() ? "" : ", ") + c.profile->name;
      check.problem = MigLayoutProblem::unknown_profile;
      check.reason = "unknown profile '" + name + "' (this GPU offers: " + (offered.empty() ? "none" : offered) + ")";
      return {};
    }
    picks.push_back(static_cast<std::size_t>(it - board.candidates.begin()));
  }
  std::sort(picks.begin(), picks.end());
  return picks;
}

// Why the instances of `picks` (which pass the count rules) cannot be placed: not at all, or not beside the
// pre-existing instances.
void placement_problem(const Board& board, const std::vector<std::size_t>& picks, MigLayoutCheck& check) {
  if (place(board, picks, {})) {
    std::string at;
    for (const auto& o : board.occupied) at += (at.empty() ? "" : ", ") + slices_text(o);
    check.problem = MigLayoutProblem::blocked_by_existing;
    check.reason = "does not fit beside the pre-existing instances at memory slices " + at +
                   " (never touched); it would fit without them";
    return;
  }
  std::string which;
  std::vector<std::size_t> distinct = picks;
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  for (std::size_t r : distinct)
    which += (which.empty() ? "" : "; ") + board.candidates[r].profile->name + " " +
             placements_text(board.candidates[r].placements);
  check.problem = MigLayoutProblem::no_placement;
  check.reason = "these instances cannot be placed together without overlapping (placements: " + which + ")";
}

// The verdict on one layout line (not blank, not a comment).
MigLayoutCheck check_line(const Board& board, unsigned tenants, unsigned line, const std::string& text) {
  MigLayoutCheck check;
  check.line = line;
  check.text = text;
  std::vector<std::size_t> picks = ranks_of(board, text, check);
  if (check.problem != MigLayoutProblem::none) return check;
  if (picks.empty()) {
    check.problem = MigLayoutProblem::empty;
    check.reason = "no profile named";
  } else if (tenants > 0 && picks.size() != tenants) {
    check.problem = MigLayoutProblem::wrong_tenant_count;
    check.reason = std::to_string(picks.size()) + " instance(s) for " + std::to_string(tenants) +
                   " tenant(s): a layout has one instance per tenant";
  } else {
    check.problem = count_problem(board, picks, &check.reason);
    if (check.problem != MigLayoutProblem::none) return check;
    if (auto layout = place(board, picks, board.occupied))
      check.layout = std::move(*layout);
    else
      placement_problem(board, picks, check);
  }
  return check;
}

}  // namespace

std::string slices_text(const MigPlacement& p) {
  return std::to_string(p.start) + "-" + std::to_string(p.end() == 0 ? 0 : p.end() - 1);
}

std::string MigLayout::name() const {
  std::string out;
  for (const auto& i : instances) out += (out.empty() ? "" : ",") + i.profile;
  return out;
}

std::vector<MigLayout> enumerate_mig_layouts(const std::vector<MigGpuInstanceProfile>& profiles, unsigned tenants,
                                             const std::vector<MigPlacement>& occupied) {
  std::vector<MigLayout> out;
  if (tenants == 0) return out;
  Board board = make_board(profiles, occupied);
  std::vector<std::size_t> picks;
  extend(board, tenants, picks, out);
  return out;
}

std::vector<MigLayoutCheck> check_mig_layouts(const std::string& list,
                                              const std::vector<MigGpuInstanceProfile>& profiles, unsigned tenants,
                                              const std::vector<MigPlacement>& occupied) {
  Board board = make_board(profiles, occupied);
  std::vector<MigLayoutCheck> out;
  std::stringstream in(list);
  std::string line;
  unsigned number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string text = trimmed(line);
    if (text.empty() || text[0] == '#') continue;
    out.push_back(check_line(board, tenants, number, text));
  }
  return out;
}

MigCreationPlan plan_mig_creation(const std::vector<std::string>& profiles,
                                  const std::vector<MigGpuInstanceProfile>& gpu_profiles,
                                  const std::vector<MigPlacement>& occupied) {
  MigCreationPlan plan;
  const auto checks = check_mig_layouts(joined(profiles, ","), gpu_profiles, 0, occupied);
  if (checks.empty()) {  // nothing named
    plan.check.problem = MigLayoutProblem::empty;
    plan.check.reason = "no profile named";
    return plan;
  }
  plan.check = checks.front();
  if (!plan.check.layout) return plan;
  // The canonical layout's instances handed out in the caller's order: the k-th instance of a profile asked
  // for takes that profile's k-th placement.
  std::vector<bool> taken(plan.check.layout->instances.size(), false);
  for (const std::string& p : profiles)
    for (std::size_t i = 0; i < taken.size(); ++i)
      if (!taken[i] && plan.check.layout->instances[i].profile == p) {
        taken[i] = true;
        plan.placements.push_back(plan.check.layout->instances[i].placement);
        break;
      }
  return plan;
}

std::string gpu_instance_label(const MigGpuInstance& g) {
  return g.profile + " (" + (g.uuid.empty() ? "GPU instance " + std::to_string(g.id) + ", no compute instance" : g.uuid) + ")";
}

}  // namespace ib
