// Scenario parsing beyond the malformed-file set of tests/e2e/test_malformed.py: defaults,
// overrides, placement parsing and suites.
#include "harness/scenario/scenario.h"
#include "kernels/host/host_workloads.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <unistd.h>

namespace ib {
namespace {

using nlohmann::json;

struct ScenarioTest : ::testing::Test {
  Registry registry;
  ValidationContext ctx;
  void SetUp() override {
    register_host_workloads(registry);
    ctx = {&registry, Backend::host, {0, 1}};
  }
};

json minimal() {
  return json::parse(R"({"name": "s", "mode": "timeslice", "tenants": [{"workload": "host-compute"}]})");
}

TEST_F(ScenarioTest, DefaultsAreFilledIn) {
  const Scenario s = parse_scenario(minimal(), "f.json", {}, ctx);
  EXPECT_EQ(s.name, "s");
  EXPECT_EQ(s.mode, Mode::timeslice);
  EXPECT_EQ(s.device, 0);
  EXPECT_DOUBLE_EQ(s.warmup_s, 2.0);
  EXPECT_DOUBLE_EQ(s.duration_s, 10.0);
  EXPECT_EQ(s.repetitions, 1);
  EXPECT_DOUBLE_EQ(s.cutoff, 0.40);
  ASSERT_EQ(s.tenants.size(), 1u);
  EXPECT_EQ(s.tenants[0].name, "host-compute#0");
  EXPECT_EQ(s.tenants[0].params, json::parse(R"({"n": 256, "reps": 1})"));
  EXPECT_TRUE(s.tenants[0].placement.cpus.empty());
}

TEST_F(ScenarioTest, CommandLineOverridesWin) {
  json d = minimal();
  d["duration_s"] = 30;
  d["cutoff"] = 0.1;
  ScenarioOverrides ov;
  ov.mode = Mode::exclusive;
  ov.duration_s = 3.0;
  ov.warmup_s = 0.5;
  ov.repetitions = 4;
  ov.cutoff = 0.25;
  const Scenario s = parse_scenario(d, "f.json", ov, ctx);
  EXPECT_EQ(s.mode, Mode::exclusive);
  EXPECT_DOUBLE_EQ(s.duration_s, 3.0);
  EXPECT_DOUBLE_EQ(s.warmup_s, 0.5);
  EXPECT_EQ(s.repetitions, 4);
  EXPECT_DOUBLE_EQ(s.cutoff, 0.25);
}

TEST_F(ScenarioTest, ModeOverrideIsCheckedAgainstPlacements) {
  json d = minimal();
  d["mode"] = "mps";
  d["tenants"][0]["placement"] = {{"mps_active_thread_percentage", 50}, {"mps_pinned_mem_limit", "8G"}};
  const Scenario s = parse_scenario(d, "f.json", {}, ctx);
  EXPECT_EQ(s.tenants[0].placement.mps_active_thread_percentage, 50);
  EXPECT_EQ(s.tenants[0].placement.mps_pinned_mem_limit, "8G");
  ScenarioOverrides ov;
  ov.mode = Mode::timeslice;
  try {
    parse_scenario(d, "f.json", ov, ctx);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "f.json: tenants[0].placement.mps_active_thread_percentage: only valid with mode mps (mode is timeslice)");
  }
}

// Issue 35: a worker (a collective's rank) may have a GPU of its own; not where mig or streams decide.
TEST_F(ScenarioTest, APlacementsDeviceIsParsedAndRefusedInMigAndStreams) {
  json d = minimal();
  d["tenants"][0]["placement"] = {{"device", 3}};
  EXPECT_EQ(parse_scenario(d, "f.json", {}, ctx).tenants[0].placement.device, 3);
  EXPECT_FALSE(parse_scenario(minimal(), "f.json", {}, ctx).tenants[0].placement.device.has_value());
  for (const char* mode : {"mig", "streams"}) {
    d["mode"] = mode;
    try {
      parse_scenario(d, "f.json", {}, ctx);
      ADD_FAILURE() << "accepted a device in mode " << mode;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("f.json: tenants[0].placement.device: not valid with mode " + std::string(mode)),
                std::string::npos) << e.what();
    }
  }
  d["mode"] = "timeslice";
  d["tenants"][0]["placement"] = {{"device", 64}};
  EXPECT_THROW(parse_scenario(d, "f.json", {}, ctx), InputError);
}

