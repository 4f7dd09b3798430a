// The MIG layout enumeration and check (harness/modes/mig_layouts.h) on an H200's GPU instance profiles, against
// tables written out by hand from the placements (not produced by the code under test).
#include "harness/modes/mig_layouts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

namespace {

using ib::MigGpuInstanceProfile;
using ib::MigLayout;
using ib::MigLayoutProblem;
using ib::MigPlacement;

std::vector<MigPlacement> at(std::vector<unsigned> starts, unsigned size) {
  std::vector<MigPlacement> out;
  for (unsigned s : starts) out.push_back({s, size});
  return out;
}

// The H200 141GB as `nvidia-smi mig -lgip` / `-lgipp` show it: 8 memory slices, 7 compute slices. Listed in
// NVML's profile index order (1g.35gb is NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2), not in the canonical one.
std::vector<MigGpuInstanceProfile> h200() {
  return {
      {"1g.18gb", 0, 19, 1, 7, 16, 16384, at({0, 1, 2, 3, 4, 5, 6}, 1)},
      {"2g.35gb", 1, 14, 2, 3, 32, 33536, at({0, 2, 4}, 2)},
      {"3g.71gb", 2, 9, 3, 2, 60, 71424, at({0, 4}, 4)},
      {"4g.71gb", 3, 5, 4, 1, 64, 71424, at({0}, 4)},
      {"7g.141gb", 4, 0, 7, 1, 132, 143360, at({0}, 8)},
      {"1g.35gb", 9, 15, 1, 4, 26, 33536, at({0, 2, 4, 6}, 2)},
  };
}

std::vector<std::string> names(const std::vector<MigLayout>& layouts) {
  std::vector<std::string> out;
  for (const auto& l : layouts) out.push_back(l.name());
  return out;
}

// Every instance sits on one of its profile's placements, none overlapping another or `occupied`.
void expect_placeable(const std::vector<MigLayout>& layouts, const std::vector<MigPlacement>& occupied = {}) {
  auto profiles = h200();
  for (const auto& l : layouts) {
    std::vector<MigPlacement> taken = occupied;
    for (const auto& i : l.instances) {
      bool offered = false;
      for (const auto& p : profiles)
        if (p.name == i.profile)
          for (const auto& pl : p.placements) offered = offered || pl == i.placement;
      EXPECT_TRUE(offered) << l.name() << ": " << i.profile << " at " << i.placement.start;
      for (const auto& t : taken) EXPECT_FALSE(t.overlaps(i.placement)) << l.name();
      taken.push_back(i.placement);
    }
  }
}

// Abbreviations for the hand-made tables below.
const std::string G7 = "7g.141gb", G4 = "4g.71gb", G3 = "3g.71gb", G2 = "2g.35gb", M1 = "1g.35gb", G1 = "1g.18gb";
std::string L(std::initializer_list<std::string> parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

TEST(MigLayouts, OneTenantIsEveryProfileLargestFirst) {
  EXPECT_EQ(names(ib::enumerate_mig_layouts(h200(), 1)), (std::vector<std::string>{G7, G4, G3, G2, M1, G1}));
  EXPECT_TRUE(ib::enumerate_mig_layouts(h200(), 0).empty());
}

// By hand: 7g takes all 8 memory slices, so it pairs with nothing; 4g ({0}:4) leaves slices 4-7, where any one
// other profile fits (3g at 4, 2g at 4, 1g.35gb at 4 or 6, 1g.18gb at 4-6); 4g x2 exceeds its count of 1; every
// pair of the smaller profiles fits (3g+3g at 0 and 4).
TEST(MigLayouts, TwoTenantsOnAnH200) {
  std::vector<std::string> expected = {
      L({G4, G3}), L({G4, G2}), L({G4, M1}), L({G4, G1}),
      L({G3, G3}), L({G3, G2}), L({G3, M1}), L({G3, G1}),
      L({G2, G2}), L({G2, M1}), L({G2, G1}),
      L({M1, M1}), L({M1, G1}),
      L({G1, G1}),
  };
  auto layouts = ib::enumerate_mig_layouts(h200(), 2);
  EXPECT_EQ(names(layouts), expected);
  expect_placeable(layouts);
  ASSERT_FALSE(layouts.empty());
  EXPECT_EQ(layouts[0].instances[0].placement, (MigPlacement{0, 4}));  // 4g at 0, 3g at 4
  EXPECT_EQ(layouts[0].instances[1].placement, (MigPlacement{4, 4}));
}

// By hand: with 4g (slices 0-3) two more go in slices 4-7, where 2g can only start at 4 (so no 2g+2g, and 3g does
// not fit beside anything); 3g+3g fill the GPU; 3g at 4 leaves slices 0-3 for 2g+2g (at 0 and 2); the rest of the
// small profiles always fit (2g at 0,2,4 and 1g.35gb at 6; 1g.35gb at 0,2,4,6).
TEST(MigLayouts, ThreeTenantsOnAnH200) {
  std::vector<std::string> expected = {
      L({G4, G2, M1}), L({G4, G2, G1}), L({G4, M1, M1}), L({G4, M1, G1}), L({G4, G1, G1}),
      L({G3, G2, G2}), L({G3, G2, M1}), L({G3, G2, G1}), L({G3, M1, M1}), L({G3, M1, G1}), L({G3, G1, G1}),
      L({G2, G2, G2}), L({G2, G2, M1}), L({G2, G2, G1}), L({G2, M1, M1}), L({G2, M1, G1}), L({G2, G1, G1}),
      L({M1, M1, M1}), L({M1, M1, G1}), L({M1, G1, G1}),
      L({G1, G1, G1}),
  };
  auto layouts = ib::enumerate_mig_layouts(h200(), 3);
  EXPECT_EQ(names(layouts), expected);
  expect_placeable(layouts);
  // 3g+2g+2g only works with the 3g at 4 (the search backtracks from 3g at 0).
  auto cdd = layouts[5];
  ASSERT_EQ(cdd.name(), L({G3, G2, G2}));
  EXPECT_EQ(cdd.instances[0].placement, (MigPlacement{4, 4}));
  EXPECT_EQ(cdd.instances[1].placement, (MigPlacement{0, 2}));
  EXPECT_EQ(cdd.instances[2].placement, (MigPlacement{2, 2}));
}

// By hand: beside 4g (or 3g at 0), three more must fit in slices 4-7: 1g.18gb cannot use slice 7, so only
// 1g.35gb at 6 + 1g.18gb at 4 and 5, or 1g.18gb x3 at 4-6; 3g at 4 leaves slices 0-3 for 2g+1g.18gb x2 too;
// 2g x3 (0,2,4) takes one more at 6; 2g x2 takes two of 1g.35gb/1g.18gb; 1g.35gb x4 fills the GPU.
TEST(MigLayouts, FourTenantsOnAnH200) {
  std::vector<std::string> expected = {
      L({G4, M1, G1, G1}), L({G4, G1, G1, G1}),
      L({G3, G2, G1, G1}), L({G3, M1, G1, G1}), L({G3, G1, G1, G1}),
      L({G2, G2, G2, M1}), L({G2, G2, G2, G1}), L({G2, G2, M1, M1}), L({G2, G2, M1, G1}), L({G2, G2, G1, G1}),
      L({G2, M1, M1, M1}), L({G2, M1, M1, G1}), L({G2, M1, G1, G1}), L({G2, G1, G1, G1}),
      L({M1, M1, M1, M1}), L({M1, M1, M1, G1}), L({M1, M1, G1, G1}), L({M1, G1, G1, G1}),
      L({G1, G1, G1, G1}),
  };
  auto layouts = ib::enumerate_mig_layouts(h200(), 4);
  EXPECT_EQ(names(layouts), expected);
  expect_placeable(layouts);
  // 4g + 1g.35gb + 1g.18gb x2: the 1g.35gb must go to 6 (at 4 it would leave only slice 6 for two 1g.18gb).
  ASSERT_FALSE(layouts.empty());
  EXPECT_EQ(layouts[0].instances[1].placement, (MigPlacement{6, 2}));
  EXPECT_EQ(layouts[0].instances[2].placement, (MigPlacement{4, 1}));
  EXPECT_EQ(layouts[0].instances[3].placement, (MigPlacement{5, 1}));
}

// By hand: seven instances need seven compute slices, all 1g; 1g.18gb cannot use slice 7, so at most one 1g.35gb
// (at 6) beside six 1g.18gb (0-5). Eight never fit.
TEST(MigLayouts, SevenTenantsAreAllSmallAndEightDoNotFit) {
  EXPECT_EQ(names(ib::enumerate_mig_layouts(h200(), 7)),
            (std::vector<std::string>{L({M1, G1, G1, G1, G1, G1, G1}), L({G1, G1, G1, G1, G1, G1, G1})}));
  EXPECT_TRUE(ib::enumerate_mig_layouts(h200(), 8).empty());
}

// A pre-existing 1g.18gb at slice 0 takes 4g (only at 0) out, and 3g+3g (one of them needs 0-3); all else fits
// around it.
TEST(MigLayouts, APreExistingInstanceRemovesTheLayoutsItBlocks) {
  std::vector<MigPlacement> occupied = {{0, 1}};
  std::vector<std::string> expected = {
      L({G3, G2}), L({G3, M1}), L({G3, G1}),
      L({G2, G2}), L({G2, M1}), L({G2, G1}),
      L({M1, M1}), L({M1, G1}),
      L({G1, G1}),
  };
  auto layouts = ib::enumerate_mig_layouts(h200(), 2, occupied);
  EXPECT_EQ(names(layouts), expected);
  expect_placeable(layouts, occupied);
}

TEST(MigLayouts, LayoutsDoNotDependOnTheOrderNvmlListsProfilesIn) {
  auto reversed = h200();
  std::reverse(reversed.begin(), reversed.end());
  for (unsigned n : {2u, 3u, 4u})
    EXPECT_EQ(names(ib::enumerate_mig_layouts(reversed, n)), names(ib::enumerate_mig_layouts(h200(), n)));
}

TEST(MigLayouts, AUserListIsCheckedLineByLineWithTheReason) {
  std::string list =
      "# layouts to try\n"
      "1g.18gb, 3g.71gb ,2g.35gb\n"
      "\n"
      "4g.71gb,4g.71gb,1g.18gb\n"
      "4g.71gb,3g.71gb,1g.18gb\n"
      "3g.71gb,3g.71gb,1g.18gb\n"
      "5g.99gb,1g.18gb,1g.18gb\n"
      "2g.35gb,1g.18gb\n";
  auto checks = ib::check_mig_layouts(list, h200(), 3);
  ASSERT_EQ(checks.size(), 6u);

  EXPECT_EQ(checks[0].line, 2u);
  EXPECT_EQ(checks[0].problem, MigLayoutProblem::none);
  ASSERT_TRUE(checks[0].layout);
  EXPECT_EQ(checks[0].layout->name(), L({G3, G2, G1}));  // canonical order, whatever order it was written in
  EXPECT_TRUE(checks[0].reason.empty());

  EXPECT_EQ(checks[1].line, 4u);
  EXPECT_EQ(checks[1].problem, MigLayoutProblem::over_instance_count);
  EXPECT_EQ(checks[1].reason, "2 x 4g.71gb, but the GPU holds at most 1 at once");
  EXPECT_FALSE(checks[1].layout);

  EXPECT_EQ(checks[2].problem, MigLayoutProblem::over_slice_count);
  EXPECT_EQ(checks[2].reason, "8 compute slices in all, but the GPU has 7");

  EXPECT_EQ(checks[3].problem, MigLayoutProblem::no_placement);
  EXPECT_EQ(checks[3].reason,
            "these instances cannot be placed together without overlapping (placements: 3g.71gb {0,4}:4; "
            "1g.18gb {0,1,2,3,4,5,6}:1)");

  EXPECT_EQ(checks[4].problem, MigLayoutProblem::unknown_profile);
  EXPECT_EQ(checks[4].reason,
            "unknown profile '5g.99gb' (this GPU offers: 7g.141gb, 4g.71gb, 3g.71gb, 2g.35gb, 1g.35gb, 1g.18gb)");

  EXPECT_EQ(checks[5].line, 8u);
  EXPECT_EQ(checks[5].problem, MigLayoutProblem::wrong_tenant_count);
  EXPECT_EQ(checks[5].reason, "2 instance(s) for 3 tenant(s): a layout has one instance per tenant");
  EXPECT_STREQ(ib::to_string(checks[5].problem), "wrong_tenant_count");
}

// Issue 37 item 9: "3g.71gb,,3g.71gb" was read as two instances here and refused only by the first layout's
// child run, after the references were measured; it is the line's problem now, before anything is made.
TEST(MigLayouts, AnEmptyEntryInALayoutLineIsItsProblem) {
  for (const char* line : {"3g.71gb,,3g.71gb\n", "3g.71gb,3g.71gb,\n"}) {
    const auto checks = ib::check_mig_layouts(line, h200(), 2);
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_EQ(checks[0].problem, MigLayoutProblem::empty) << line;
    EXPECT_EQ(checks[0].reason, "an empty entry between commas (\"a,,b\" or a trailing ',')");
  }
}

TEST(MigLayouts, AUserLayoutBlockedByAPreExistingInstanceSaysSo) {
  std::vector<MigPlacement> occupied = {{4, 4}};  // a pre-existing 3g.71gb at 4
  auto checks = ib::check_mig_layouts("4g.71gb,2g.35gb\n3g.71gb\n", h200(), 0, occupied);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].problem, MigLayoutProblem::blocked_by_existing);
  EXPECT_EQ(checks[0].reason,
            "does not fit beside the pre-existing instances at memory slices 4-7 (never touched); it would fit "
            "without them");
  EXPECT_EQ(checks[1].problem, MigLayoutProblem::none);  // tenants 0: any count
  ASSERT_TRUE(checks[1].layout);
  EXPECT_EQ(checks[1].layout->instances[0].placement, (MigPlacement{0, 4}));
}

