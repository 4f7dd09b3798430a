// ib::Nvml against the project's fake NVML (tests/fakes/fake_nvml.cpp), loaded through $INTERFERENCE_BENCH_NVML.
#include "harness/nvml/nvml.h"

#include "harness/core/errors.h"
#include "harness/nvml/nvml_abi.h"
#include "harness/modes/journal.h"
#include "harness/modes/mig_layouts.h"
#include "harness/modes/mig_instances.h"
#include "harness/run/foreign_load.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#ifndef FAKE_NVML_PATH
#error "FAKE_NVML_PATH must name libfake_nvml.so"
#endif

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// An H200 in MIG mode (instances listed out of order, with holes in the MIG handle indices), an H200 with
// MIG disabled but pending, and a GPU without MIG in EXCLUSIVE_PROCESS compute mode.
json machine() {
  json profiles = json::array({
      {{"name", "1g.18gb"}, {"id", 19}, {"slices", 1}, {"sm", 16}, {"memory_mb", 16384}, {"capacity", 7}},
      {{"name", "1g.35gb"}, {"id", 15}, {"slices", 1}, {"sm", 16}, {"memory_mb", 32768}, {"capacity", 4},
       {"index", 9}},
      {{"name", "2g.35gb"}, {"id", 14}, {"slices", 2}, {"sm", 32}, {"memory_mb", 32768}, {"capacity", 3}},
      {{"name", "3g.71gb"}, {"id", 9}, {"slices", 3}, {"sm", 60}, {"memory_mb", 71424}, {"capacity", 2}},
      {{"name", "7g.141gb"}, {"id", 0}, {"slices", 7}, {"sm", 132}, {"memory_mb", 143360}, {"capacity", 1}},
  });
  json mig_gpu = {
      {"name", "NVIDIA H200"},
      {"uuid", "GPU-00000000-1111-2222-3333-444444444444"},
      {"compute_mode", 0},
      {"mig", {{"supported", true}, {"current", 1}, {"pending", 1}}},
      {"profiles", profiles},
      {"instances", json::array({
           {{"gi", 9}, {"ci", 0}, {"profile", "1g.18gb"}, {"uuid", "MIG-99999999-0000-0000-0000-000000000000"},
            {"sm", 16}, {"memory_mb", 16384}, {"slot", 0}},
           {{"gi", 3}, {"ci", 1}, {"profile", "1c.2g.35gb"}, {"uuid", "MIG-33333333-1111-0000-0000-000000000000"},
            {"sm", 16}, {"memory_mb", 32768}, {"slot", 3}},
           {{"gi", 3}, {"ci", 0}, {"profile", "1c.2g.35gb"}, {"uuid", "MIG-33333333-0000-0000-0000-000000000000"},
            {"sm", 16}, {"memory_mb", 32768}, {"slot", 5}},
           {{"gi", 1}, {"ci", 0}, {"profile", "3g.71gb"}, {"uuid", "MIG-11111111-0000-0000-0000-000000000000"},
            {"sm", 60}, {"memory_mb", 71424}, {"slot", 6}},
       })},
  };
  json disabled_gpu = {
      {"name", "NVIDIA H200"},
      {"uuid", "GPU-dddddddd-0000-0000-0000-000000000001"},
      {"mig", {{"supported", true}, {"current", 0}, {"pending", 1}}},
      {"profiles", profiles},
  };
  json plain_gpu = {
      {"name", "NVIDIA L40S"},
      {"uuid", "GPU-eeeeeeee-0000-0000-0000-000000000002"},
      {"compute_mode", 3},
  };
  return {{"init", "ok"}, {"devices", json::array({mig_gpu, disabled_gpu, plain_gpu})}};
}

// The MIG GPU with no instances and a 4g.71gb profile (its only placement 0-3) beside the others.
json with_4g() {
  json config = machine();
  config["devices"][0]["instances"] = json::array();
  config["devices"][0]["profiles"].push_back(
      {{"name", "4g.71gb"}, {"id", 5}, {"slices", 4}, {"sm", 64}, {"memory_mb", 71424}, {"capacity", 1}});
  return config;
}

// The MIG GPU with no instances, where creating a 2g.35gb fails as a race lost to another process would.
json with_second_create_failing() {
  json config = machine();
  config["devices"][0]["instances"] = json::array();
  for (json& p : config["devices"][0]["profiles"])
    if (p["name"] == "2g.35gb") p["create_fails"] = "INSUFFICIENT_RESOURCES";
  return config;
}

class NvmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ib-nvml-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    config_ = dir_ / "config.json";
    state_ = dir_ / "state.jsonl";
    setenv("INTERFERENCE_BENCH_NVML", FAKE_NVML_PATH, 1);
    setenv("FAKE_NVML_CONFIG", config_.c_str(), 1);
    setenv("FAKE_NVML_STATE", state_.c_str(), 1);
  }

  void TearDown() override {
    unsetenv("INTERFERENCE_BENCH_NVML");
    unsetenv("FAKE_NVML_CONFIG");
    unsetenv("FAKE_NVML_STATE");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void write_config(const json& config) {
    std::ofstream out(config_);
    out << config.dump(2);
  }

  std::vector<json> state_ops() {
    std::vector<json> ops;
    std::ifstream in(state_);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) ops.push_back(json::parse(line));
    return ops;
  }

  std::string load_error() {
    try {
      ib::Nvml::load();
    } catch (const ib::NvmlError& e) {
      return e.what();
    }
    return "(no error)";
  }

  fs::path dir_, config_, state_;
};

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ib::NvmlError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(NvmlTest, DevicesNamesAndUuids) {
  write_config(machine());
  auto nvml = ib::Nvml::load();
  EXPECT_EQ(nvml->library_path(), FAKE_NVML_PATH);
  ASSERT_EQ(nvml->device_count(), 3u);
  EXPECT_EQ(nvml->device_name(0), "NVIDIA H200");
  EXPECT_EQ(nvml->device_uuid(0), "GPU-00000000-1111-2222-3333-444444444444");
  EXPECT_EQ(nvml->device_name(2), "NVIDIA L40S");
  EXPECT_EQ(nvml->device_uuid(2), "GPU-eeeeeeee-0000-0000-0000-000000000002");
  EXPECT_NE(error_of([&] { nvml->device_name(7); }).find("nvmlDeviceGetHandleByIndex_v2: Invalid Argument (2)"),
            std::string::npos);
}

