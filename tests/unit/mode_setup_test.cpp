// MIG placement planning (harness/modes/mig_setup.cpp): every tenant its own instance, explicit
// indices first, then profiles, then the rest; the largest instance; refusals naming the field. The table of
// modes (harness/modes/mode_table.h), prepare_modes and the node's readiness (harness/modes/device_readiness.h).
#include "harness/modes/device_readiness.h"
#include "harness/modes/mig_setup.h"
#include "harness/modes/mode_setup.h"
#include "harness/modes/mode_table.h"
#include "harness/modes/mps_daemon.h"
#include "harness/modes/plan.h"

#include "harness/core/errors.h"
#include "tests/unit/fake_nvml_env.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace ib {
namespace {

MigInstance inst(int index, const std::string& profile, unsigned sm, unsigned long long mem_gb) {
  MigInstance m;
  m.index = index;
  m.gpu_instance_id = static_cast<unsigned>(index + 1);
  m.profile = profile;
  m.uuid = "MIG-" + std::to_string(index);
  m.sm_count = sm;
  m.memory_bytes = mem_gb << 30;
  return m;
}

Tenant tenant(const std::string& name, std::optional<int> index = {}, std::optional<std::string> profile = {},
              const std::string& workload = "gemm") {
  Tenant t;
  t.name = name;
  t.workload = workload;
  t.placement.mig_instance = index;
  t.placement.mig_profile = profile;
  return t;
}

Scenario scenario(std::vector<Tenant> tenants) {
  Scenario s;
  s.file = "s.json";
  s.name = "s";
  s.mode = Mode::mig;
  s.tenants = std::move(tenants);
  return s;
}

const std::vector<MigInstance> kInstances = {inst(0, "1g.18gb", 16, 18), inst(1, "3g.71gb", 60, 71),
                                             inst(2, "1g.18gb", 16, 18), inst(3, "2g.35gb", 32, 35)};

TEST(PlanMig, ExplicitIndexThenProfileThenInOrder) {
  // "free" takes what is left in order after "idx" (index 0) and "prof" (first free 1g.18gb: 2).
  const MigPlan p = plan_mig(scenario({tenant("free"), tenant("prof", {}, "1g.18gb"), tenant("idx", 0)}), kInstances);
  EXPECT_EQ(p.rank_instance, (std::vector<std::vector<std::size_t>>{{1}, {2}, {0}}));
  EXPECT_EQ(p.largest, 1u);
}

TEST(PlanMig, LargestBreaksTiesOnMemory) {
  std::vector<MigInstance> v = {inst(0, "a", 32, 20), inst(1, "b", 32, 40), inst(2, "c", 16, 80)};
  EXPECT_EQ(plan_mig(scenario({tenant("x")}), v).largest, 1u);
}

// plan_mig's refusal for `s` on kInstances, or "no error".
std::string message(const Scenario& s) {
  try {
    plan_mig(s, kInstances);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(PlanMig, RefusalsNameTheField) {
  EXPECT_EQ(message(scenario({tenant("a", 7)})),
            "s.json: tenants[0].placement.mig_instance: impossible placement: there is no MIG instance 7 (instances "
            "here: 0:1g.18gb, 1:3g.71gb, 2:1g.18gb, 3:2g.35gb)");
  EXPECT_NE(message(scenario({tenant("a", {}, "2g.35gb"), tenant("b", {}, "2g.35gb")}))
                .find("tenants[1].placement.mig_profile: impossible placement: no free MIG instance of profile 2g.35gb"),
            std::string::npos);
  EXPECT_NE(message(scenario({tenant("a"), tenant("b"), tenant("c"), tenant("d"), tenant("e")}))
                .find("tenants[4].placement: impossible placement: 5 workers (tenants or ranks) need their own MIG "
                      "instance and there are 4"),
            std::string::npos);
  Tenant one_process = tenant("a", {}, {}, "allreduce");
  one_process.params = {{"gpus", 2}};
  EXPECT_NE(message(scenario({one_process}))
                .find("tenants[0].params.gpus: one process cannot drive NCCL over several MIG instances"),
            std::string::npos);
  one_process.params = {{"gpus", 1}};  // a one-rank allreduce inside one instance is a local copy: placed
  EXPECT_EQ(message(scenario({one_process})), "no error");
}

Tenant ranked(const std::string& name, int ranks, std::vector<Placement> placements = {}) {
  Tenant t = tenant(name, {}, {}, "allreduce");
  t.ranks = ranks;
  t.rank_placements = std::move(placements);
  return t;
}

Placement at(std::optional<int> index, std::optional<std::string> profile = {}) {
  Placement p;
  p.mig_instance = index;
  p.mig_profile = std::move(profile);
  return p;
}

// Each rank of a collective tenant is a worker of its own: an instance each, by the same three passes.
TEST(PlanMig, EachRankGetsAnInstanceOfItsOwn) {
  // "ar" rank 0 asks for instance 3, rank 1 for a 1g.18gb (the first free: 0), rank 2 takes the first free
  // left after "g" asked for 1: instance 2.
  const MigPlan p = plan_mig(scenario({ranked("ar", 3, {at(3), at({}, "1g.18gb"), at({})}), tenant("g", 1)}), kInstances);
  EXPECT_EQ(p.rank_instance, (std::vector<std::vector<std::size_t>>{{3, 0, 2}, {1}}));
  EXPECT_EQ(p.instance_of(0, 2).uuid, "MIG-2");
  EXPECT_EQ(p.instance_of(1).uuid, "MIG-1");
  // Without rank_placements every rank takes its tenant's placement: a profile is the first free of it each.
  Tenant both = ranked("ar", 2);
  both.placement.mig_profile = "1g.18gb";
  EXPECT_EQ(plan_mig(scenario({both}), kInstances).rank_instance, (std::vector<std::vector<std::size_t>>{{0, 2}}));
}

// Mode mig's plan gives each rank's worker its own instance in the alone and colocated blocks, every rank the
// largest instance in the exclusive blocks (several ranks on one GPU to NCCL), and the results the ranks' UUIDs.
TEST(PlanMig, TheModeShowsEachRankItsInstance) {
  const Scenario s = scenario({ranked("ar", 2, {at({}, "1g.18gb"), at(3)}), tenant("g")});
  ModeContext ctx;
  ctx.mig_plans["s"] = plan_mig(s, kInstances);
  const Plan p = make_plan(s, ctx, 1);  // s is in mode mig
  ASSERT_EQ(p.sets.size(), 2u);
  using Env = std::vector<std::string>;
  EXPECT_EQ(p.sets[0].env(0, 0), (Env{"CUDA_VISIBLE_DEVICES=MIG-0"}));
  EXPECT_EQ(p.sets[0].env(0, 1), (Env{"CUDA_VISIBLE_DEVICES=MIG-3"}));
  EXPECT_EQ(p.sets[0].env(1, 0), (Env{"CUDA_VISIBLE_DEVICES=MIG-1"}));
  EXPECT_EQ(p.sets[1].name, "mig-largest");
  EXPECT_EQ(p.sets[1].env(0, 1), (Env{"CUDA_VISIBLE_DEVICES=MIG-1"}));
  ASSERT_TRUE(p.config.mig.has_value());
  EXPECT_EQ(p.config.mig->assignment, (std::map<std::string, std::string>{{"ar", "MIG-0"}, {"g", "MIG-1"}}));
  EXPECT_EQ(p.config.mig->rank_assignment,
            (std::map<std::string, std::vector<std::string>>{{"ar", {"MIG-0", "MIG-3"}}}));
  // Ranks of one tenant on instances of one GPU share it as NCCL sees it: each worker is told.
  EXPECT_TRUE(ranks_share_a_gpu(s.tenants[0], s.device));
}

TEST(PlanMig, RanksThatCannotHaveAnInstanceEachAreRefusedNamingTheRank) {
  EXPECT_EQ(message(scenario({ranked("ar", 2, {at(1), at(1)})})),
            "s.json: tenants[0].rank_placements[1].mig_instance: impossible placement: MIG instance 1 is already rank 0 "
            "of ar's (each rank needs its own)");
  Tenant same = ranked("ar", 2);
  same.placement.mig_instance = 2;  // one placement for both ranks: one instance asked twice
  EXPECT_NE(message(scenario({same})).find("tenants[0].placement.mig_instance: impossible placement: MIG instance 2 is "
                                           "already rank 0 of ar's"),
            std::string::npos);
  EXPECT_NE(message(scenario({ranked("ar", 3, {at({}, "1g.18gb"), at({}, "1g.18gb"), at({}, "1g.18gb")})}))
                .find("tenants[0].rank_placements[2].mig_profile: impossible placement: no free MIG instance of profile "
                      "1g.18gb for rank 2 of ar"),
            std::string::npos);
  EXPECT_NE(message(scenario({ranked("ar", 4), tenant("g")}))
                .find("tenants[1].placement: impossible placement: 5 workers (tenants or ranks) need their own MIG "
                      "instance and there are 4"),
            std::string::npos);
}

}  // namespace
}  // namespace ib

namespace ib {
namespace {

TEST(TimesliceRefusal, ExclusiveProcessAndProhibitedCannotTimeSlice) {
  const ComputeModeRefusal timeslice_refusal = mode_row(Mode::timeslice).compute_mode_refusal;
  ASSERT_NE(timeslice_refusal, nullptr);
  EXPECT_FALSE(timeslice_refusal(ComputeMode::default_mode, 0));
  EXPECT_FALSE(timeslice_refusal(ComputeMode::exclusive_thread, 0));  // deprecated; not refused
  const auto ep = timeslice_refusal(ComputeMode::exclusive_process, 2);
  ASSERT_TRUE(ep);
  EXPECT_EQ(*ep, "mode timeslice: GPU 2 is in compute mode Exclusive_Process, where processes cannot share it without "
                 "MPS; interference-bench never changes the compute mode (an administrator could set DEFAULT with "
                 "nvidia-smi -c 0)");
  EXPECT_TRUE(timeslice_refusal(ComputeMode::prohibited, 0));
}

// ---- prepare_modes against the fake NVML: the refusals that follow from the GPU's state ----

nlohmann::json one_gpu(int compute_mode, bool mig) {
  nlohmann::json d = {{"name", "NVIDIA H200"}, {"uuid", "GPU-1"}, {"compute_mode", compute_mode},
                      {"mig", {{"supported", true}, {"current", mig ? 1 : 0}, {"pending", mig ? 1 : 0}}}};
  if (mig)
    d["instances"] = nlohmann::json::array(
        {{{"gi", 1}, {"ci", 0}, {"profile", "3g.71gb"}, {"uuid", "MIG-1"}, {"sm", 60}, {"memory_mb", 71424}, {"slot", 0}},
         {{"gi", 2}, {"ci", 0}, {"profile", "3g.71gb"}, {"uuid", "MIG-2"}, {"sm", 60}, {"memory_mb", 71424}, {"slot", 1}}});
  return {{"init", "ok"}, {"devices", nlohmann::json::array({d})}};
}

Scenario in_mode(Mode m) {
  Scenario s = scenario({tenant("a"), tenant("b")});
  s.mode = m;
  return s;
}

std::string refusal(Backend backend, Mode m) {
  ModeSetup setup;
  ModeContext oo;
  try {
    prepare_modes(ModeRequest{}, backend, {in_mode(m)}, setup, oo, false);
  } catch (const CannotRunError& e) {
    return e.what();
  }
  return "";
}

class PrepareModes : public ib_test::FakeNvmlEnv {};

TEST_F(PrepareModes, TimeslicingRefusesAnExclusiveProcessGpuAndRecordsTheComputeMode) {
  write_config(one_gpu(3, false));
  EXPECT_NE(refusal(Backend::cuda, Mode::timeslice).find("compute mode Exclusive_Process"), std::string::npos);
  write_config(one_gpu(0, false));
  ModeSetup setup;
  ModeContext oo;
  prepare_modes(ModeRequest{}, Backend::cuda, {in_mode(Mode::timeslice)}, setup, oo, false);
  EXPECT_EQ(oo.device.at("compute_mode"), "Default");
  EXPECT_EQ(oo.device.at("name"), "NVIDIA H200");
}

TEST_F(PrepareModes, OnAGpuInMigModeTheOtherModesRunOnAnInstanceAndSaySo) {
  write_config(one_gpu(0, true));
  for (Mode m : {Mode::exclusive, Mode::timeslice, Mode::streams}) {
    EXPECT_EQ(refusal(Backend::cuda, m), "") << mode_name(m);  // someone renting a slice measures it
    ModeSetup setup;
    ModeContext oo;
    prepare_modes(ModeRequest{}, Backend::cuda, {in_mode(m)}, setup, oo, false);
    EXPECT_EQ(oo.mig_instance_note.rfind("one MIG instance, not a whole GPU: GPU 0 is in MIG mode", 0), 0u)
        << mode_name(m) << ": " << oo.mig_instance_note;
    EXPECT_EQ(oo.device.at("measures"), oo.mig_instance_note);  // and the results record it
  }
  // mig itself: each tenant gets an instance, and nothing is said about "one instance"
  ModeSetup setup;
  ModeContext oo;
  prepare_modes(ModeRequest{}, Backend::cuda, {in_mode(Mode::mig)}, setup, oo, false);
  ASSERT_EQ(oo.mig_plans.count("s"), 1u);
  EXPECT_EQ(oo.mig_plans.at("s").rank_instance.size(), 2u);
  EXPECT_TRUE(oo.mig_instance_note.empty());
  // a whole GPU: nothing to say
  write_config(one_gpu(0, false));
  ModeSetup whole;
  ModeContext oo_whole;
  prepare_modes(ModeRequest{}, Backend::cuda, {in_mode(Mode::timeslice)}, whole, oo_whole, false);
  EXPECT_TRUE(oo_whole.mig_instance_note.empty());
}

// Modes mps and mig set up node 0 only (its MPS daemon, its MIG instances): a worker on another node is refused
// before anything is set up, naming the field; exclusive and timeslice place it.
TEST(RefuseOtherNodes, MpsAndMigSetUpNodeZeroOnly) {
  Scenario s = scenario({ranked("ar", 2)});
  Placement far;
  far.node = 1;
  s.tenants[0].rank_placements = {Placement{}, far};
  for (Mode m : {Mode::mps, Mode::mig}) {
    s.mode = m;
    ModeSetup setup;
    ModeContext ctx;
    try {
      prepare_modes(ModeRequest{}, Backend::host, {s}, setup, ctx, false);
      ADD_FAILURE() << mode_name(m) << ": no error";
    } catch (const PlacementError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string("s.json: tenants[0].rank_placements[1].node: mode ") +
                                                mode_name(m) + " sets up node 0 only", 0), 0u) << e.what();
    }
  }
  s.mode = Mode::timeslice;
  ModeSetup setup;
  ModeContext ctx;
  EXPECT_NO_THROW(prepare_modes(ModeRequest{}, Backend::host, {s}, setup, ctx, false));
}

TEST_F(PrepareModes, TheHostBackendDoesNotDependOnTheGpuState) {
  write_config(one_gpu(3, true));
  for (Mode m : {Mode::exclusive, Mode::timeslice, Mode::streams}) {
    EXPECT_EQ(refusal(Backend::host, m), "") << mode_name(m);
    ModeSetup setup;
    ModeContext oo;
    prepare_modes(ModeRequest{}, Backend::host, {in_mode(m)}, setup, oo, false);
    EXPECT_TRUE(oo.mig_instance_note.empty());
  }
}

}  // namespace
}  // namespace ib

