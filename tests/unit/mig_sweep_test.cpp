// mig-sweep's judgement on layouts whose answer is known: most tenants passing first, then STP (per price
// with prices); a runner-up whose intervals all overlap cannot be told apart (exit 5); a failing best layout
// is exit 1, a failed reference exit 4. The power summary and the prices file on hand-made inputs.
#include "harness/core/exit_codes.h"
#include "harness/vet/mig_sweep.h"
#include "harness/core/errors.h"
#include "reports/json/mig_sweep_json.h"
#include "reports/markdown/mig_sweep_markdown.h"
#include "reports/yaml/mig_parted_yaml.h"

#include <cstdio>
#include <fstream>

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

// Issue 37 item 13 (a surviving mutant: dropping "next.passing == best.passing"): a runner-up with fewer
// tenants passing is told apart by that alone, however its intervals overlap: exit 0, not 5.
TEST(MigSweepRecommendation, FewerPassingIsDistinguishableEvenWithOverlappingIntervals) {
  const std::vector<SweepLayout> ls = {
      layout("x", {"3g.71gb", "3g.71gb"}, {tenant("a", Verdict::pass, 0.36, 0.05), tenant("b", Verdict::pass, 0.1, 0.05)}, 1.5),
      layout("y", {"4g.71gb", "2g.35gb"}, {tenant("a", Verdict::inconclusive, 0.38, 0.05), tenant("b", Verdict::pass, 0.12, 0.05)}, 1.4)};
  MigSweepResult result;
  result.layouts = ls;
  result.recommendation = recommend_layout(ls, 2);
  ASSERT_TRUE(result.recommendation);
  EXPECT_EQ(result.recommendation->layout, "x");
  EXPECT_TRUE(result.recommendation->distinguishable);
  EXPECT_EQ(sweep_exit_code(result, 2), kExitPass);
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

TEST(MigSweepRecommendation, WithPricesTheCheaperThroughputWins) {
  // Both pass both tenants; x has the higher STP but costs more per unit of it: 1.6 / 4.5 < 1.2 / 2.5.
  std::vector<SweepLayout> ls = {
      layout("x", {"4g.71gb", "3g.71gb"}, {tenant("a", Verdict::pass, 0.1, 0.02), tenant("b", Verdict::pass, 0.1, 0.02)}, 1.6),
      layout("y", {"2g.35gb", "2g.35gb"}, {tenant("a", Verdict::pass, 0.3, 0.02), tenant("b", Verdict::pass, 0.3, 0.02)}, 1.2)};
  EXPECT_EQ(recommend_layout(ls, 2)->layout, "x");  // without prices: the most STP
  ls[0].price = 4.5;
  ls[0].stp_per_price = 1.6 / 4.5;
  ls[1].price = 2.5;
  ls[1].stp_per_price = 1.2 / 2.5;
  const auto r = recommend_layout(ls, 2);
  EXPECT_EQ(r->layout, "y");
  EXPECT_NE(r->reason.find("0.48 STP per unit of price"), std::string::npos) << r->reason;
}

TEST(MigSweepRecommendation, AFailedReferenceIsAWorkloadFailure) {
  MigSweepResult result;
  result.layouts = {layout("x", {"3g.71gb", "3g.71gb"},
                           {tenant("a", Verdict::pass, 0.1, 0.02), tenant("b", Verdict::pass, 0.1, 0.02)}, 1.5)};
  result.recommendation = recommend_layout(result.layouts, 2);
  EXPECT_EQ(sweep_exit_code(result, 2), kExitPass);
  SweepLayout ref = layout("timeslice on 7g.141gb", {"7g.141gb", "7g.141gb"}, {}, 1.0);
  ref.sharing = SweepSharing::timeslice;
  ref.outcome = LayoutOutcome::failed;
  result.references.push_back(ref);
  EXPECT_EQ(sweep_exit_code(result, 2), kExitWorkloadFailed);
}

TelemetrySample reading(std::optional<double> power, std::optional<double> limit, std::optional<unsigned long long> reasons) {
  TelemetrySample t;
  t.r.power_w = power;
  t.r.power_limit_w = limit;
  t.r.clock_event_reasons = reasons;
  return t;
}

TEST(MigSweepPower, MedianMaxLimitAndThePowerCappedFraction) {
  EXPECT_FALSE(summarize_power({}));
  EXPECT_FALSE(summarize_power({reading(std::nullopt, 700.0, 0)}));  // no power figure: nothing to say
  // powers 300, 650, 500, 690 (and one reading without): median 575, max 690; limits 700, 700, 650 -> 700;
  // reasons on four readings: SwPowerCap (0x4), HwPowerBrakeSlowdown (0x80), SwThermalSlowdown (0x20, not power), 0.
  const auto p = summarize_power({reading(300.0, 700.0, 0x4), reading(650.0, 700.0, 0x80), reading(500.0, 650.0, 0x20),
                                  reading(690.0, std::nullopt, 0x0), reading(std::nullopt, std::nullopt, std::nullopt)});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->readings, 4u);
  EXPECT_DOUBLE_EQ(*p->median_w, 575.0);
  EXPECT_DOUBLE_EQ(*p->max_w, 690.0);
  EXPECT_DOUBLE_EQ(*p->limit_w, 700.0);
  EXPECT_DOUBLE_EQ(*p->power_capped_fraction, 0.5);  // 2 of the 4 readings with reasons
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(MigSweepPrices, AnObjectOfPositivePricesElseOneLineNamingTheKey) {
  const auto prices = read_sweep_prices(write_temp("prices-ok.json", R"({"1g.18gb": 0.6, "7g.141gb": 4})"));
  EXPECT_EQ(prices, (std::map<std::string, double>{{"1g.18gb", 0.6}, {"7g.141gb", 4.0}}));
  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {R"({"1g.18gb": 0})", "1g.18gb: a price above 0 was expected"},
           {R"({"1g.18gb": "cheap"})", "1g.18gb: a price above 0 was expected"},
           {R"([1, 2])", "an object of MIG profile -> price"},
           {R"({})", "an object of MIG profile -> price"}}) {
    const std::string path = write_temp("prices-bad.json", text);
    try {
      read_sweep_prices(path);
      ADD_FAILURE() << text << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("mig-sweep --prices " + path + ": " + says), std::string::npos) << e.what();
    }
  }
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