TEST_F(NvmlTest, MigInstancesAreSortedByGpuThenComputeInstance) {
  write_config(machine());
  auto nvml = ib::Nvml::load();
  auto mode = nvml->mig_mode(0);
  ASSERT_TRUE(mode.has_value());
  EXPECT_TRUE(mode->current);
  EXPECT_TRUE(mode->pending);

  auto mig = nvml->mig_instances(0);
  ASSERT_EQ(mig.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(mig[i].index, i);
  EXPECT_EQ(mig[0].gpu_instance_id, 1u);
  EXPECT_EQ(mig[0].compute_instance_id, 0u);
  EXPECT_EQ(mig[0].profile, "3g.71gb");
  EXPECT_EQ(mig[0].name, "NVIDIA H200 MIG 3g.71gb");
  EXPECT_EQ(mig[0].uuid, "MIG-11111111-0000-0000-0000-000000000000");
  EXPECT_EQ(mig[0].sm_count, 60u);
  EXPECT_EQ(mig[0].memory_bytes, 71424ull << 20);

  EXPECT_EQ(mig[1].gpu_instance_id, 3u);
  EXPECT_EQ(mig[1].compute_instance_id, 0u);
  EXPECT_EQ(mig[1].uuid, "MIG-33333333-0000-0000-0000-000000000000");
  EXPECT_EQ(mig[1].profile, "1c.2g.35gb");
  EXPECT_EQ(mig[2].gpu_instance_id, 3u);
  EXPECT_EQ(mig[2].compute_instance_id, 1u);
  EXPECT_EQ(mig[2].uuid, "MIG-33333333-1111-0000-0000-000000000000");
  EXPECT_EQ(mig[2].memory_bytes, 32768ull << 20);

  EXPECT_EQ(mig[3].gpu_instance_id, 9u);
  EXPECT_EQ(mig[3].profile, "1g.18gb");
  EXPECT_EQ(mig[3].uuid, "MIG-99999999-0000-0000-0000-000000000000");
  EXPECT_EQ(mig[3].sm_count, 16u);
  EXPECT_EQ(mig[3].memory_bytes, 16384ull << 20);
}

TEST_F(NvmlTest, MigDisabledReportsCurrentAndPending) {
  write_config(machine());
  auto nvml = ib::Nvml::load();
  auto mode = nvml->mig_mode(1);
  ASSERT_TRUE(mode.has_value());
  EXPECT_FALSE(mode->current);
  EXPECT_TRUE(mode->pending);
  EXPECT_TRUE(nvml->mig_instances(1).empty());
  EXPECT_NE(error_of([&] { nvml->create_mig_instance(1, "1g.18gb"); }).find("MIG mode is not enabled"),
            std::string::npos);
}

TEST_F(NvmlTest, MigUnsupportedIsNullopt) {
  write_config(machine());
  auto nvml = ib::Nvml::load();
  EXPECT_FALSE(nvml->mig_mode(2).has_value());
  EXPECT_TRUE(nvml->mig_instances(2).empty());
  EXPECT_NE(error_of([&] { nvml->create_mig_instance(2, "1g.18gb"); }).find("does not support MIG"),
            std::string::npos);
}

TEST_F(NvmlTest, ComputeModes) {
  json config = {{"devices", json::array({{{"compute_mode", 0}},
                                          {{"compute_mode", 1}},
                                          {{"compute_mode", 2}},
                                          {{"compute_mode", 3}},
                                          {{"compute_mode", 42}}})}};
  write_config(config);
  auto nvml = ib::Nvml::load();
  EXPECT_EQ(nvml->compute_mode(0), ib::ComputeMode::default_mode);
  EXPECT_EQ(nvml->compute_mode(1), ib::ComputeMode::exclusive_thread);
  EXPECT_EQ(nvml->compute_mode(2), ib::ComputeMode::prohibited);
  EXPECT_EQ(nvml->compute_mode(3), ib::ComputeMode::exclusive_process);
  EXPECT_EQ(nvml->compute_mode(4), ib::ComputeMode::unknown);
  EXPECT_STREQ(ib::compute_mode_name(ib::ComputeMode::default_mode), "Default");
  EXPECT_STREQ(ib::compute_mode_name(ib::ComputeMode::exclusive_process), "Exclusive_Process");
  EXPECT_STREQ(ib::compute_mode_name(ib::ComputeMode::prohibited), "Prohibited");
  EXPECT_STREQ(ib::compute_mode_name(ib::ComputeMode::unknown), "Unknown");
}

TEST_F(NvmlTest, InitFailureNamesTheCallAndReason) {
  json config = machine();
  config["init"] = "NVML_ERROR_DRIVER_NOT_LOADED";
  write_config(config);
  EXPECT_EQ(load_error(), "nvmlInit_v2: Driver Not Loaded (9)");
  config["init"] = 4;
  write_config(config);
  EXPECT_EQ(load_error(), "nvmlInit_v2: Insufficient Permissions (4)");
}

TEST_F(NvmlTest, MissingLibrary) {
  std::string missing = (dir_ / "libnvidia-ml-missing.so.1").string();
  setenv("INTERFERENCE_BENCH_NVML", missing.c_str(), 1);
  std::string err = load_error();
  EXPECT_EQ(err.rfind("NVML not available: cannot load " + missing + " (", 0), 0u) << err;
  EXPECT_NE(err.find("No such file"), std::string::npos) << err;
  EXPECT_EQ(err.back(), ')');
}

// --mig-create's guard (no root needed against the fake): it destroys exactly what it created,
// newest first, when it goes out of scope, and everything made so far when a later create fails.
TEST_F(NvmlTest, MigGuardDestroysExactlyWhatItCreatedNewestFirst) {
  json m = machine();
  m["devices"][0]["instances"] = json::array({m["devices"][0]["instances"][3]});  // only the 3g.71gb: 4 slices free
  write_config(m);
  auto nvml = ib::Nvml::load();
  {
    ib::MigInstancesGuard guard(*nvml, 0, {"1g.18gb", "2g.35gb"});
    ASSERT_EQ(guard.created().size(), 2u);
    EXPECT_EQ(nvml->mig_instances(0).size(), 3u);  // the configured one + 2
  }
  const auto created = state_ops();
  ASSERT_EQ(created.size(), 8u);
  EXPECT_EQ(created[0]["op"], "create_gi");
  EXPECT_EQ(created[0]["profile"], "1g.18gb");
  EXPECT_EQ(created[2]["op"], "create_gi");
  EXPECT_EQ(created[2]["profile"], "2g.35gb");
  // newest first: the 2g.35gb's compute and GPU instance, then the 1g.18gb's
  EXPECT_EQ(created[4]["op"], "destroy_ci");
  EXPECT_EQ(created[4]["gi"], created[2]["gi"]);
  EXPECT_EQ(created[5]["op"], "destroy_gi");
  EXPECT_EQ(created[5]["gi"], created[2]["gi"]);
  EXPECT_EQ(created[6]["op"], "destroy_ci");
  EXPECT_EQ(created[6]["gi"], created[0]["gi"]);
  EXPECT_EQ(created[7]["op"], "destroy_gi");
  EXPECT_EQ(created[7]["gi"], created[0]["gi"]);
  EXPECT_EQ(nvml->mig_instances(0).size(), 1u);  // the configured one is untouched
}

// Every creation is journalled before it is made (mig_intent), so a run killed mid-creation leaves
// an instance cleanup can name; then what became of it.
TEST_F(NvmlTest, MigGuardJournalsItsIntentBeforeEachCreation) {
  write_config(with_second_create_failing());
  auto nvml = ib::Nvml::load();
  ib::Journal journal((dir_ / "state").string());
  EXPECT_THROW(ib::MigInstancesGuard(*nvml, 0, {"1g.18gb", "2g.35gb"}, &journal), ib::CannotRunError);
  std::vector<ib::JournalEvent> events;
  for (const auto& e : ib::read_journal(journal.path()).entries) events.push_back(e.event);
  using E = ib::JournalEvent;
  EXPECT_EQ(events, (std::vector<E>{E::mig_intent, E::mig_created, E::mig_intent, E::mig_not_created, E::mig_destroyed}));
}

// In a container's PID namespace NVML's pids match none of ours: the entries beyond our worker
// processes (own minus the harness) are foreign, so one real neighbour still counts.
TEST_F(NvmlTest, GpuLoadProbeCountsByNumberWhenNoPidMatches) {
  write_config({{"devices", json::array({{{"name", "NVIDIA H200"},
                                          {"processes", json::array({{{"pid", 900001}}, {{"pid", 900002}},
                                                                     {{"pid", 900003}}})}}})}});
  auto nvml = ib::Nvml::load();
  const auto probe = ib::make_gpu_load_probe(*nvml, 0, 0.0);
  ib::ForeignLoad load;
  probe(load, {::getpid(), 11, 12});  // the harness and two workers, as this namespace numbers them
  ASSERT_TRUE(load.gpu_foreign_processes.has_value());
  EXPECT_EQ(*load.gpu_foreign_processes, 1);
  ib::ForeignLoad quiet;
  probe(quiet, {::getpid(), 11, 12, 13});  // three workers: all three listed are ours
  EXPECT_EQ(*quiet.gpu_foreign_processes, 0);
}

// Issue 34 (item 6): in mode mig the probe asks the run's instances through their MIG device handles. A process on
// another user's instance is not foreign load (it shares no SMs or memory with ours); one on ours that is not ours
// is; and our process's memory is against its instance's (16 GiB), not the whole GPU's 141 GB.
TEST_F(NvmlTest, GpuLoadProbeInModeMigAsksOnlyTheRunsInstances) {
  json config = machine();
  config["devices"][0]["memory_mb"] = 143771;
  config["devices"][0]["processes"] = json::array({{{"pid", 5001}, {"used_mb", 1000}, {"gi", 9}, {"ci", 0}},
                                                   {{"pid", 6001}, {"used_mb", 9000}, {"gi", 1}, {"ci", 0}}});
  write_config(config);
  auto nvml = ib::Nvml::load();
  std::vector<ib::MigInstance> ours;
  for (const auto& m : nvml->mig_instances(0))
    if (m.gpu_instance_id == 9) ours.push_back(m);
  ASSERT_EQ(ours.size(), 1u);
  const auto probe = ib::make_gpu_load_probe(*nvml, 0, 0.0, ours);
  ib::ForeignLoad load;
  probe(load, {::getpid(), 5001});
  ASSERT_TRUE(load.gpu_foreign_processes.has_value());
  EXPECT_EQ(*load.gpu_foreign_processes, 0);  // 6001 runs on another user's 3g.71gb
  ASSERT_EQ(load.gpu_own_process_memory.size(), 1u);
  EXPECT_EQ(load.gpu_memory_total_by_pid.at(5001), 16384ull << 20);
  // A neighbour on our own instance still counts.
  config["devices"][0]["processes"].push_back({{"pid", 6002}, {"used_mb", 500}, {"gi", 9}, {"ci", 0}});
  write_config(config);
  auto again = ib::Nvml::load();
  const auto probe2 = ib::make_gpu_load_probe(*again, 0, 0.0, ours);
  ib::ForeignLoad busy;
  probe2(busy, {::getpid(), 5001});
  EXPECT_EQ(busy.gpu_foreign_processes, 1);
  EXPECT_EQ(busy.gpu_foreign_memory_bytes, 500ull << 20);
}

TEST_F(NvmlTest, MigGuardUndoesAPartialCreate) {
  write_config(with_second_create_failing());
  auto nvml = ib::Nvml::load();
  try {
    ib::MigInstancesGuard guard(*nvml, 0, {"1g.18gb", "2g.35gb"});
    FAIL() << "a failed creation must refuse";
  } catch (const ib::CannotRunError& e) {
    EXPECT_NE(std::string(e.what()).find("--mig-create 2g.35gb: nvmlDeviceCreateGpuInstanceWithPlacement: "
                                         "Insufficient resources (23)"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("instances created so far were destroyed"), std::string::npos);
  }
  const auto ops = state_ops();
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[2]["op"], "destroy_ci");
  EXPECT_EQ(ops[3]["op"], "destroy_gi");
  EXPECT_EQ(ops[3]["gi"], ops[0]["gi"]);
  EXPECT_TRUE(nvml->mig_instances(0).empty());
}

// The guard places the whole set before it makes any: a 1g.18gb asked for first goes where it leaves the 4g.71gb
// its only placement (0-3). Left to NVML, the same order fails: the fake, like a GPU, puts a 1g.18gb at the first
// free placement, 0.
TEST_F(NvmlTest, MigGuardCreatesAtPlacementsChosenForTheWholeSet) {
  json config = with_4g();
  write_config(config);
  auto nvml = ib::Nvml::load();
  {
    ib::MigInstancesGuard guard(*nvml, 0, {"1g.18gb", "4g.71gb"});
    const auto mig = nvml->mig_instances(0);
    ASSERT_EQ(mig.size(), 2u);
    ASSERT_TRUE(mig[0].placement && mig[1].placement);
    EXPECT_EQ(*mig[0].placement, (ib::MigPlacement{4, 1}));  // GPU instance 1, the 1g.18gb
    EXPECT_EQ(*mig[1].placement, (ib::MigPlacement{0, 4}));
  }
  auto ops = state_ops();
  ASSERT_EQ(ops.size(), 8u);
  EXPECT_EQ(ops[0]["placement"], json::array({4, 1}));
  EXPECT_EQ(ops[0]["asked"], true);
  EXPECT_EQ(ops[2]["placement"], json::array({0, 4}));
  nvml->create_mig_instance(0, "1g.18gb");
  EXPECT_EQ(state_ops()[8]["placement"], json::array({0, 1}));
  EXPECT_EQ(error_of([&] { nvml->create_mig_instance(0, "4g.71gb"); }),
            "nvmlDeviceCreateGpuInstance: Insufficient resources (23)");
  EXPECT_EQ(error_of([&] { nvml->create_mig_instance(0, "4g.71gb", ib::MigPlacement{4, 4}); }),
            "nvmlDeviceCreateGpuInstanceWithPlacement: Invalid Argument (2)");  // not one of its placements
}

// Without root NVML will not look a GPU instance up: the instances are still listed, without a placement, and
// the guard lets NVML place what it creates (asked: false in the fake's log).
TEST_F(NvmlTest, WithoutPlacementsTheGuardLetsNvmlPlace) {
  json config = machine();
  // Both need a privileged user.
  config["devices"][0]["fail"] = {{"nvmlDeviceGetGpuInstanceById", "NO_PERMISSION"},
                                  {"nvmlDeviceGetGpuInstances", "NO_PERMISSION"}};
  write_config(config);
  auto nvml = ib::Nvml::load();
  const auto mig = nvml->mig_instances(0);
  ASSERT_EQ(mig.size(), 4u);
  for (const auto& m : mig) EXPECT_FALSE(m.placement) << m.uuid;
  {
    ib::MigInstancesGuard guard(*nvml, 0, {"1g.18gb"});
    ASSERT_EQ(guard.created().size(), 1u);
  }  // its destroy needs the same lookup: it fails and is recorded, not thrown
  const auto ops = state_ops();
  ASSERT_FALSE(ops.empty());
  EXPECT_EQ(ops[0]["op"], "create_gi");
  EXPECT_EQ(ops[0]["asked"], false);
}

// A set that does not fit beside an instance that was there before is refused before anything is made, naming
// the instance in the way (which is never touched).
TEST_F(NvmlTest, MigGuardRefusesASetBlockedByAPreExistingInstance) {
  json config = with_4g();
  config["devices"][0]["instances"] = json::array(
      {{{"gi", 9}, {"ci", 0}, {"profile", "1g.18gb"}, {"uuid", "MIG-99999999-0000-0000-0000-000000000000"},
        {"placement", {2, 1}}}});
  write_config(config);
  auto nvml = ib::Nvml::load();
  std::string err = "(no error)";
  try {
    ib::MigInstancesGuard guard(*nvml, 0, {"2g.35gb", "4g.71gb"});
  } catch (const ib::CannotRunError& e) {
    err = e.what();
  }
  EXPECT_EQ(err.rfind("--mig-create 2g.35gb,4g.71gb: does not fit beside the pre-existing instances at memory "
                      "slices 2-2 (never touched)", 0),
            0u)
      << err;
  EXPECT_NE(err.find("in the way: 1g.18gb (MIG-99999999-0000-0000-0000-000000000000) at memory slices 2-2. Nothing "
                     "was created"),
            std::string::npos)
      << err;
  EXPECT_TRUE(state_ops().empty());
  // What fits beside it is made, around it: two 1g.18gb at 0 and 1.
  ib::MigInstancesGuard ok(*nvml, 0, {"1g.18gb", "1g.18gb"});
  EXPECT_EQ(state_ops()[0]["placement"], json::array({0, 1}));
  EXPECT_EQ(state_ops()[2]["placement"], json::array({1, 1}));
}

// Issue 34 (item 7): a GPU instance made without a compute instance (nvidia-smi mig -cgi without -C) is no MIG
// device, yet it takes its slices. nvmlDeviceGetGpuInstances lists it, and the guard places the set around it: a
// 3g.71gb at 4-7 and a 2g.35gb at 2-3 beside a bare 1g.18gb at slice 0 (placed from the MIG devices alone, the
// 3g.71gb went to 0-3, where creating it failed and the set was lost though it fits).
TEST_F(NvmlTest, AGpuInstanceWithoutAComputeInstanceTakesItsSlices) {
  json config = with_4g();
  config["devices"][0]["instances"] =
      json::array({{{"gi", 7}, {"ci", nullptr}, {"profile", "1g.18gb"}, {"placement", {0, 1}}}});
  write_config(config);
  auto nvml = ib::Nvml::load();
  EXPECT_TRUE(nvml->mig_instances(0).empty());
  const auto gis = nvml->mig_gpu_instances(0);
  ASSERT_EQ(gis.size(), 1u);
  EXPECT_EQ(gis[0].id, 7u);
  EXPECT_EQ(gis[0].profile, "1g.18gb");
  EXPECT_EQ(gis[0].placement, (ib::MigPlacement{0, 1}));
  EXPECT_EQ(ib::gpu_instance_label(gis[0]), "1g.18gb (GPU instance 7, no compute instance)");
  {
    ib::MigInstancesGuard guard(*nvml, 0, {"3g.71gb", "2g.35gb"});
    ASSERT_EQ(guard.created().size(), 2u);
    const auto with_made = nvml->mig_gpu_instances(0);
    ASSERT_EQ(with_made.size(), 3u);
    EXPECT_FALSE(with_made[1].uuid.empty());  // a made one has its compute instance's UUID
  }
  const auto ops = state_ops();
  ASSERT_EQ(ops.size(), 8u);
  EXPECT_EQ(ops[0]["placement"], json::array({4, 4}));
  EXPECT_EQ(ops[2]["placement"], json::array({2, 2}));
  // A set that cannot fit beside it names it.
  std::string err;
  try {
    ib::MigInstancesGuard guard(*nvml, 0, {"4g.71gb"});
  } catch (const ib::CannotRunError& e) {
    err = e.what();
  }
  EXPECT_NE(err.find("in the way: 1g.18gb (GPU instance 7, no compute instance) at memory slices 0-0"), std::string::npos)
      << err;
  // Without permission to list GPU instances, the MIG devices' view is what is left.
  config["devices"][0]["fail"] = {{"nvmlDeviceGetGpuInstances", "NO_PERMISSION"}};
  write_config(config);
  auto limited = ib::Nvml::load();
  EXPECT_TRUE(limited->mig_gpu_instances(0).empty());
}

// Issue 34 (item 11): an early R535 NVML wrote 32-byte entries (nvmlProcessInfo_v3_t) where R550-R580 write 24;
// read with a 24-byte stride, every entry after the first was misread. Read with the stride the driver used.
TEST_F(NvmlTest, ProcessEntriesAreReadWithTheStrideTheDriverWrote) {
  for (unsigned bytes : {24u, 32u}) {
    json config = machine();
    config["devices"][0]["process_info_bytes"] = bytes;
    config["devices"][0]["processes"] = json::array({{{"pid", 4001}, {"used_mb", 100}, {"gi", 1}, {"ci", 0}},
                                                     {{"pid", 4002}, {"used_mb", 200}},
                                                     {{"pid", 4003}, {"used_mb", 300}, {"gi", 9}, {"ci", 0}}});
    config["devices"][0]["mig"]["current"] = 0;  // the whole GPU answers the process list
    config["devices"][0]["mig"]["pending"] = 0;
    write_config(config);
    auto nvml = ib::Nvml::load();
    const auto facts = nvml->device_facts(0);
    ASSERT_TRUE(facts.processes) << bytes;
    ASSERT_EQ(facts.processes->size(), 3u) << bytes;
    const auto& p = *facts.processes;
    EXPECT_EQ(p[0].pid, 4001u);
    EXPECT_EQ(p[1].pid, 4002u) << bytes;
    EXPECT_EQ(p[2].pid, 4003u) << bytes;
    EXPECT_EQ(p[1].used_bytes, 200ull << 20) << bytes;
    EXPECT_EQ(p[2].used_bytes, 300ull << 20) << bytes;
    EXPECT_FALSE(p[1].gpu_instance_id) << bytes;
    EXPECT_EQ(p[2].gpu_instance_id, 9u) << bytes;
  }
}

TEST_F(NvmlTest, CreateAndDestroyThroughTheStateFile) {
  write_config(machine());
  ib::CreatedMigInstance created;
  {
    auto nvml = ib::Nvml::load();
    created = nvml->create_mig_instance(0, "1g.18gb");
  }
  EXPECT_EQ(created.profile, "1g.18gb");
  EXPECT_EQ(created.gpu_instance_id, 2u);  // lowest free GPU instance id in the fake
  EXPECT_EQ(created.compute_instance_id, 0u);

  auto ops = state_ops();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0]["op"], "create_gi");
  EXPECT_EQ(ops[0]["profile_id"], 19);
  EXPECT_EQ(ops[1]["op"], "create_ci");
  EXPECT_EQ(ops[1]["profile_id"], 0);  // NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE

  // A later load (as another process would) sees the new instance.
  auto nvml = ib::Nvml::load();
  auto mig = nvml->mig_instances(0);
  ASSERT_EQ(mig.size(), 5u);
  EXPECT_EQ(mig[1].gpu_instance_id, 2u);
  EXPECT_EQ(mig[1].compute_instance_id, 0u);
  EXPECT_EQ(mig[1].index, 1);
  EXPECT_EQ(mig[1].profile, "1g.18gb");
  EXPECT_EQ(mig[1].sm_count, 16u);
  EXPECT_EQ(mig[1].memory_bytes, 16384ull << 20);
  EXPECT_EQ(mig[1].uuid.rfind("MIG-", 0), 0u);
  EXPECT_EQ(mig[1].uuid.size(), 40u);  // MIG- + 36-character UUID
  EXPECT_EQ(mig[1].uuid, ops[1]["uuid"].get<std::string>());

  // The GPU is now full (3 + 2 + 1 + 1 of 7 slices).
  std::string full = error_of([&] { nvml->create_mig_instance(0, "1g.18gb"); });
  EXPECT_EQ(full, "nvmlDeviceCreateGpuInstance: Insufficient resources (23)");

  nvml->destroy_mig_instance(0, created);
  ops = state_ops();
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[2]["op"], "destroy_ci");
  EXPECT_EQ(ops[3]["op"], "destroy_gi");
  mig = nvml->mig_instances(0);
  ASSERT_EQ(mig.size(), 4u);
  for (const auto& m : mig) EXPECT_NE(m.gpu_instance_id, 2u);

  // Destroying it again: the GPU instance is gone.
  EXPECT_EQ(error_of([&] { nvml->destroy_mig_instance(0, created); }),
            "nvmlDeviceGetGpuInstanceById: Not Found (6)");
}