namespace ib {
namespace {

// ---- the table of modes: one row per mode, each mode's facts from its own file ----

TEST(ModeTable, EveryModeHasItsRowInTheEnumsOrder) {
  ASSERT_EQ(mode_table().size(), mode_names().size());
  for (const std::string& word : mode_names()) {
    const Mode m = *parse_mode(word);
    EXPECT_EQ(mode_row(m).mode, m) << word;
    EXPECT_NE(mode_row(m).plan, nullptr) << word;
    EXPECT_NE(std::string(mode_description(m)), "") << word;
  }
}

TEST(ModeTable, TheFactsOfEachMode) {
  EXPECT_EQ(modes_in_all(), (std::vector<Mode>{Mode::timeslice, Mode::mps, Mode::mig, Mode::streams}));
  for (Mode m : {Mode::exclusive, Mode::timeslice, Mode::streams}) EXPECT_EQ(extra_blocks_per_round(m, 3), 0u);
  for (Mode m : {Mode::mps, Mode::mig}) EXPECT_EQ(extra_blocks_per_round(m, 3), 3u);  // each tenant's alone block
  EXPECT_TRUE(runs_fixed(Mode::exclusive));
  for (Mode m : {Mode::timeslice, Mode::mps, Mode::mig, Mode::streams}) EXPECT_FALSE(runs_fixed(m));
  for (const ModeRow& row : mode_table()) {
    EXPECT_EQ(row.waives_nvml_errors, row.mode == Mode::mig) << mode_name(row.mode);
    EXPECT_EQ(row.whole_gpu, row.mode != Mode::mig) << mode_name(row.mode);
    EXPECT_EQ(row.tear_down != nullptr, row.mode == Mode::mig) << mode_name(row.mode);
  }
  EXPECT_STREQ(mode_row(Mode::mps).node0_only, "MPS daemon");
  EXPECT_STREQ(mode_row(Mode::mig).node0_only, "MIG instances");
}

// An option of a mode no scenario runs is refused, each by its own mode's row; --mode all takes them all.
TEST(ModeTable, AnOptionOfAModeNoScenarioUsesIsRefused) {
  const auto refusal = [](const ModeRequest& o, Mode m) -> std::string {
    Scenario s = scenario({tenant("a")});
    s.mode = m;
    ModeSetup setup;
    ModeContext ctx;
    try {
      prepare_modes(o, Backend::host, {s}, setup, ctx, false);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  ModeRequest mps;
  mps.mps_pipe_dir = "/tmp";
  EXPECT_EQ(refusal(mps, Mode::timeslice), "--mps-pipe-dir: only used with mode mps");
  ModeRequest baseline;
  baseline.baseline = "b.json";
  EXPECT_EQ(refusal(baseline, Mode::streams),
            "--baseline: only used with mode mig, where the exclusive phase cannot be measured");
  ModeRequest create;
  create.mig_create = {"1g.18gb"};
  EXPECT_EQ(refusal(create, Mode::exclusive), "--mig-create: only used with mode mig");
}

class PrepareRunModes : public ib_test::FakeNvmlEnv {};

// --mode all: every scenario under each mode --mode all runs, in the table's order; a mode this machine cannot
// run (mig on a GPU without MIG mode) is waived with its reason, not refused.
TEST_F(PrepareRunModes, ModeAllRunsEveryModeAndWaivesTheOnesThisMachineCannot) {
  write_config(one_gpu(0, false));
  ModeSetup setup;
  ModeContext ctx;
  Scenario s = scenario({tenant("a"), tenant("b")});
  s.mode = Mode::timeslice;
  const RunModes modes = prepare_run_modes(ModeRequest{}, true, Backend::host, {s}, setup, ctx);
  std::vector<Mode> planned;
  for (const Scenario& p : modes.plan) planned.push_back(p.mode);
  EXPECT_EQ(planned, modes_in_all());
  ASSERT_EQ(modes.waived.count(Mode::mig), 1u);
  EXPECT_NE(modes.waived.at(Mode::mig).find("MIG mode is disabled"), std::string::npos) << modes.waived.at(Mode::mig);
  EXPECT_EQ(modes.waived.count(Mode::timeslice), 0u);
  EXPECT_EQ(modes.waived.count(Mode::streams), 0u);
  // without --mode all: the scenarios as they are
  ModeSetup one;
  ModeContext one_ctx;
  const RunModes as_is = prepare_run_modes(ModeRequest{}, false, Backend::host, {s}, one, one_ctx);
  ASSERT_EQ(as_is.plan.size(), 1u);
  EXPECT_EQ(as_is.plan[0].mode, Mode::timeslice);
  EXPECT_TRUE(as_is.waived.empty());
}

}  // namespace
}  // namespace ib

// nvidia-cuda-mps-control's "get_server_list" prints one server PID a line: those are the run's own GPU
// processes (foreign-load control), anything else in the output is not a PID.
TEST(MpsServerList, ReadsOnePidALineAndIgnoresTheRest) {
  EXPECT_EQ(ib::parse_server_list("4242\n 17 \r\n"), (std::vector<pid_t>{4242, 17}));
  EXPECT_EQ(ib::parse_server_list(""), std::vector<pid_t>{});
  EXPECT_EQ(ib::parse_server_list("no server\n0\n-3\n12x\n99999999999\n7"), std::vector<pid_t>{7});
}

// A fleet node's preflight: each reason it is not ready is named in one line; a node without the GPU
// operator (no validations folder), with MIG settled and no MIG manager state is ready.
TEST(NodeReadiness, EachReasonIsNamedAndAReadyNodePasses) {
  ib::NodeReadiness r;
  r.validations_dir = "/run/nvidia/validations";
  EXPECT_FALSE(ib::node_readiness_refusal(r, 0));
  r.validations_present = true;
  r.validation_files = {"driver-ready", "cuda-ready"};
  const auto why = ib::node_readiness_refusal(r, 0);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("lacks toolkit-ready, plugin-ready"), std::string::npos) << *why;
  r.validation_files = ib::operator_validation_files();
  EXPECT_FALSE(ib::node_readiness_refusal(r, 0));
  r.mig_mode = ib::MigModeState{false, true};
  ASSERT_TRUE(ib::node_readiness_refusal(r, 2));
  EXPECT_NE(ib::node_readiness_refusal(r, 2)->find("GPU 2 has a MIG mode change pending (current disabled, pending enabled)"),
            std::string::npos);
  r.mig_mode = ib::MigModeState{true, true};
  r.mig_config_state = "pending";
  ASSERT_TRUE(ib::node_readiness_refusal(r, 0));
  EXPECT_NE(ib::node_readiness_refusal(r, 0)->find("\"pending\""), std::string::npos);
  r.mig_config_state = "success";
  EXPECT_FALSE(ib::node_readiness_refusal(r, 0));
}

TEST(NodeReadiness, TheValidationFolderIsReadWhereTheEnvironmentPoints) {
  char tmpl[] = "/tmp/ib_validations.XXXXXX";
  ASSERT_TRUE(::mkdtemp(tmpl));
  const std::string dir = tmpl;
  std::ofstream(dir + "/driver-ready") << "";
  ::setenv("IB_GPU_OPERATOR_VALIDATIONS", dir.c_str(), 1);
  ::unsetenv("IB_MIG_CONFIG_STATE");
  ib::ModeSetup setup;
  const ib::NodeReadiness r = ib::read_node_readiness(setup, 0);
  ::unsetenv("IB_GPU_OPERATOR_VALIDATIONS");
  ::unlink((dir + "/driver-ready").c_str());
  ::rmdir(dir.c_str());
  EXPECT_TRUE(r.validations_present);
  EXPECT_EQ(r.validation_files, std::vector<std::string>{"driver-ready"});
  EXPECT_FALSE(r.mig_mode);  // no NVML loaded
}
