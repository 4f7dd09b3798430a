// matrix's judgement on inputs whose answer is known by hand: the workload list, the pairs, the maximum
// matching against exhaustive counts, which pairs may share (both directions must pass), the packing of six
// workloads with two that share with no one, seed 000's cost rule, and the exit codes.
#include "harness/core/errors.h"
#include "harness/core/exit_codes.h"
#include "harness/vet/matrix.h"
#include "reports/json/matrix_json.h"
#include "reports/markdown/matrix_markdown.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace ib {
namespace {

using Edges = std::vector<std::pair<std::size_t, std::size_t>>;

TEST(MatrixWorkloads, AListItemIsAWorkloadWithTypedParams) {
  const auto w = matrix_workloads_from_list("host-compute:n=128:reps=8, host-copy:mib=1.5:kernel=v4,host-idle:flag=true");
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].name, "host-compute:n=128:reps=8");
  EXPECT_EQ(w[0].workload, "host-compute");
  EXPECT_EQ(w[0].tenant["params"]["n"], 128);
  EXPECT_TRUE(w[0].tenant["params"]["n"].is_number_integer());
  EXPECT_DOUBLE_EQ(w[1].tenant["params"]["mib"].get<double>(), 1.5);
  EXPECT_EQ(w[1].tenant["params"]["kernel"], "v4");
  EXPECT_EQ(w[2].tenant["params"]["flag"], true);
  EXPECT_EQ(w[2].name, "host-idle:flag=true");  // the spaces around an item are not its name
}

TEST(MatrixWorkloads, BadListsAreRefusedNamingTheItem) {
  EXPECT_THROW(matrix_workloads_from_list("host-compute"), InputError);                 // one workload
  EXPECT_THROW(matrix_workloads_from_list("host-compute,,host-idle"), InputError);      // an empty item
  EXPECT_THROW(matrix_workloads_from_list("host-idle,host-idle"), InputError);          // twice
  EXPECT_THROW(matrix_workloads_from_list("host-compute:n,host-idle"), InputError);     // no '='
  EXPECT_THROW(matrix_workloads_from_list("host-compute:n=1:n=2,host-idle"), InputError);  // a key twice
  EXPECT_THROW(matrix_workloads_from_list(":n=1,host-idle"), InputError);               // no name
  std::string many;
  for (int i = 0; i < 17; ++i) many += (i ? "," : "") + std::string("host-idle:sample_ms=") + std::to_string(i + 1);
  try {
    matrix_workloads_from_list(many);
    FAIL() << "17 workloads were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("153 runs"), std::string::npos) << e.what();
  }
}

TEST(MatrixWorkloads, AScenariosTenantsKeepTheirPlacementAndLoseTheirRole) {
  const nlohmann::json s = nlohmann::json::parse(R"({"tenants": [
    {"name": "a", "role": "victim", "workload": "host-compute", "params": {"n": 64}, "placement": {"cpus": [0]}},
    {"name": "b", "command": {"argv": ["true"]}}]})");
  const auto w = matrix_workloads_from_scenario(s, "f.json");
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].name, "a");
  EXPECT_EQ(w[0].tenant["placement"]["cpus"][0], 0);
  EXPECT_FALSE(w[0].tenant.contains("role"));
  EXPECT_FALSE(w[0].tenant.contains("name"));
  EXPECT_EQ(w[1].workload, "command");
  const nlohmann::json twice = nlohmann::json::parse(R"({"tenants": [{"name": "a", "workload": "x"}, {"name": "a", "workload": "y"}]})");
  EXPECT_THROW(matrix_workloads_from_scenario(twice, "f.json"), InputError);
  const nlohmann::json ranks = nlohmann::json::parse(R"({"tenants": [{"name": "a", "workload": "x", "ranks": 2}, {"name": "b", "workload": "y"}]})");
  EXPECT_THROW(matrix_workloads_from_scenario(ranks, "f.json"), InputError);
}

TEST(MatrixPairs, EveryUnorderedPairWithTheDiagonalOnce) {
  const auto pairs = plan_matrix_pairs(4);
  ASSERT_EQ(pairs.size(), 10u);  // 4 * 5 / 2
  std::set<std::pair<std::size_t, std::size_t>> seen;
  for (const auto& p : pairs) {
    EXPECT_LE(p.a, p.b);
    EXPECT_TRUE(seen.insert({p.a, p.b}).second);
  }
  EXPECT_EQ(pairs.front().a, 0u);
  EXPECT_EQ(pairs.front().b, 0u);
  EXPECT_EQ(pairs[1].b, 1u);
}