// NVML refuses to destroy a compute or GPU instance a process runs on (nvml.h: nvmlComputeInstanceDestroy and
// nvmlGpuInstanceDestroy, NVML_ERROR_IN_USE), as the fake does: a process listed on the created instance (gi 2)
// keeps it; once that process has ended (NVML lists only live ones) it goes.
TEST_F(NvmlTest, AnInstanceAProcessRunsOnIsNotDestroyedUntilTheProcessEnds) {
  const fs::path pids = dir_ / "pids";
  json config = machine();
  config["devices"][0]["processes"] = json::array({{{"pid_file", pids.string()}, {"gi", 2}, {"ci", 0}}});
  write_config(config);
  auto nvml = ib::Nvml::load();
  const ib::CreatedMigInstance created = nvml->create_mig_instance(0, "1g.18gb");
  ASSERT_EQ(created.gpu_instance_id, 2u);
  std::ofstream(pids) << ::getpid() << "\n";  // alive: this test
  EXPECT_EQ(error_of([&] { nvml->destroy_mig_instance(0, created); }),
            "nvmlComputeInstanceDestroy: In use by another client (19)");
  EXPECT_EQ(state_ops().size(), 2u);  // nothing destroyed
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  std::ofstream(pids) << child << "\n";  // ended and reaped: NVML lists it no more
  nvml->destroy_mig_instance(0, created);
  const auto ops = state_ops();
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[3]["op"], "destroy_gi");
}

