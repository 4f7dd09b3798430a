// merge (harness/fleet/): the robust z against hand-computed values, stragglers on members whose
// answer is known, expectations, statuses from task folders, the exit code, and the writers' forms.
#include "harness/core/errors.h"
#include "harness/fleet/merge.h"
#include "harness/stats/stats.h"
#include "reports/html/fleet_html.h"
#include "reports/json/fleet_json.h"
#include "reports/junit/fleet_junit.h"
#include "reports/prometheus/fleet_prometheus.h"
#include "reports/json/results_json.h"
#include "sample_results.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace ib {
namespace {

namespace fs = std::filesystem;

TEST(RobustZ, ModifiedZWithMad) {
  // median 3, |x - 3| = {2, 1, 0, 1, 97}: MAD 1, z = 0.6745 (x - 3).
  const auto z = robust_z_scores({1, 2, 3, 4, 100});
  ASSERT_EQ(z.size(), 5u);
  EXPECT_NEAR(z[0], -1.349, 1e-9);
  EXPECT_NEAR(z[1], -0.6745, 1e-9);
  EXPECT_NEAR(z[2], 0.0, 1e-12);
  EXPECT_NEAR(z[4], 65.4265, 1e-9);
  EXPECT_DOUBLE_EQ(median_absolute_deviation({1, 2, 3, 4, 100}), 1.0);
}

TEST(RobustZ, MeanAbsoluteDeviationWhenMadIsZero) {
  // median 5, MAD 0; MeanAD = 4/5 = 0.8: z(9) = 4 / (1.253314 * 0.8) = 3.98942.
  const auto z = robust_z_scores({5, 5, 5, 5, 9});
  EXPECT_NEAR(z[4], 4.0 / (1.253314 * 0.8), 1e-9);
  EXPECT_EQ(z[0], 0.0);
  for (double v : robust_z_scores({7, 7, 7})) EXPECT_EQ(v, 0.0);
  EXPECT_TRUE(robust_z_scores({}).empty());
}

FleetMember member(const std::string& node, double throughput, double p95, const std::string& driver = "580.1") {
  FleetMember m;
  m.node = node;
  FleetDevice d;
  d.kind = DeviceKind::gpu;
  d.model = "NVIDIA H200";
  d.index = 0;
  d.uuid = "GPU-" + node;
  d.driver = driver;
  d.mig = "off";
  m.device = d;
  FleetTenantFigure f;
  f.scenario = "gemm+copy";
  f.mode = "timeslice";
  f.tenant = "victim";
  f.workload = "gemm";
  f.verdict = Verdict::pass;
  f.cutoff = 0.4;
  f.exclusive_throughput = throughput;
  f.throughput_unit = "FLOP/s";
  Estimate e{};
  e.value = p95;
  e.ci_low = p95 - 0.02;
  e.ci_high = p95 + 0.02;
  f.p95_slowdown = e;
  m.tenants.push_back(f);
  return m;
}

FleetResult fleet_of(std::vector<FleetMember> members) {
  FleetResult f;
  f.members = std::move(members);
  judge_fleet(f);
  return f;
}

TEST(Stragglers, ASlowGpuIsNamedWithItsEvidence) {
  // Throughputs median 99.75, MAD 0.75: 70 has z = 0.6745 (70 - 99.75) / 0.75 = -26.7552.
  FleetResult f = fleet_of({member("a", 100, 0.1), member("b", 101, 0.1), member("c", 99, 0.1), member("d", 100.5, 0.1),
                            member("e", 99.5, 0.1), member("f", 70, 0.1)});
  ASSERT_EQ(f.stragglers.size(), 1u);
  const FleetStraggler& s = f.stragglers[0];
  EXPECT_EQ(s.node, "f");
  EXPECT_EQ(s.metric, FleetMetric::exclusive_throughput);
  EXPECT_TRUE(s.worse);
  EXPECT_NEAR(s.z, -26.755166666666667, 1e-9);
  EXPECT_DOUBLE_EQ(s.group_median, 99.75);
  EXPECT_DOUBLE_EQ(s.group_mad, 0.75);
  EXPECT_EQ(s.group_values, 6);
  EXPECT_NE(s.evidence.find("70 FLOP/s"), std::string::npos) << s.evidence;
  EXPECT_EQ(f.members[5].status, MemberStatus::straggler);
  EXPECT_EQ(f.summary.stragglers, 1);
  EXPECT_EQ(f.summary.exit_code, 1);
  ASSERT_FALSE(f.worst.empty());
  EXPECT_EQ(f.worst[0].node, "f");
  EXPECT_NEAR(f.worst[0].worst_z, 26.755166666666667, 1e-9);
}

TEST(Stragglers, AFastGpuIsNamedButDoesNotCount) {
  FleetResult f = fleet_of({member("a", 100, 0.1), member("b", 101, 0.1), member("c", 99, 0.1), member("d", 100.5, 0.1),
                            member("e", 99.5, 0.1), member("f", 130, 0.1)});
  ASSERT_EQ(f.stragglers.size(), 1u);
  EXPECT_FALSE(f.stragglers[0].worse);
  EXPECT_EQ(f.members[5].status, MemberStatus::ok);
  EXPECT_EQ(f.summary.exit_code, 0);
}

TEST(Stragglers, SlowdownAboveTheGroupCountsAndLessDoesNot) {
  // P95 slowdowns {0.10, 0.11, 0.09, 0.10, 0.12, 0.60}: median 0.105, MAD 0.01; 0.60 has z = +33.4.
  FleetResult f = fleet_of({member("a", 100, 0.10), member("b", 100, 0.11), member("c", 100, 0.09),
                            member("d", 100, 0.10), member("e", 100, 0.12), member("f", 100, 0.60)});
  ASSERT_EQ(f.stragglers.size(), 1u);
  EXPECT_EQ(f.stragglers[0].metric, FleetMetric::p95_slowdown);
  EXPECT_TRUE(f.stragglers[0].worse);
  EXPECT_NEAR(f.stragglers[0].z, 0.6745 * (0.60 - 0.105) / 0.01, 1e-6);
}

TEST(Stragglers, ASmallDifferenceIsNotAStragglerEvenAtALargeZ) {
  // MAD 0, MeanAD 0.5: z(103) = 3 / (1.253314 * 0.5) = 4.79 > 3.5, but 3% is under the 5% that matters.
  FleetResult f = fleet_of({member("a", 100, 0.1), member("b", 100, 0.1), member("c", 100, 0.1), member("d", 100, 0.1),
                            member("e", 100, 0.1), member("f", 97, 0.1)});
  EXPECT_TRUE(f.stragglers.empty());
  EXPECT_EQ(f.summary.exit_code, 0);
}

// Issue 37 item 13 (surviving mutants "size < 5" -> "<= 5" and k 3.5 -> 3.0): a group of exactly five is
// judged, one of four is not; and |z| = 3.37 with 7.5% off is inside the 3.5 bound.
TEST(Stragglers, AGroupOfExactlyFiveIsJudgedAndFourIsNot) {
  FleetResult five = fleet_of({member("a", 100, 0.1), member("b", 101, 0.1), member("c", 99, 0.1),
                               member("d", 100.5, 0.1), member("e", 70, 0.1)});
  ASSERT_EQ(five.stragglers.size(), 1u);
  EXPECT_EQ(five.stragglers[0].node, "e");
  FleetResult four = fleet_of({member("a", 100, 0.1), member("b", 101, 0.1), member("c", 99, 0.1), member("e", 70, 0.1)});
  EXPECT_TRUE(four.stragglers.empty());
}

TEST(Stragglers, AModifiedZOfThreePointFourIsInsideTheBound) {
  // {92, 98, 99, 100, 101, 102}: median 99.5, MAD 1.5, z(92) = 0.6745 x 7.5 / 1.5 = -3.37; 7.5% off.
  FleetResult f = fleet_of({member("a", 98, 0.1), member("b", 99, 0.1), member("c", 100, 0.1), member("d", 101, 0.1),
                            member("e", 102, 0.1), member("f", 92, 0.1)});
  EXPECT_TRUE(f.stragglers.empty());
  EXPECT_DOUBLE_EQ(FleetOptions{}.k, 3.5);
}

TEST(Stragglers, OnlyMembersOfOneGroupAreCompared) {
  // Five on driver A at 100, five on driver B at 70: two groups, each uniform, no straggler; and a
  // group of four is too small to judge even with an outlier.
  std::vector<FleetMember> ms;
  for (int i = 0; i < 5; ++i) ms.push_back(member("a" + std::to_string(i), 100, 0.1, "A"));
  for (int i = 0; i < 5; ++i) ms.push_back(member("b" + std::to_string(i), 70, 0.1, "B"));
  for (int i = 0; i < 3; ++i) ms.push_back(member("c" + std::to_string(i), 100, 0.1, "C"));
  ms.push_back(member("c3", 10, 0.1, "C"));
  FleetResult f = fleet_of(ms);
  EXPECT_TRUE(f.stragglers.empty());
  ASSERT_EQ(f.groups.size(), 3u);
  EXPECT_TRUE(f.groups[0].judged);
  EXPECT_FALSE(f.groups[2].judged);
  EXPECT_EQ(f.groups[0].key, "NVIDIA H200 | driver A | MIG off");
}

TEST(FleetExitCode, MissingFailsInconclusiveIsFiveOkIsZero) {
  EXPECT_EQ(fleet_of({member("a", 1, 0)}).summary.exit_code, 0);
  FleetMember inconclusive = member("b", 1, 0);
  inconclusive.status = MemberStatus::inconclusive;
  EXPECT_EQ(fleet_of({member("a", 1, 0), inconclusive}).summary.exit_code, 5);
  FleetMember missing;
  missing.node = "c";
  missing.status = MemberStatus::missing;
  const FleetResult f = fleet_of({member("a", 1, 0), inconclusive, missing});
  EXPECT_EQ(f.summary.exit_code, 1);
  EXPECT_EQ(f.summary.missing, 1);
  EXPECT_EQ(f.summary.failed, 1);
  EXPECT_EQ(f.summary.inconclusive, 1);
}

TEST(Expectations, MissingNodesAndTasksAreAddedAndStrangersMarked) {
  std::vector<FleetMember> ms = {member("a", 1, 0), member("x", 1, 0)};
  ms[0].task_index = 0;
  ms[1].task_index = 2;
  FleetSummary s;
  add_expectations(ms, {"a", "b", "c"}, 3, s);
  EXPECT_EQ(s.missing_nodes, (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(s.missing_tasks, (std::vector<int>{1}));
  ASSERT_EQ(ms.size(), 5u);
  EXPECT_TRUE(ms[0].expected);
  EXPECT_FALSE(ms[1].expected);
  EXPECT_EQ(ms[2].status, MemberStatus::missing);
  EXPECT_EQ(member_name(ms[4]), "task 1");
}

// Issue 37 item 13 (a surviving mutant: dropping "!nodes.empty() &&"): without --expect-nodes every member
// stays expected; none is a stranger.
TEST(Expectations, WithoutExpectedNodesEveryMemberStaysExpected) {
  std::vector<FleetMember> ms = {member("a", 1, 0), member("x", 1, 0)};
  FleetSummary s;
  add_expectations(ms, {}, 0, s);
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_TRUE(ms[0].expected);
  EXPECT_TRUE(ms[1].expected);
  EXPECT_TRUE(s.missing_nodes.empty());
}

struct Folder {
  fs::path root = fs::temp_directory_path() / ("ib_fleet_test." + std::to_string(::getpid()));
  Folder() { fs::create_directories(root); }
  ~Folder() { fs::remove_all(root); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  }
};

std::string task_json(const std::string& node, int index, const std::string& exit_code) {
  return R"({"task_schema": 1, "scheduler": "slurm", "node": ")" + node + R"(", "job_id": "7", "array_job_id": "6", )" +
         R"("task_index": )" + std::to_string(index) + R"(, "results_dir": "results", "exit_code": )" + exit_code +
         R"(, "started": "2026-12-02T00:00:00Z", "ended": null})";
}

TEST(ReadMembers, TaskFoldersSayWhatBecameOfEachTask) {
  Folder dir;
  dir.write("tasks/n1.0/task.json", task_json("n1", 0, "null"));  // killed before it ended
  dir.write("tasks/n2.1/task.json", task_json("n2", 1, "3"));     // cannot run: no results, and that is why
  dir.write("tasks/n3.2/task.json", task_json("n3", 2, "0"));     // exited 0 but left nothing
  dir.write("tasks/n4.3/task.json", task_json("n4", 3, "1"));
  dir.write("tasks/n4.3/results/results.json", "{\"schema_version\": \"2.4\", \"meta\": {");  // truncated
  dir.write("tasks/n5.4/task.json", "{not json");
  Results ok = test::sample_results();
  ok.meta.host = "n6";
  dir.write("loose/results.json", results_to_json(ok, true).dump());
  const auto ms = read_members({dir.root.string()});
  ASSERT_EQ(ms.size(), 6u);
  const auto status_of = [&](const std::string& node) {
    for (const auto& m : ms)
      if (m.node == node) return m.status;
    ADD_FAILURE() << "no member " << node;
    return MemberStatus::ok;
  };
  EXPECT_EQ(status_of("n1"), MemberStatus::unfinished);
  EXPECT_EQ(status_of("n2"), MemberStatus::cannot_run);
  EXPECT_EQ(status_of("n3"), MemberStatus::no_result);
  EXPECT_EQ(status_of("n4"), MemberStatus::unreadable);
  EXPECT_EQ(status_of("n5.4"), MemberStatus::unreadable);  // its node is unknown: the folder names it
  EXPECT_EQ(status_of("n6"), MemberStatus::workload_error);  // sample_results has an errored tenant (exit 4)
  EXPECT_THROW(read_members({(dir.root / "nosuch").string()}), InputError);
}

TEST(ExpectedNodes, CommentsAndBlanksSkippedBadNamesRefusedWithTheLine) {
  Folder dir;
  dir.write("nodes.txt", "# GPU nodes\n\n  n1  \nn2\nn1\n");
  EXPECT_EQ(read_expected_nodes((dir.root / "nodes.txt").string()), (std::vector<std::string>{"n1", "n2"}));
  dir.write("bad.txt", "n1\nn 2\n");
  try {
    read_expected_nodes((dir.root / "bad.txt").string());
    FAIL() << "a name with a blank was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.txt:2:"), std::string::npos) << e.what();
  }
}

TEST(FleetWriters, PrometheusJoinsWithDcgmAndJunitHasASuitePerMember) {
  std::vector<FleetMember> ms = {member("a", 100, 0.1), member("b", 100, 0.1), member("c", 100, 0.1),
                                 member("d", 100, 0.1), member("e", 100, 0.1), member("f", 60, 0.1)};
  FleetMember missing;
  missing.node = "g";
  missing.status = MemberStatus::missing;
  missing.detail = "expected";
  ms.push_back(missing);
  const FleetResult f = fleet_of(ms);
  const std::string prom = fleet_prometheus_text(f);
  EXPECT_NE(prom.find(R"(interference_bench_fleet_exclusive_throughput{Hostname="f",gpu="0",UUID="GPU-f",)"
                      R"(modelName="NVIDIA H200",DCGM_FI_DRIVER_VERSION="580.1",member="f")"),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find(R"(status="missing"} 1)"), std::string::npos);
  const std::string xml = fleet_junit_xml(f);
  EXPECT_NE(xml.find(R"(<testsuite name="g")"), std::string::npos);
  EXPECT_NE(xml.find("straggler: exclusive_throughput of victim"), std::string::npos) << xml;
  const auto j = fleet_to_json(f);
  EXPECT_EQ(j["summary"]["exit_code"], 1);
  EXPECT_EQ(j["stragglers"][0]["member"], "f");
  EXPECT_NE(fleet_html(f).find("<svg"), std::string::npos);
}

}  // namespace
}  // namespace ib
