// The typed mode configuration (results.h ModeConfig): what mode_setup read about the device becomes
// ModeDeviceFacts, and the JSON writer gives runs[].mode_config exactly the keys it always had.
#include "harness/modes/plan.h"
#include "reports/json/results_json.h"

#include <gtest/gtest.h>

namespace ib {
namespace {

using nlohmann::json;

json device_words() {
  return {{"nvml", "/usr/lib/libnvidia-ml.so.1"},
          {"name", "NVIDIA H200"},
          {"uuid", "GPU-1"},
          {"compute_mode", "Default"},
          {"compute_policy", "timeslice: default"},
          {"mig_mode", {{"current", true}, {"pending", false}}},
          {"mig_created", {{{"profile", "1g.18gb"}, {"gpu_instance_id", 7}, {"compute_instance_id", 0}}}},
          {"measures", "one MIG instance, not a whole GPU"}};
}

json mode_config_of(const ModeConfig& c) {
  Results r;
  RunResult run;
  run.mode_config = c;
  r.runs.push_back(run);
  return json::parse(results_to_json(r, false).at("runs").at(0).at("mode_config").dump());
}

TEST(ModeConfig, DeviceFactsKeepEveryWordModeSetupRecorded) {
  json words = device_words();
  words["a_fact_without_a_field"] = {1, 2};
  const ModeDeviceFacts f = mode_device_facts(words);
  EXPECT_EQ(f.name, "NVIDIA H200");
  ASSERT_TRUE(f.mig_mode);
  EXPECT_TRUE(f.mig_mode->current);
  ASSERT_TRUE(f.mig_created);
  EXPECT_EQ(f.mig_created->at(0).gpu_instance_id, 7u);
  EXPECT_EQ(f.unmapped, (json{{"a_fact_without_a_field", {1, 2}}}));
  ModeConfig c;
  c.mode = "mig";
  c.device = f;
  EXPECT_EQ(mode_config_of(c), (json{{"mode", "mig"}, {"device", words}}));
  EXPECT_EQ(mode_config_of(ModeConfig{"exclusive", mode_device_facts(json()), {}, {}, {}}),
            (json{{"mode", "exclusive"}, {"device", json::object()}}));
}

TEST(ModeConfig, TheWriterGivesTheKeysOfEachMode) {
  ModeConfig c;
  c.mode = "mps";
  c.device = mode_device_facts(json{{"nvml", "unavailable: no library"}});
  c.mps = MpsDaemonInfo{"/tmp/ib-run-x/mps1", "/out/logs/mps1", "private", "every client"};
  c.exclusive_source = "one MIG instance";
  MigInstance m;
  m.index = 1;
  m.gpu_instance_id = 2;
  m.compute_instance_id = 0;
  m.profile = "3g.71gb";
  m.name = "NVIDIA H200 MIG 3g.71gb";  // not recorded
  m.uuid = "MIG-a";
  m.sm_count = 60;
  m.memory_bytes = 1ull << 36;
  c.mig = MigPlacementInfo{{m}, {{"t", "MIG-a"}}, {}};
  const json expected = {
      {"mode", "mps"},
      {"device", {{"nvml", "unavailable: no library"}}},
      {"mps",
       {{"pipe_directory", "/tmp/ib-run-x/mps1"}, {"log_directory", "/out/logs/mps1"}, {"daemon", "private"},
        {"fault_propagation", "every client"}}},
      {"mig",
       {{"instances",
         {{{"index", 1}, {"gpu_instance_id", 2}, {"compute_instance_id", 0}, {"profile", "3g.71gb"}, {"uuid", "MIG-a"},
           {"sm_count", 60}, {"memory_bytes", 1ull << 36}}}},
        {"assignment", {{"t", "MIG-a"}}}}},
      {"exclusive_source", "one MIG instance"}};
  EXPECT_EQ(mode_config_of(c), expected);
  // A run never set up (a waived mode) has its mode only.
  EXPECT_EQ(mode_config_of(ModeConfig{"mig", {}, {}, {}, {}}), (json{{"mode", "mig"}}));
}

TEST(ModeConfig, KeysAreWrittenInAlphabeticalOrderAsBefore) {
  ModeConfig c;
  c.mode = "mig";
  c.device = mode_device_facts(device_words());
  c.exclusive_source = "x";
  Results r;
  RunResult run;
  run.mode_config = c;
  r.runs.push_back(run);
  const auto j = results_to_json(r, false)["runs"][0]["mode_config"];
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"device", "exclusive_source", "mode"}));
  std::vector<std::string> device_keys;
  for (const auto& [k, v] : j["device"].items()) device_keys.push_back(k);
  EXPECT_TRUE(std::is_sorted(device_keys.begin(), device_keys.end()));
}

}  // namespace
}  // namespace ib
