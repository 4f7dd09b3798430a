// Amplification (docs/design.md section 13, issue 35): which rank of a collective shares a CPU with a neighbour,
// the single-rank reference scenario derived from it, and the pairing of the two aggregates.
#include "harness/analysis/ranks.h"
#include "harness/scenario/single_rank.h"
#include "kernels/host/host_workloads.h"

#include <gtest/gtest.h>

namespace ib {
namespace {

using nlohmann::json;

struct SingleRankTest : ::testing::Test {
  Registry registry;
  ValidationContext ctx;
  void SetUp() override {
    register_host_workloads(registry);
    ctx = {&registry, Backend::host, {0, 1, 2}};
  }
  // A 2-rank collective on CPUs 0 and 1 asking for its amplification, and a neighbour on `cpus`.
  static json doc(const json& neighbour_cpus, const json& amplification = true) {
    return {{"name", "coll"},
            {"mode", "timeslice"},
            {"tenants",
             {{{"name", "ar"},
               {"workload", "host-collective"},
               {"ranks", 2},
               {"rank_placements", {{{"cpus", {0}}}, {{"cpus", {1}}}}},
               {"amplification", amplification}},
              {{"name", "hog"}, {"workload", "host-compute"}, {"placement", {{"cpus", neighbour_cpus}}}}}}};
  }
  std::string error(const json& d) {
    try {
      parse_scenario(d, "f.json", {}, ctx);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(SingleRankTest, TheRankThatSharesACpuIsFound) {
  EXPECT_EQ(parse_scenario(doc({1}), "f.json", {}, ctx).tenants[0].shared_rank, 1);
  EXPECT_EQ(parse_scenario(doc({0, 2}), "f.json", {}, ctx).tenants[0].shared_rank, 0);
  EXPECT_FALSE(parse_scenario(doc({1}, false), "f.json", {}, ctx).tenants[0].amplification);
}

// Issue 49: CPU 1 of node 1 is not CPU 1 of node 0. A neighbour on another node than every rank shares nothing (refused,
// saying so); ranks on two nodes with one CPU number are two CPUs, so a neighbour beside one of them is exactly one.
TEST_F(SingleRankTest, ANeighbourOnAnotherNodeSharesOnlyNumbers) {
  json elsewhere = doc({1});
  elsewhere["tenants"][1]["placement"]["node"] = 1;
  const std::string why = error(elsewhere);
  EXPECT_NE(why.find("tenants[0].amplification: rank 1's neighbour is on another node (the same numbers, another machine's)"),
            std::string::npos) << why;
  json across = doc({0});
  across["tenants"][0]["rank_placements"] = {{{"node", 0}, {"cpus", {0}}}, {{"node", 1}, {"cpus", {0}}}};
  EXPECT_EQ(parse_scenario(across, "f.json", {}, ctx).tenants[0].shared_rank, 0);
  across["tenants"][1]["placement"]["node"] = 1;
  EXPECT_EQ(parse_scenario(across, "f.json", {}, ctx).tenants[0].shared_rank, 1);
}

TEST_F(SingleRankTest, AmplificationNeedsANeighbourOnExactlyOneRank) {
  EXPECT_NE(error(doc({2})).find("tenants[0].amplification: no other tenant shares one of its ranks' CPUs"), std::string::npos);
  EXPECT_NE(error(doc({0, 1})).find("2 of its ranks share"), std::string::npos);
  EXPECT_NE(error(doc({1}, "yes")).find("tenants[0].amplification: expected true or false"), std::string::npos);
  json one = doc({1});
  one["tenants"][0]["ranks"] = 1;
  one["tenants"][0]["rank_placements"] = {{{"cpus", {0}}}};
  EXPECT_NE(error(one).find("needs a collective tenant with \"ranks\" of 2 or more"), std::string::npos);
  json named = doc({1});
  named["name"] = "coll.single-rank";
  EXPECT_NE(error(named).find("name: a scenario whose name ends in \".single-rank\""), std::string::npos);
}

TEST_F(SingleRankTest, TheReferenceIsTheSharedRankAloneBesideTheSameNeighbours) {
  json plain = doc({1}, false);
  plain["name"] = "other";
  const auto plan = with_single_rank_references(
      {parse_scenario(doc({1}), "f.json", {}, ctx), parse_scenario(plain, "g.json", {}, ctx)});
  ASSERT_EQ(plan.size(), 3u);  // coll, its reference right after it, other (asks for nothing)
  EXPECT_EQ(plan[0].name, "coll");
  EXPECT_EQ(plan[0].tenants[0].ranks, 2);
  const Scenario& ref = plan[1];
  EXPECT_EQ(ref.name, "coll.single-rank");
  EXPECT_EQ(plan[2].name, "other");
  ASSERT_EQ(ref.tenants.size(), 2u);
  EXPECT_EQ(ref.tenants[0].name, "ar");
  EXPECT_EQ(ref.tenants[0].ranks, 1);
  EXPECT_TRUE(ref.tenants[0].rank_placements.empty());
  EXPECT_EQ(ref.tenants[0].placement.cpus, std::vector<int>{1});  // where rank 1 ran
  EXPECT_FALSE(ref.tenants[0].amplification);
  EXPECT_EQ(ref.tenants[1].placement.cpus, std::vector<int>{1});  // the same neighbour
  EXPECT_EQ(ref.duration_s, plan[0].duration_s);
  EXPECT_EQ(ref.mode, plan[0].mode);
}

TenantAggregate aggregate_of(const std::string& scenario, const std::string& mode, const std::string& tenant, double p95) {
  TenantAggregate a;
  a.scenario = scenario;
  a.mode = mode;
  a.tenant = tenant;
  a.metrics = TenantMetrics{};
  a.metrics->p95_slowdown.value = p95;
  return a;
}

// A run of (scenario, mode) with tenant "ar" of `ranks` rank columns and a neighbour "n" without ranks.
RunResult run_of(const std::string& scenario, const std::string& mode, std::size_t ranks) {
  RunResult r;
  r.scenario = scenario;
  r.mode = mode;
  TenantResult ar, n;
  ar.name = "ar";
  ar.colocated.rank_duration_s.assign(ranks > 1 ? ranks : 0, std::vector<double>{1.0});
  n.name = "n";
  r.tenants = {ar, n};
  return r;
}

// Hand values: the collective slowed by 90%, its one rank alone by 60%: amplification 1.5. Not paired: the
// same collective in another mode (no reference there), the reference itself, the neighbour "n" (no ranks
// in either scenario); a reference that slowed under 1% amplifies nothing.
// Two ranks on one GPU (the same node and device, the scenario's when none is given) make the tenant's ranks
// share a GPU, which every rank is told (the mixed placement: ranks 0 and 2 on device 0, rank 1 on device 1);
// on two devices, or the same device index on two nodes, they do not.
TEST(RanksShareAGpu, TheSameNodeAndDeviceOnly) {
  Tenant t;
  t.ranks = 3;
  t.rank_placements.resize(3);
  t.rank_placements[1].device = 1;
  EXPECT_TRUE(ranks_share_a_gpu(t, 0)) << "ranks 0 and 2 on the scenario's device 0";
  EXPECT_TRUE(ranks_share_a_gpu(t, 1)) << "the scenario's device 1 is rank 1's too: all three";
  t.rank_placements[0].device = 2;
  EXPECT_FALSE(ranks_share_a_gpu(t, 0)) << "devices 2, 1 and 0";
  t.rank_placements[0].device.reset();
  t.rank_placements[2].node = 1;
  EXPECT_FALSE(ranks_share_a_gpu(t, 0)) << "device 0 of another node is another GPU";
  t.ranks = 1;
  t.rank_placements.clear();
  EXPECT_FALSE(ranks_share_a_gpu(t, 0)) << "one rank shares with nobody";
}

// IB_LOCAL_RANK: the rank's index among its node's ranks, not its global rank.
TEST(LocalRank, CountsTheRanksBeforeItOnItsNode) {
  Tenant t;
  t.ranks = 4;
  t.rank_placements.resize(4);
  t.rank_placements[1].node = 1;
  t.rank_placements[3].node = 1;
  EXPECT_EQ(local_rank(t, 0), 0);
  EXPECT_EQ(local_rank(t, 1), 0) << "the first rank on node 1";
  EXPECT_EQ(local_rank(t, 2), 1) << "the second on node 0";
  EXPECT_EQ(local_rank(t, 3), 1);
}

TEST(Amplification, PairsTheCollectiveThatAskedWithItsReferenceOfTheSameMode) {
  const std::vector<RunResult> runs = {run_of("coll", "timeslice", 2), run_of("coll", "mps", 2),
                                       run_of("coll.single-rank", "timeslice", 1), run_of("calm", "timeslice", 2),
                                       run_of("calm.single-rank", "timeslice", 1)};
  std::vector<TenantAggregate> all = {aggregate_of("coll", "timeslice", "ar", 0.90),
                                      aggregate_of("coll", "mps", "ar", 0.30),
                                      aggregate_of("coll.single-rank", "timeslice", "ar", 0.60),
                                      aggregate_of("calm", "timeslice", "ar", 0.20),
                                      aggregate_of("calm.single-rank", "timeslice", "ar", 0.005),
                                      aggregate_of("coll", "timeslice", "n", 0.50),
                                      aggregate_of("coll.single-rank", "timeslice", "n", 0.25)};
  attach_amplification(runs, all);
  ASSERT_TRUE(all[0].amplification);
  EXPECT_EQ(all[0].amplification->reference_scenario, "coll.single-rank");
  EXPECT_DOUBLE_EQ(all[0].amplification->collective_slowdown, 0.90);
  EXPECT_DOUBLE_EQ(all[0].amplification->single_rank_slowdown, 0.60);
  ASSERT_TRUE(all[0].amplification->value);
  EXPECT_DOUBLE_EQ(*all[0].amplification->value, 1.5);
  EXPECT_FALSE(all[1].amplification);  // no mps reference
  EXPECT_FALSE(all[2].amplification);  // the reference itself has no reference
  ASSERT_TRUE(all[3].amplification);
  EXPECT_FALSE(all[3].amplification->value);
  EXPECT_FALSE(all[5].amplification);  // the neighbour did not ask (it has no ranks)
  all[2].metrics.reset();  // the reference not measured: nothing to say
  attach_amplification(runs, all);
  EXPECT_FALSE(all[0].amplification);
}

}  // namespace
}  // namespace ib