// nvml.h, nvmlDeviceGetProcessUtilization: "On MIG-enabled GPUs, querying process utilization is not currently
// supported": no answer (nullopt) on the GPU in MIG mode; the GPU with MIG off answers (no sample since now: none).
TEST_F(NvmlTest, ProcessUtilizationIsNotAnsweredOnAMigEnabledGpu) {
  json config = machine();
  for (int d : {0, 1}) config["devices"][d]["process_utilization"] = {{"children", true}, {"sm_util", 50}};
  write_config(config);
  auto nvml = ib::Nvml::load();
  EXPECT_FALSE(nvml->process_utilization(0, 0).has_value());  // MIG current 1
  const auto off = nvml->process_utilization(1, 0);          // MIG current 0 (pending 1)
  ASSERT_TRUE(off.has_value());
  EXPECT_TRUE(off->empty());  // this test has no children: NOT_FOUND, no samples
}

TEST_F(NvmlTest, ProfilesAreMatchedByNameIncludingSameSliceCount) {
  json config = machine();
  config["devices"][0]["instances"] = json::array();
  write_config(config);
  auto nvml = ib::Nvml::load();
  auto a = nvml->create_mig_instance(0, "1g.35gb");  // NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2 in the fake
  auto b = nvml->create_mig_instance(0, "2g.35gb");
  auto ops = state_ops();
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0]["profile_id"], 15);
  EXPECT_EQ(ops[2]["profile_id"], 14);
  EXPECT_EQ(ops[3]["profile_id"], 1);  // NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE spans the 2g instance
  auto mig = nvml->mig_instances(0);
  ASSERT_EQ(mig.size(), 2u);
  EXPECT_EQ(mig[0].profile, "1g.35gb");
  EXPECT_EQ(mig[0].memory_bytes, 32768ull << 20);
  EXPECT_EQ(mig[1].profile, "2g.35gb");
  EXPECT_EQ(mig[1].sm_count, 32u);
  nvml->destroy_mig_instance(0, b);
  nvml->destroy_mig_instance(0, a);
  EXPECT_TRUE(nvml->mig_instances(0).empty());
}