// The H200's profiles with NVML's placements (memory slices), for the pre-existing instance checks.
std::vector<MigGpuInstanceProfile> h200_profiles() {
  auto at = [](std::vector<unsigned> starts, unsigned size) {
    std::vector<MigPlacement> out;
    for (unsigned s : starts) out.push_back({s, size});
    return out;
  };
  return {{"1g.18gb", 0, 19, 1, 7, 16, 16384, at({0, 1, 2, 3, 4, 5, 6}, 1)},
          {"2g.35gb", 1, 14, 2, 3, 32, 33536, at({0, 2, 4}, 2)},
          {"3g.71gb", 2, 9, 3, 2, 60, 71424, at({0, 4}, 4)},
          {"4g.71gb", 3, 5, 4, 1, 64, 71424, at({0}, 4)},
          {"7g.141gb", 4, 0, 7, 1, 132, 143360, at({0}, 8)}};
}

MigSweepResult planned(std::vector<std::vector<std::string>> layouts) {
  MigSweepResult r;
  SweepLayout ref;
  ref.name = "timeslice on 7g.141gb";
  ref.sharing = SweepSharing::timeslice;
  ref.profiles = {"7g.141gb", "7g.141gb"};
  ref.outcome = LayoutOutcome::pending;
  r.references.push_back(ref);
  for (auto& p : layouts) {
    SweepLayout l;
    l.name = p.front() + "," + p.back();
    l.profiles = p;
    l.outcome = LayoutOutcome::pending;
    r.layouts.push_back(l);
  }
  return r;
}

