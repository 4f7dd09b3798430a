// The MIG layouts a sweep may try (issue 24, docs/design.md section 12): which sets of GPU instances, one per tenant,
// a GPU in MIG mode can hold at once. Worked out from what NVML says the GPU offers (its GPU instance profiles and
// each one's possible placements, Nvml::mig_gpu_instance_profiles), never from a hard-coded table, so a new GPU or
// driver is covered as it is. Pure functions: no NVML calls, no state.
//
// The rule is NVML's: a GPU instance occupies the memory slices of its placement, [start, start + size), and a
// new one can be created only where it overlaps none already there. A layout is valid when its instances can be
// given placements that overlap neither each other nor the pre-existing instances (which a sweep never touches),
// with no profile used more often than its instance count and no more compute slices in all than the whole GPU
// has (the largest profile's slice count).
#pragma once

#include "harness/core/names.h"
#include "harness/nvml/nvml.h"

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ib {

// "1g.18gb (MIG-...)", or "1g.18gb (GPU instance 3, no compute instance)": a pre-existing instance in a reason.
std::string gpu_instance_label(const MigGpuInstance& g);

// One GPU instance of a layout: its profile (by name) and a placement that fits.
struct MigLayoutInstance {
  std::string profile;
  MigPlacement placement;
};

// A multiset of GPU instance profiles, one instance per tenant, in canonical order: larger profiles first (more
// compute slices, then more memory, then by name), each with one concrete placement.
struct MigLayout {
  std::vector<MigLayoutInstance> instances;
  // The profiles joined with ',' in canonical order, e.g. "3g.71gb,2g.35gb,1g.18gb" (the --layouts file's form).
  std::string name() const;
};

// A placement's memory slices as the reasons name them: "0-3" for [0, 4).
std::string slices_text(const MigPlacement& p);

// Every valid layout of exactly `tenants` instances on a GPU offering `profiles` beside pre-existing instances
// at `occupied`, each once, sorted by the canonical rank sequence of their profiles (layouts with larger profiles
// first). `tenants` 0 gives none.
std::vector<MigLayout> enumerate_mig_layouts(const std::vector<MigGpuInstanceProfile>& profiles, unsigned tenants,
                                             const std::vector<MigPlacement>& occupied = {});

// Why a user-given layout cannot be run.
enum class MigLayoutProblem {
  none,                  // valid
  empty,                 // no profile named
  unknown_profile,       // a name the GPU does not offer
  wrong_tenant_count,    // not one instance per tenant
  over_instance_count,   // a profile used more often than the GPU holds it
  over_slice_count,      // more compute slices than the whole GPU has
  no_placement,          // the instances cannot be placed together on this GPU at all
  blocked_by_existing,   // they could, but not beside the pre-existing instances (never touched)
};
template <>
struct EnumWords<MigLayoutProblem> {
  static constexpr std::array<const char*, 8> words = {
      "none", "empty", "unknown_profile", "wrong_tenant_count", "over_instance_count", "over_slice_count",
      "no_placement", "blocked_by_existing"};
};

// The verdict on one line of a user's layout list.
struct MigLayoutCheck {
  unsigned line = 0;                  // 1-based line number in the list
  std::string text;                   // the line as given, trimmed
  std::optional<MigLayout> layout;    // when valid: the layout in canonical order, with placements
  MigLayoutProblem problem = MigLayoutProblem::none;
  std::string reason;                 // one line saying why not (empty when valid)
};

// Checks a layout list, one layout a line, profiles separated by ',' ("3g.71gb,2g.35gb,1g.18gb"; blanks around
// names, blank lines and '#' comments are ignored), against `profiles` and `occupied` as enumerate_mig_layouts
// judges them. `tenants` > 0 also requires exactly that many instances per layout. One result per layout line.
std::vector<MigLayoutCheck> check_mig_layouts(const std::string& list,
                                              const std::vector<MigGpuInstanceProfile>& profiles, unsigned tenants,
                                              const std::vector<MigPlacement>& occupied = {});

// Where to create the GPU instances of `profiles`, in that order (--mig-create's list), beside pre-existing
// instances at `occupied`: one placement per profile, same order, chosen as check_mig_layouts places the same
// multiset. `check.problem` says why they cannot be created (then `placements` is empty).
struct MigCreationPlan {
  std::vector<MigPlacement> placements;
  MigLayoutCheck check;
};
MigCreationPlan plan_mig_creation(const std::vector<std::string>& profiles,
                                  const std::vector<MigGpuInstanceProfile>& gpu_profiles,
                                  const std::vector<MigPlacement>& occupied);

}  // namespace ib