TEST_F(NvmlTest, UnknownProfileListsTheOfferedOnes) {
  write_config(machine());
  auto nvml = ib::Nvml::load();
  std::string err = error_of([&] { nvml->create_mig_instance(0, "5g.99gb"); });
  EXPECT_NE(err.find("unknown MIG profile '5g.99gb'"), std::string::npos) << err;
  EXPECT_NE(err.find("1g.18gb"), std::string::npos) << err;
  EXPECT_NE(err.find("7g.141gb"), std::string::npos) << err;
  EXPECT_TRUE(state_ops().empty());
}

TEST_F(NvmlTest, ComputeInstanceFailureDestroysTheNewGpuInstance) {
  json config = machine();
  config["devices"][0]["fail"] = {{"nvmlGpuInstanceCreateComputeInstance", "INSUFFICIENT_RESOURCES"}};
  write_config(config);
  auto nvml = ib::Nvml::load();
  EXPECT_EQ(error_of([&] { nvml->create_mig_instance(0, "1g.18gb"); }),
            "nvmlGpuInstanceCreateComputeInstance: Insufficient resources (23)");
  auto ops = state_ops();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0]["op"], "create_gi");
  EXPECT_EQ(ops[1]["op"], "destroy_gi");
  EXPECT_EQ(ops[1]["gi"], ops[0]["gi"]);
  EXPECT_EQ(nvml->mig_instances(0).size(), 4u);
}