TEST(MatrixPairs, ADiagonalRunHasTwoTenantsOfTheSameWorkloadUnderTwoNames) {
  MatrixResult r;
  r.mode = "timeslice";
  r.workloads = matrix_workloads_from_list("host-compute:n=64,host-idle");
  MatrixPair p;
  const auto s = pair_scenario(r, p, {{"duration_s", 2}});
  ASSERT_EQ(s["tenants"].size(), 2u);
  EXPECT_EQ(s["tenants"][0]["name"], "w0");
  EXPECT_EQ(s["tenants"][1]["name"], "w0-copy");
  EXPECT_EQ(s["tenants"][1]["workload"], "host-compute");
  EXPECT_EQ(s["duration_s"], 2);
  EXPECT_EQ(s["mode"], "timeslice");
  p.b = 1;
  EXPECT_EQ(pair_scenario(r, p, {})["tenants"][1]["name"], "w1");
}

// The largest matching by trying every subset of edges: the answer maximum_matching must reach.
std::size_t brute_force_matching(std::size_t n, const Edges& edges) {
  std::size_t best = 0;
  for (std::uint32_t mask = 0; mask < (1u << edges.size()); ++mask) {
    std::uint32_t used = 0;
    std::size_t count = 0;
    bool ok = true;
    for (std::size_t e = 0; e < edges.size() && ok; ++e) {
      if (!(mask >> e & 1u)) continue;
      const std::uint32_t ends = (1u << edges[e].first) | (1u << edges[e].second);
      ok = !(used & ends);
      used |= ends;
      ++count;
    }
    if (ok) best = std::max(best, count);
  }
  (void)n;
  return best;
}

void expect_a_matching(const Edges& m, const Edges& edges) {
  std::set<std::size_t> ends;
  for (const auto& [a, b] : m) {
    EXPECT_TRUE(ends.insert(a).second && ends.insert(b).second) << "a vertex matched twice";
    EXPECT_TRUE(std::find(edges.begin(), edges.end(), std::make_pair(a, b)) != edges.end() ||
                std::find(edges.begin(), edges.end(), std::make_pair(b, a)) != edges.end());
  }
}

TEST(MatrixPacking, TheMatchingIsMaximumWhereGreedyIsNot) {
  // A path 0-1-2-3: greedy on the middle edge {1,2} finds 1; the maximum is {0,1},{2,3}.
  const Edges path = {{1, 2}, {0, 1}, {2, 3}};
  const auto m = maximum_matching(4, path);
  EXPECT_EQ(m.size(), 2u);
  expect_a_matching(m, path);
  // A triangle with a tail: 0-1-2-0 and 2-3: two edges ({0,1},{2,3}).
  const Edges tri = {{0, 1}, {1, 2}, {0, 2}, {2, 3}};
  EXPECT_EQ(maximum_matching(4, tri).size(), 2u);
  // No edges: nothing matched; an odd cycle of 5: two.
  EXPECT_TRUE(maximum_matching(3, {}).empty());
  const Edges c5 = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}};
  EXPECT_EQ(maximum_matching(5, c5).size(), 2u);
}

TEST(MatrixPacking, TheMatchingAgreesWithExhaustiveSearchOnManyGraphs) {
  std::uint32_t seed = 12345;
  auto next = [&seed] { return seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fffu; };
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 2 + next() % 7;
    Edges edges;
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = a + 1; b < n; ++b)
        if (next() % 3 == 0 && edges.size() < 14) edges.emplace_back(a, b);
    const auto m = maximum_matching(n, edges);
    expect_a_matching(m, edges);
    ASSERT_EQ(m.size(), brute_force_matching(n, edges)) << "trial " << trial;
  }
}

MatrixCell cell(std::size_t v, std::size_t a, Verdict verdict, double p95, double median) {
  MatrixCell c;
  c.victim = v;
  c.aggressor = a;
  c.verdict = verdict;
  c.p95_slowdown = Estimate{p95, p95 - 0.05, p95 + 0.05};
  c.median_slowdown = median;
  return c;
}

// n workloads; every cell fails unless `pass` lists it (victim, aggressor).
MatrixResult matrix_of(std::size_t n, const Edges& pass, const Edges& inconclusive = {}) {
  MatrixResult r;
  for (std::size_t i = 0; i < n; ++i) r.workloads.push_back({"w" + std::to_string(i), "host-compute", {}});
  r.pairs = plan_matrix_pairs(n);
  for (auto& p : r.pairs) p.run.outcome = MatrixRunOutcome::measured;
  for (std::size_t v = 0; v < n; ++v)
    for (std::size_t a = 0; a < n; ++a) r.cells.push_back(cell(v, a, Verdict::fail, 0.9, 0.8));
  for (const auto& [v, a] : pass) r.cell(v, a) = cell(v, a, Verdict::pass, 0.1, 0.05);
  for (const auto& [v, a] : inconclusive) r.cell(v, a) = cell(v, a, Verdict::inconclusive, 0.4, 0.3);
  return r;
}