// A 1g.18gb at memory slice 6 leaves room for 4g.71gb + 2g.35gb (0-3, 4-5) but not for a second 3g.71gb (4-7)
// nor for the references' 7g.141gb (0-7): those are skipped with the slices in the way, the rest left to run.
TEST(MigSweepPreExisting, EntriesThatDoNotFitBesideThemAreSkippedWithTheReason) {
  MigGpuInstance at6;
  at6.profile = "1g.18gb";
  at6.placement = MigPlacement{6, 1};
  MigSweepResult r = planned({{"3g.71gb", "3g.71gb"}, {"4g.71gb", "2g.35gb"}});
  skip_blocked_entries(r, h200_profiles(), {at6});
  EXPECT_EQ(r.references[0].outcome, LayoutOutcome::skipped_existing);
  EXPECT_EQ(r.references[0].reason,
            "its 7g.141gb instance does not fit beside the pre-existing instances at memory slices 6-6 (never "
            "touched); it would fit without them");
  EXPECT_EQ(r.layouts[0].outcome, LayoutOutcome::skipped_existing);
  EXPECT_EQ(r.layouts[0].reason.rfind("it does not fit beside the pre-existing instances at memory slices 6-6", 0), 0u)
      << r.layouts[0].reason;
  EXPECT_EQ(r.layouts[1].outcome, LayoutOutcome::pending);
  // Nothing there: nothing skipped.
  MigSweepResult clear = planned({{"3g.71gb", "3g.71gb"}});
  skip_blocked_entries(clear, h200_profiles(), {});
  EXPECT_EQ(clear.references[0].outcome, LayoutOutcome::pending);
  EXPECT_EQ(clear.layouts[0].outcome, LayoutOutcome::pending);
  // Where NVML does not say where it sits: the layouts are left to their runs, the references skipped.
  at6.placement.reset();
  MigSweepResult unknown = planned({{"3g.71gb", "3g.71gb"}});
  skip_blocked_entries(unknown, h200_profiles(), {at6});
  EXPECT_EQ(unknown.references[0].outcome, LayoutOutcome::skipped_existing);
  EXPECT_NE(unknown.references[0].reason.find("NVML does not say where"), std::string::npos);
  EXPECT_EQ(unknown.layouts[0].outcome, LayoutOutcome::pending);
}

// Issue 34 (item 1): one yardstick for every layout. Nothing there: the GPU's largest profile. A 1g.18gb at slice 6
// leaves no room for the 7g.141gb: the largest that fits beside it (4g.71gb, slices 0-3), said so. Where NVML does
// not say where an instance sits, none (and no layout runs). A --baseline file is the yardstick as given.
TEST(MigSweepYardstick, TheLargestInstanceThatFitsOrTheBaselineFile) {
  SweepYardstick y;
  plan_yardstick("", y, h200_profiles(), {});
  EXPECT_EQ(y.source, YardstickSource::largest_instance);
  EXPECT_EQ(y.profile, "7g.141gb");
  EXPECT_TRUE(y.whole_gpu_largest);
  EXPECT_EQ(y.outcome, LayoutOutcome::pending);
  MigGpuInstance at6;
  at6.profile = "1g.18gb";
  at6.placement = MigPlacement{6, 1};
  plan_yardstick("", y, h200_profiles(), {at6});
  EXPECT_EQ(y.profile, "4g.71gb");
  EXPECT_FALSE(y.whole_gpu_largest);
  EXPECT_EQ(y.outcome, LayoutOutcome::pending);
  EXPECT_NE(y.reason.find("7g.141gb, does not fit beside the pre-existing instances"), std::string::npos) << y.reason;
  at6.placement.reset();
  plan_yardstick("", y, h200_profiles(), {at6});
  EXPECT_EQ(y.outcome, LayoutOutcome::skipped_existing);
  EXPECT_EQ(y.profile, "");
  plan_yardstick("base.json", y, h200_profiles(), {at6});
  EXPECT_EQ(y.source, YardstickSource::baseline);
  EXPECT_EQ(y.baseline_file, "base.json");
  EXPECT_EQ(y.outcome, LayoutOutcome::measured);
}

TEST(MigSweepYardstick, AFailedYardstickIsAWorkloadFailureAndTheFilesSayWhichItWas) {
  MigSweepResult r;
  r.yardstick.profile = "7g.141gb";
  r.yardstick.uuid = "MIG-big";
  r.yardstick.outcome = LayoutOutcome::failed;
  r.yardstick.reason = "a workload failed (exit 4)";
  EXPECT_EQ(sweep_exit_code(r, 2), kExitWorkloadFailed);
  EXPECT_NE(mig_sweep_markdown(r).find("No common yardstick"), std::string::npos);
  r.yardstick.outcome = LayoutOutcome::measured;
  r.yardstick.reason.clear();
  r.yardstick.baseline_file = "out/yardstick/run/results.json";
  const auto doc = mig_sweep_to_json(r);
  EXPECT_EQ(doc["schema_version"], "1.2");
  EXPECT_EQ(doc["yardstick"]["source"], "largest_instance");
  EXPECT_EQ(doc["yardstick"]["profile"], "7g.141gb");
  EXPECT_EQ(doc["yardstick"]["baseline_file"], "out/yardstick/run/results.json");
  EXPECT_NE(mig_sweep_markdown(r).find("against one yardstick: each tenant alone once on one 7g.141gb instance (MIG-big), "
                                       "the GPU's largest"),
            std::string::npos)
      << mig_sweep_markdown(r);
}

}  // namespace
}  // namespace ib