TEST_F(NvmlTest, ScriptedFailuresNameTheCall) {
  json config = machine();
  config["devices"][0]["fail"] = {{"nvmlDeviceGetMigMode", 4}, {"nvmlDeviceGetUUID", 999}};
  config["devices"][1]["fail"] = {{"nvmlDeviceGetMemoryInfo", "GPU_IS_LOST"}};
  config["devices"][2]["fail"] = {{"nvmlDeviceGetComputeMode", "NVML_ERROR_NOT_SUPPORTED"}};
  write_config(config);
  auto nvml = ib::Nvml::load();
  EXPECT_EQ(error_of([&] { nvml->mig_mode(0); }), "nvmlDeviceGetMigMode: Insufficient Permissions (4)");
  EXPECT_EQ(error_of([&] { nvml->mig_instances(0); }), "nvmlDeviceGetMigMode: Insufficient Permissions (4)");
  EXPECT_EQ(error_of([&] { nvml->device_uuid(0); }), "nvmlDeviceGetUUID: Unknown Error (999)");
  EXPECT_EQ(error_of([&] { nvml->compute_mode(2); }), "nvmlDeviceGetComputeMode: Not Supported (3)");
  EXPECT_EQ(nvml->device_name(0), "NVIDIA H200");  // other calls still work

  config = machine();
  config["devices"][0]["fail"] = {{"nvmlDeviceGetAttributes_v2", 3}};
  config["fail"] = {{"nvmlDeviceGetCount_v2", "UNKNOWN"}};
  write_config(config);
  nvml = ib::Nvml::load();
  EXPECT_EQ(error_of([&] { nvml->device_count(); }), "nvmlDeviceGetCount_v2: Unknown Error (999)");
  EXPECT_EQ(error_of([&] { nvml->mig_instances(0); }), "nvmlDeviceGetAttributes_v2: Not Supported (3)");

  config = machine();
  config["devices"][0]["fail"] = {{"nvmlComputeInstanceDestroy", "IN_USE"}};
  write_config(config);
  nvml = ib::Nvml::load();
  auto created = nvml->create_mig_instance(0, "1g.18gb");
  EXPECT_EQ(error_of([&] { nvml->destroy_mig_instance(0, created); }),
            "nvmlComputeInstanceDestroy: In use by another client (19)");
}