TEST(MatrixJudgement, APairMayShareOnlyWhenBothDirectionsPass) {
  // 0 beside 1 passes both ways; 0 beside 2 passes one way only; 1 beside 2: one direction inconclusive.
  MatrixResult r = matrix_of(3, {{0, 1}, {1, 0}, {0, 2}, {1, 2}, {1, 1}}, {{2, 1}});
  judge_matrix(r);
  ASSERT_EQ(r.may_share.size(), 1u);
  EXPECT_EQ(r.may_share[0], std::make_pair(std::size_t{0}, std::size_t{1}));
  EXPECT_EQ(r.self_sharing, std::vector<std::size_t>{1});
  ASSERT_TRUE(r.packing);
  EXPECT_EQ(r.packing->devices.size(), 2u);
  EXPECT_EQ(r.packing->saved, 1u);
  EXPECT_EQ(matrix_exit_code(r), kExitInconclusive);  // the inconclusive cell
}

TEST(MatrixJudgement, SixWorkloadsWithTwoLonersPackIntoTheHandCount) {
  // Workloads 0..3 share with each other both ways (an idle one and three light ones); 4 and 5 share with no
  // one (not even each other). By hand: {0,1}, {2,3}, {4}, {5}: 4 devices, 2 saved.
  Edges pass;
  for (std::size_t a = 0; a < 4; ++a)
    for (std::size_t b = 0; b < 4; ++b)
      if (a != b) pass.emplace_back(a, b);
  MatrixResult r = matrix_of(6, pass);
  judge_matrix(r);
  EXPECT_EQ(r.may_share.size(), 6u);  // every pair of 0..3
  ASSERT_TRUE(r.packing);
  EXPECT_EQ(r.packing->devices.size(), 4u);
  EXPECT_EQ(r.packing->saved, 2u);
  EXPECT_EQ(r.packing->exclusive_devices, 6u);
  for (const auto& d : r.packing->devices)
    if (std::find(d.begin(), d.end(), 4u) != d.end() || std::find(d.begin(), d.end(), 5u) != d.end())
      EXPECT_EQ(d.size(), 1u) << "a loner shares a device";
  EXPECT_EQ(matrix_exit_code(r), kExitPass);
}

TEST(MatrixJudgement, PricesFollowSeed000sRulePerSharedWorkload) {
  // 0 and 1 share: 0's median slowdown 0.05, 1's 0.05 (matrix_of's passing cells). Exclusive device 10/h,
  // one share 6/h: an hour of exclusive work costs 10 alone and 6 x 1.05 = 6.3 shared: cheaper.
  MatrixResult r = matrix_of(3, {{0, 1}, {1, 0}});
  r.price_exclusive = 10.0;
  r.price_shared = 6.0;
  judge_matrix(r);
  const MatrixPacking& p = *r.packing;
  EXPECT_DOUBLE_EQ(*p.exclusive_price_per_hour, 30.0);
  EXPECT_DOUBLE_EQ(*p.packed_price_per_hour, 6.0 * 2 + 10.0);
  ASSERT_EQ(p.costs.size(), 2u);
  EXPECT_DOUBLE_EQ(p.costs[0].shared_cost_per_hour_of_work, 6.3);
  EXPECT_TRUE(p.costs[0].shared_cheaper);
  // A share priced above what the slowdown leaves: 10 / 1.05 = 9.52 < 9.6.
  r.price_shared = 9.6;
  judge_matrix(r);
  EXPECT_FALSE(r.packing->costs[0].shared_cheaper);
}

TEST(MatrixJudgement, ExitCodesSayWhatBecameOfTheRuns) {
  MatrixResult r = matrix_of(2, {{0, 1}, {1, 0}});
  judge_matrix(r);
  EXPECT_EQ(matrix_exit_code(r), kExitPass);  // failing diagonals are answers, not errors
  r.pairs[1].run.outcome = MatrixRunOutcome::failed;
  EXPECT_EQ(matrix_exit_code(r), kExitWorkloadFailed);
  for (auto& p : r.pairs) p.run.outcome = MatrixRunOutcome::cannot_run;
  EXPECT_EQ(matrix_exit_code(r), kExitCannotRun);
  r.interrupted = true;
  EXPECT_EQ(matrix_exit_code(r), kExitInterrupted);
}

TEST(MatrixReports, TheWritersShowEveryCellAndMarkPredictedOnes) {
  MatrixResult r = matrix_of(2, {{0, 1}, {1, 0}});
  r.cell(1, 1).source = CellSource::predicted;
  judge_matrix(r);
  const auto j = matrix_to_json(r);
  ASSERT_EQ(j["cells"].size(), 4u);
  EXPECT_EQ(j["cells"][3]["source"], "predicted");
  EXPECT_EQ(j["may_share"][0][1], 1);
  EXPECT_EQ(j["packing"]["saved"], 1);
  const std::string md = matrix_markdown(r);
  EXPECT_NE(md.find("(predicted)"), std::string::npos);
  EXPECT_NE(md.find("1 device instead of 2"), std::string::npos);
}

}  // namespace
}  // namespace ib