TEST_F(ScenarioTest, PlacementCpusAndMigFieldsAreParsed) {
  json d = minimal();
  d["tenants"][0]["placement"] = {{"cpus", {1, 0}}};
  EXPECT_EQ(parse_scenario(d, "f.json", {}, ctx).tenants[0].placement.cpus, (std::vector<int>{1, 0}));
  d["mode"] = "mig";
  d["tenants"][0]["placement"] = {{"mig_profile", "3g.71gb"}};
  EXPECT_EQ(parse_scenario(d, "f.json", {}, ctx).tenants[0].placement.mig_profile, "3g.71gb");
  d["tenants"][0]["placement"] = {{"mig_instance", 2}};
  EXPECT_EQ(parse_scenario(d, "f.json", {}, ctx).tenants[0].placement.mig_instance, 2);
}

TEST_F(ScenarioTest, BackendMismatchNamesTheWorkload) {
  Registry r;
  register_host_workloads(r);
  r.add({"fake-gpu", Backend::cuda, "", {}, nullptr, nullptr});
  ValidationContext c{&r, Backend::host, {0}};
  json d = minimal();
  d["tenants"][0]["workload"] = "fake-gpu";
  try {
    parse_scenario(d, "f.json", {}, c);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "f.json: tenants[0].workload: \"fake-gpu\" is a cuda workload but the backend is host");
  }
}

TEST_F(ScenarioTest, SuitesResolveScenarioFilesPerBackend) {
  char tmpl[] = "/tmp/ib-suite-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  ASSERT_EQ(system(("mkdir -p " + dir + "/suites").c_str()), 0);
  std::ofstream(dir + "/suites/mine.json")
      << R"({"name": "mine", "description": "d", "scenarios": {"host": ["a.json", "b.json"], "cuda": ["c.json"]}})";
  const SuiteInfo s = load_suite(dir, "mine");
  EXPECT_EQ(s.name, "mine");
  ASSERT_EQ(s.scenarios_by_backend.size(), 2u);
  for (const auto& [backend, files] : s.scenarios_by_backend) {
    if (backend == "host") EXPECT_EQ(files, (std::vector<std::string>{dir + "/a.json", dir + "/b.json"}));
    if (backend == "cuda") EXPECT_EQ(files, (std::vector<std::string>{dir + "/c.json"}));
  }
  ASSERT_EQ(list_suites(dir).size(), 1u);
  EXPECT_THROW(load_suite(dir, "other"), InputError);
  EXPECT_THROW(load_suite(dir, "../etc"), InputError);
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

TEST(ModeNames, RoundTrip) {
  for (const auto& n : mode_names()) EXPECT_EQ(mode_name(*parse_mode(n)), n);
  EXPECT_FALSE(parse_mode("shared"));
}

}  // namespace
}  // namespace ib

#include "harness/exec/cuda_module.h"

namespace ib {
namespace {

// Every suite and scenario shipped in scenarios/ loads and validates for its backend, and the
// suites cover the pairs the modes issue lists.
TEST(ShippedScenarios, EverySuiteValidates) {
  Registry registry;
  register_host_workloads(registry);
  register_cuda_workloads(registry);
  const bool have_cuda = registry.find("gemm") != nullptr;
  const std::string dir = find_scenarios_dir();
  const auto suites = list_suites(dir);
  std::vector<std::string> names;
  for (const auto& suite : suites) {
    names.push_back(suite.name);
    for (const auto& [backend, files] : suite.scenarios_by_backend) {
      if (backend == "cuda" && !have_cuda) continue;
      const ValidationContext ctx{&registry, backend == "cuda" ? Backend::cuda : Backend::host, {}};
      EXPECT_FALSE(files.empty()) << suite.name << " " << backend;
      for (const auto& f : files) EXPECT_NO_THROW(load_scenario(f, {}, ctx)) << f;
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"default", "nightly", "quick"}));
  EXPECT_EQ(load_suite(dir, "nightly").repetitions, 3);
  if (!have_cuda) return;
  std::set<std::string> pairs;
  for (const auto& [backend, files] : load_suite(dir, "default").scenarios_by_backend)
    if (backend == "cuda")
      for (const auto& f : files) {
        const Scenario s = load_scenario(f, {}, {&registry, Backend::cuda, {}});
        std::string key;
        for (const auto& t : s.tenants) key += (key.empty() ? "" : "+") + t.workload;
        pairs.insert(key);
      }
  for (const char* want : {"gemm+gemm", "copy+copy", "gemm+copy", "latency+gemm", "latency+copy", "h2d+copy",
                           "train-step+serve", "latency+gemm+copy+h2d"})
    EXPECT_TRUE(pairs.count(want)) << want;
}

}  // namespace
}  // namespace ib