TEST_F(NvmlTest, StateWrittenByAnotherProcessIsSeen) {
  write_config(machine());
  {
    std::ofstream out(state_);
    out << R"({"op":"destroy_ci","device":0,"gi":9,"ci":0})" << "\n"
        << R"({"op":"destroy_gi","device":0,"gi":9})" << "\n"
        << R"({"op":"create_gi","device":0,"gi":4,"profile":"1g.18gb","profile_id":19,"slices":1,"sm":16,"memory_mb":16384})"
        << "\n"
        << R"({"op":"create_ci","device":0,"gi":4,"ci":0,"profile_id":0,"profile":"1g.18gb","uuid":"MIG-44444444-0000-0000-0000-000000000000","sm":16,"memory_mb":16384,"slot":1,"slices":1})"
        << "\n";
  }
  auto nvml = ib::Nvml::load();
  auto mig = nvml->mig_instances(0);
  ASSERT_EQ(mig.size(), 4u);
  EXPECT_EQ(mig[3].gpu_instance_id, 4u);
  EXPECT_EQ(mig[3].uuid, "MIG-44444444-0000-0000-0000-000000000000");
  nvml->destroy_mig_instance(0, {"1g.18gb", 4, 0});
  EXPECT_EQ(nvml->mig_instances(0).size(), 3u);
}

