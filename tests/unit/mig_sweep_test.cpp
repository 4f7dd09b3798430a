// mig-sweep's judgement on layouts whose answer is known: most tenants passing first, then STP; a runner-up
// whose intervals all overlap cannot be told apart (exit 5); a failing best layout is exit 1.
#include "harness/core/exit_codes.h"
#include "harness/vet/mig_sweep.h"
#include "reports/mig_sweep_writer.h"

#include <gtest/gtest.h>

namespace ib {
namespace {

SweepTenant tenant(const std::string& name, Verdict v, double p95, double half_width) {
  SweepTenant t;
  t.tenant = name;
  t.verdict = v;
  Estimate e{};
  e.value = p95;
  e.ci_low = p95 - half_width;
  e.ci_high = p95 + half_width;
  t.p95_slowdown = e;
  t.cutoff = 0.4;
  return t;
}

SweepLayout layout(const std::string& name, std::vector<std::string> profiles, std::vector<SweepTenant> tenants, double stp) {
  SweepLayout l;
  l.name = name;
  l.profiles = std::move(profiles);
  l.outcome = LayoutOutcome::measured;
  l.tenants = std::move(tenants);
  for (const auto& t : l.tenants) l.passing += t.verdict == Verdict::pass;
  l.stp = stp;
  return l;
}

TEST(MigSweepRecommendation, MostPassingFirstThenThroughput) {
  const std::vector<SweepLayout> ls = {
      layout("4g.71gb,3g.71gb", {"4g.71gb", "3g.71gb"},
             {tenant("a", Verdict::pass, 0.05, 0.02), tenant("b", Verdict::fail, 0.9, 0.05)}, 1.9),
      layout("3g.71gb,3g.71gb", {"3g.71gb", "3g.71gb"},
             {tenant("a", Verdict::pass, 0.10, 0.02), tenant("b", Verdict::pass, 0.20, 0.02)}, 1.4),
      layout("2g.35gb,2g.35gb", {"2g.35gb", "2g.35gb"},
             {tenant("a", Verdict::pass, 0.30, 0.02), tenant("b", Verdict::pass, 0.35, 0.02)}, 1.2)};
  const auto r = recommend_layout(ls, 2);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->layout, "3g.71gb,3g.71gb");  // 2 passing beats the higher STP with 1 passing
  EXPECT_EQ(r->runner_up, "2g.35gb,2g.35gb");
  EXPECT_TRUE(r->distinguishable);  // a's intervals [0.08, 0.12] and [0.28, 0.32] do not overlap
  MigSweepResult result;
  result.layouts = ls;
  result.recommendation = r;
  EXPECT_EQ(sweep_exit_code(result, 2), kExitPass);
}

TEST(MigSweepRecommendation, OverlappingIntervalsCannotBeToldApart) {
  const std::vector<SweepLayout> ls = {
      layout("x", {"3g.71gb", "3g.71gb"}, {tenant("a", Verdict::pass, 0.10, 0.05), tenant("b", Verdict::pass, 0.1, 0.05)}, 1.5),
      layout("y", {"4g.71gb", "2g.35gb"}, {tenant("a", Verdict::pass, 0.12, 0.05), tenant("b", Verdict::pass, 0.13, 0.05)}, 1.4)};
  MigSweepResult result;
  result.layouts = ls;
  result.recommendation = recommend_layout(ls, 2);
  ASSERT_TRUE(result.recommendation);
  EXPECT_EQ(result.recommendation->layout, "x");
  EXPECT_FALSE(result.recommendation->distinguishable);
  EXPECT_EQ(sweep_exit_code(result, 2), kExitInconclusive);
}

TEST(MigSweepRecommendation, ExitCodesOfWhatCannotBeRecommended) {
  MigSweepResult result;
  result.layouts = {layout("x", {"7g.141gb"}, {tenant("a", Verdict::fail, 0.9, 0.05)}, 1.0)};
  result.recommendation = recommend_layout(result.layouts, 1);
  EXPECT_EQ(sweep_exit_code(result, 1), kExitVerdictFailed);
  result.layouts[0].outcome = LayoutOutcome::skipped_budget;
  result.recommendation = recommend_layout(result.layouts, 1);
  EXPECT_FALSE(result.recommendation);
  EXPECT_EQ(sweep_exit_code(result, 1), kExitCannotRun);
  result.interrupted = true;
  EXPECT_EQ(sweep_exit_code(result, 1), kExitInterrupted);
}

TEST(MigPartedYaml, TheRecommendedLayoutAsMigDevicesWithTheDeviceFilter) {
  MigSweepResult r;
  r.device = 1;
  r.gpu_name = "NVIDIA H200";
  r.pci_device_id = 0x233510DEu;
  SweepRecommendation rec;
  rec.layout = "3g.71gb,1g.18gb,1g.18gb";
  rec.profiles = {"3g.71gb", "1g.18gb", "1g.18gb"};
  r.recommendation = rec;
  const std::string y = mig_parted_yaml(r);
  EXPECT_NE(y.find("version: v1\nmig-configs:\n  interference-bench-recommended:\n    - device-filter: \"0x233510DE\"\n"
                   "      devices: [1]\n      mig-enabled: true\n      mig-devices:\n        \"3g.71gb\": 1\n"
                   "        \"1g.18gb\": 2\n"),
            std::string::npos)
      << y;
}

}  // namespace
}  // namespace ib