// --mig-create's order is the tenants' (tenant i on the i-th profile), but the placements are chosen for the
// whole set: a 1g.18gb first and a 4g.71gb second get 4-4 and 0-3 (NVML left to itself could have put the 1g.18gb
// at 0, where the 4g.71gb has its only placement); two of a kind take that profile's placements in turn.
TEST(MigLayouts, CreationPlacementsFollowTheCallersOrder) {
  auto plan = ib::plan_mig_creation({G1, G4, G1}, h200(), {});
  ASSERT_TRUE(plan.check.layout) << plan.check.reason;
  EXPECT_EQ(plan.placements, (std::vector<MigPlacement>{{4, 1}, {0, 4}, {5, 1}}));
  // Beside a pre-existing 1g.18gb at 4: the 1g.18gb go to 5 and 6.
  plan = ib::plan_mig_creation({G1, G4, G1}, h200(), {{4, 1}});
  EXPECT_EQ(plan.placements, (std::vector<MigPlacement>{{5, 1}, {0, 4}, {6, 1}}));
  // Beside one at 0 the 4g.71gb has nowhere to go: refused with the reason, nothing to create.
  plan = ib::plan_mig_creation({G1, G4}, h200(), {{0, 1}});
  EXPECT_EQ(plan.check.problem, MigLayoutProblem::blocked_by_existing);
  EXPECT_TRUE(plan.placements.empty());
  EXPECT_NE(plan.check.reason.find("memory slices 0-0"), std::string::npos) << plan.check.reason;
  plan = ib::plan_mig_creation({G4, G4}, h200(), {});
  EXPECT_EQ(plan.check.problem, MigLayoutProblem::over_instance_count);
  EXPECT_EQ(ib::plan_mig_creation({}, h200(), {}).check.problem, MigLayoutProblem::empty);
}

}  // namespace