// The fake checks a versioned struct's version word the way NVML does, against the same nvml_abi.h the binding
// fills it from: NVML_STRUCT_VERSION(GpuInstanceProfileInfo, 2) = 152 | 2 << 24 is taken, the v1 size is refused.
TEST_F(NvmlTest, FakeTakesOnlyTheVersionedStructItWasGiven) {
  write_config(machine());
  void* lib = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto init = reinterpret_cast<decltype(&nvmlInit_v2)>(dlsym(lib, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<decltype(&nvmlShutdown)>(dlsym(lib, "nvmlShutdown"));
  auto handle = reinterpret_cast<decltype(&nvmlDeviceGetHandleByIndex_v2)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  auto profile_v = reinterpret_cast<decltype(&nvmlDeviceGetGpuInstanceProfileInfoV)>(
      dlsym(lib, "nvmlDeviceGetGpuInstanceProfileInfoV"));
  ASSERT_TRUE(init && shutdown && handle && profile_v);
  ASSERT_EQ(init(), NVML_SUCCESS);
  nvmlDevice_t dev = nullptr;
  ASSERT_EQ(handle(0, &dev), NVML_SUCCESS);

  nvmlGpuInstanceProfileInfo_v2_t info{};
  info.version = nvmlGpuInstanceProfileInfo_v2;
  EXPECT_EQ(info.version, 0x02000098u);
  ASSERT_EQ(profile_v(dev, NVML_GPU_INSTANCE_PROFILE_1_SLICE, &info), NVML_SUCCESS);
  EXPECT_STREQ(info.name, "MIG 1g.18gb");  // machine(): 1g.18gb, id 19, 1 slice, 16384 MiB
  EXPECT_EQ(info.id, 19u);
  EXPECT_EQ(info.sliceCount, 1u);
  EXPECT_EQ(info.memorySizeMB, 16384u);

  nvmlGpuInstanceProfileInfo_v2_t old{};
  old.version = nvml_struct_version(sizeof(nvmlGpuInstanceProfileInfo_t), 1);  // a v1-sized struct
  EXPECT_EQ(profile_v(dev, NVML_GPU_INSTANCE_PROFILE_1_SLICE, &old), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  EXPECT_EQ(shutdown(), NVML_SUCCESS);
  dlclose(lib);
}

TEST_F(NvmlTest, GpuInstanceProfilesComeWithTheirPlacements) {
  json config = machine();
  json& profiles = config["devices"][0]["profiles"];
  profiles.push_back({{"name", "4g.71gb"}, {"id", 5}, {"slices", 4}, {"sm", 64}, {"memory_mb", 71424}, {"capacity", 1}});
  profiles[1]["placements"] = json::array({json::array({0, 2}), json::array({2, 2}), json::array({4, 2}),
                                           json::array({6, 2})});  // 1g.35gb, the [start, size] form
  profiles[3]["placements"] = json::array({{{"start", 0}, {"size", 4}}, {{"start", 4}, {"size", 4}}});  // 3g.71gb
  write_config(config);
  auto nvml = ib::Nvml::load();
  auto got = nvml->mig_gpu_instance_profiles(0);
  // NVML_GPU_INSTANCE_PROFILE_* index order: 1_SLICE, 2_SLICE, 3_SLICE, 4_SLICE, 7_SLICE, then 1_SLICE_REV2 (9).
  ASSERT_EQ(got.size(), 6u);
  std::vector<std::string> names;
  for (const auto& p : got) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"1g.18gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb", "1g.35gb"}));
  EXPECT_EQ(got[5].index, 9u);
  EXPECT_EQ(got[5].id, 15u);
  EXPECT_EQ(got[5].slice_count, 1u);
  EXPECT_EQ(got[5].instance_count, 4u);
  EXPECT_EQ(got[5].memory_mib, 32768u);
  EXPECT_EQ(got[5].sm_count, 16u);
  auto starts = [](const ib::MigGpuInstanceProfile& p) {
    std::vector<std::pair<unsigned, unsigned>> out;
    for (const auto& pl : p.placements) out.emplace_back(pl.start, pl.size);
    return out;
  };
  using Pl = std::vector<std::pair<unsigned, unsigned>>;
  EXPECT_EQ(starts(got[0]), (Pl{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}));  // the fake's default
  EXPECT_EQ(starts(got[1]), (Pl{{0, 2}, {2, 2}, {4, 2}}));
  EXPECT_EQ(starts(got[2]), (Pl{{0, 4}, {4, 4}}));
  EXPECT_EQ(starts(got[3]), (Pl{{0, 4}}));
  EXPECT_EQ(starts(got[4]), (Pl{{0, 8}}));
  EXPECT_EQ(starts(got[5]), (Pl{{0, 2}, {2, 2}, {4, 2}, {6, 2}}));
  // What the sweep does with them: the 14 two-tenant H200 layouts of mig_layouts_test.cpp.
  EXPECT_EQ(ib::enumerate_mig_layouts(got, 2).size(), 14u);

  EXPECT_EQ(error_of([&] { nvml->mig_gpu_instance_profiles(1); }),
            "cannot list MIG profiles: MIG mode is not enabled on GPU 1");
  EXPECT_EQ(error_of([&] { nvml->mig_gpu_instance_profiles(2); }),
            "cannot list MIG profiles: GPU 2 does not support MIG");
  EXPECT_TRUE(state_ops().empty());  // listing creates nothing
}

TEST_F(NvmlTest, PlacementsFailureNamesTheCall) {
  json config = machine();
  config["devices"][0]["fail"] = {{"nvmlDeviceGetGpuInstancePossiblePlacements_v2", "NO_PERMISSION"}};
  write_config(config);
  auto nvml = ib::Nvml::load();
  EXPECT_EQ(error_of([&] { nvml->mig_gpu_instance_profiles(0); }),
            "nvmlDeviceGetGpuInstancePossiblePlacements_v2: Insufficient Permissions (4)");
}

TEST_F(NvmlTest, FakePlacementsAnswerTheTwoStepQuery) {
  write_config(machine());
  void* lib = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto init = reinterpret_cast<decltype(&nvmlInit_v2)>(dlsym(lib, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<decltype(&nvmlShutdown)>(dlsym(lib, "nvmlShutdown"));
  auto handle = reinterpret_cast<decltype(&nvmlDeviceGetHandleByIndex_v2)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  auto placements = reinterpret_cast<decltype(&nvmlDeviceGetGpuInstancePossiblePlacements_v2)>(
      dlsym(lib, "nvmlDeviceGetGpuInstancePossiblePlacements_v2"));
  ASSERT_TRUE(init && shutdown && handle && placements);
  ASSERT_EQ(init(), NVML_SUCCESS);
  nvmlDevice_t dev = nullptr;
  ASSERT_EQ(handle(0, &dev), NVML_SUCCESS);
  unsigned count = 0;
  ASSERT_EQ(placements(dev, 19, nullptr, &count), NVML_SUCCESS);  // 1g.18gb
  EXPECT_EQ(count, 7u);
  nvmlGpuInstancePlacement_t buf[7] = {};
  count = 3;
  EXPECT_EQ(placements(dev, 19, buf, &count), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 7u);
  ASSERT_EQ(placements(dev, 9, buf, &count), NVML_SUCCESS);  // 3g.71gb
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(buf[1].start, 4u);
  EXPECT_EQ(buf[1].size, 4u);
  EXPECT_EQ(placements(dev, 77, nullptr, &count), NVML_ERROR_INVALID_ARGUMENT);  // no such profile id
  EXPECT_EQ(placements(dev, 19, nullptr, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(shutdown(), NVML_SUCCESS);
  dlclose(lib);
}

}  // namespace
