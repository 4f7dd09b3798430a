// The run assembled once from its request (harness/run/assemble.h), and the stop rule it and the repetitions ask
// (stop_rule, harness/analysis/deciding.h): hand cases for --until fixed and decided, --resamples below 2, and a
// mode that runs fixed (exclusive, from the table of modes).
#include "harness/analysis/deciding.h"
#include "harness/modes/mode_table.h"
#include "harness/run/assemble.h"
#include "harness/run/planned_scenarios.h"

#include <gtest/gtest.h>

namespace ib {
namespace {

TEST(StopRule, DecidedOnlyWhenAskedWithIntervalsAndSomethingToDecide) {
  EXPECT_EQ(stop_rule(StopRule::fixed, 1000), StopRule::fixed);
  EXPECT_EQ(stop_rule(StopRule::decided, 1000), StopRule::decided);
  EXPECT_EQ(stop_rule(StopRule::decided, 2), StopRule::decided);
  EXPECT_EQ(stop_rule(StopRule::decided, 1), StopRule::fixed);  // no interval to decide on
  EXPECT_EQ(stop_rule(StopRule::decided, 0), StopRule::fixed);
  EXPECT_EQ(stop_rule(StopRule::decided, 1000, runs_fixed(Mode::exclusive)), StopRule::fixed);  // baselines only
  EXPECT_EQ(stop_rule(StopRule::decided, 1000, runs_fixed(Mode::timeslice)), StopRule::decided);
  EXPECT_EQ(stop_rule(StopRule::fixed, 1000, runs_fixed(Mode::mig)), StopRule::fixed);
}

Scenario scenario_in(Mode m, std::size_t tenants) {
  Scenario s;
  s.name = "s";
  s.mode = m;
  s.duration_s = 2.0;
  s.warmup_s = 0.0;
  s.repetitions = 1;
  s.tenants.resize(tenants);
  return s;
}

TEST(StopRule, EachScenarioAsksItWithItsMode) {
  ConductSettings c;
  c.until = StopRule::decided;
  EXPECT_EQ(stopping_options(c, scenario_in(Mode::timeslice, 2)).until, StopRule::decided);
  EXPECT_EQ(stopping_options(c, scenario_in(Mode::exclusive, 2)).until, StopRule::fixed);
  c.resamples = 1;
  EXPECT_EQ(stopping_options(c, scenario_in(Mode::timeslice, 2)).until, StopRule::fixed);
  c.resamples = 1000;
  c.until = StopRule::fixed;
  EXPECT_EQ(stopping_options(c, scenario_in(Mode::mps, 2)).until, StopRule::fixed);
}

TEST(AssembleRun, TheRunsStopRuleIsTheSameInTheMetaAndTheRepetitions) {
  RunRequest r;
  const auto parts = [&r] { return assemble_run(r, NodeRole{}, {"interference-bench"}); };
  EXPECT_EQ(parts().meta.until, StopRule::decided);
  EXPECT_EQ(parts().conduct.until, StopRule::decided);
  r.resamples = 1;  // --resamples 1: nothing to decide on
  EXPECT_EQ(parts().meta.until, StopRule::fixed);
  EXPECT_EQ(parts().conduct.until, StopRule::fixed);
  r.resamples = 1000;
  r.until = StopRule::fixed;
  EXPECT_EQ(parts().meta.until, StopRule::fixed);
  EXPECT_EQ(parts().conduct.until, StopRule::fixed);
}

TEST(AssembleRun, EachPartGetsWhatTheRequestSays) {
  RunRequest r;
  r.out = "/tmp/ib-out";
  r.mode = Mode::mps;
  r.duration = 3.0;
  r.seed = 7;
  r.resamples = 500;
  r.rounds = 4;
  r.max_duration = 9.0;
  r.resolution = 0.05;
  r.round_order = RoundOrder::shuffle;
  r.max_reruns = 1;
  r.max_foreign_cpus = 0.5;
  r.max_steal_cpus = 0.2;
  r.timeout_margin = 5.0;
  r.modes.mps_pipe_dir = "/tmp/mps";
  r.join_timeout = 12.0;
  NodeRole role;
  role.nodes = 2;
  role.node_rank = 1;
  role.host = "n0";
  role.port = 4242;
  role.token = "t";
  const RunParts p = assemble_run(r, role, {"interference-bench", "--seed", "7"});
  EXPECT_EQ(p.out_dir, "/tmp/ib-out");
  EXPECT_EQ(p.meta.argv, (std::vector<std::string>{"interference-bench", "--seed", "7"}));
  EXPECT_EQ(p.meta.bootstrap_seed, 7u);
  EXPECT_EQ(p.meta.bootstrap_resamples, 500);
  EXPECT_EQ(p.meta.rounds, 4);
  EXPECT_EQ(p.meta.max_duration_s, 9.0);
  EXPECT_EQ(p.meta.max_reruns, 1);
  EXPECT_EQ(p.meta.max_foreign_cpus, 0.5);
  EXPECT_EQ(p.overrides.mode, Mode::mps);
  EXPECT_FALSE(p.overrides.lenient_placement);
  EXPECT_EQ(p.overrides.duration_s, 3.0);
  EXPECT_EQ(p.conduct.seed, 7u);
  EXPECT_EQ(p.conduct.rounds, 4);
  EXPECT_EQ(p.conduct.max_duration, 9.0);
  EXPECT_EQ(p.conduct.resolution, 0.05);
  EXPECT_EQ(p.orchestrator.log_dir, "/tmp/ib-out/logs");
  EXPECT_EQ(p.orchestrator.modes.log_dir, "/tmp/ib-out/logs");
  EXPECT_EQ(p.orchestrator.modes.mps_pipe_dir, "/tmp/mps");
  EXPECT_EQ(p.orchestrator.round_order, RoundOrder::shuffle);
  EXPECT_EQ(p.orchestrator.rounds, 4);
  EXPECT_EQ(p.orchestrator.max_reruns, 1);
  EXPECT_EQ(p.orchestrator.limits.max_steal_cpus, 0.2);
  EXPECT_EQ(p.orchestrator.timeout_margin_s, 5.0);
  EXPECT_FALSE(p.orchestrator.worker_exe.empty());
  EXPECT_EQ(p.nodes.role.host, "n0");
  EXPECT_EQ(p.nodes.role.port, 4242);
  EXPECT_EQ(p.nodes.join_timeout_s, 12.0);
  EXPECT_EQ(p.nodes.log_dir, "/tmp/ib-out/logs");
  EXPECT_EQ(p.nodes.worker_exe, p.orchestrator.worker_exe);
  // --mode all: no override, and the placement keys of the other modes are kept for their mode
  r.mode.reset();
  r.all_modes = true;
  const RunParts all = assemble_run(r, role, {});
  EXPECT_FALSE(all.overrides.mode);
  EXPECT_TRUE(all.overrides.lenient_placement);
  // no --out: a new folder of its own under interference-bench-results/
  r.out.clear();
  EXPECT_EQ(assemble_run(r, role, {}).out_dir.rfind("interference-bench-results/", 0), 0u);
}

// The plan's worst case counts each tenant's alone block where the mode adds one (MPS, MIG: modes/mode_table.h).
TEST(WorstCase, CountsTheBlocksEachModeAdds) {
  ConductSettings c;
  c.until = StopRule::fixed;
  c.rounds = 1;
  const double timeslice = worst_case_seconds(c, {scenario_in(Mode::timeslice, 2)});
  const double mps = worst_case_seconds(c, {scenario_in(Mode::mps, 2)});
  // one round of 2 s blocks (+ 0.05 s re-warm): 3 blocks under time-slicing, 5 under MPS
  EXPECT_DOUBLE_EQ(timeslice, 3 * 2.05);
  EXPECT_DOUBLE_EQ(mps, 5 * 2.05);
}

}  // namespace
}  // namespace ib
