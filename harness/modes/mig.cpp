// Mode mig: each tenant on its own MIG instance (CUDA_VISIBLE_DEVICES=MIG-<uuid>) for its alone and
// colocated blocks. A GPU in MIG mode has no whole device: the exclusive phase comes from the saved
// baseline (--baseline, no exclusive blocks) or runs on the largest instance, and the results say which.
// What it needs from the machine (MIG mode, the instances, each worker's seat, the baseline) is
// modes/mig_setup.cpp; the instances --mig-create makes, modes/mig_instances.cpp.
#include "harness/modes/mig_setup.h"
#include "harness/modes/mode_table.h"

#include "harness/core/errors.h"

namespace ib {

namespace {

std::function<void(RunResult&)> exclusive_from_baseline(const Scenario& s, const ModeContext& ctx) {
  return [&s, &ctx](RunResult& r) {
    for (std::size_t i = 0; i < s.tenants.size(); ++i) {
      const BaselinePhase& b = ctx.baseline.at(s.name + "/" + s.tenants[i].name);
      r.tenants[i].exclusive = b.phase;
      r.tenants[i].resolved_params = b.phase.outcome.resolved;  // the same offered load as the baseline
      r.tenants[i].work = b.work;
    }
  };
}

Plan mig_plan(const Scenario& s, const ModeContext& ctx, int) {
  const auto it = ctx.mig_plans.find(s.name);
  if (it == ctx.mig_plans.end()) throw std::logic_error("no MIG placement was resolved for scenario " + s.name);
  const MigPlan& mig = it->second;
  Plan p;
  MigPlacementInfo placement{mig.instances, {}, {}};
  for (std::size_t i = 0; i < s.tenants.size(); ++i) {
    placement.assignment[s.tenants[i].name] = mig.instance_of(i).uuid;
    if (s.tenants[i].ranks > 1)
      for (int r = 0; r < s.tenants[i].ranks; ++r) placement.rank_assignment[s.tenants[i].name].push_back(mig.instance_of(i, r).uuid);
  }
  p.config.mig = std::move(placement);

  // Each rank of a collective tenant on its own instance (NCCL 2.31 or later, docs/design.md section 7).
  WorkerSet placed{"mig", one_process_per_tenant(s), [&mig](std::size_t i, int rank) {
                     return std::vector<std::string>{"CUDA_VISIBLE_DEVICES=" + mig.instance_of(i, rank).uuid};
                   }};
  placed.device_from_env = true;
  p.sets.push_back(placed);
  if (!ctx.baseline.empty()) {
    p.config.exclusive_source = "baseline file " + ctx.baseline_file;
    // A baseline measured on a MIG instance (mig-sweep's yardstick) is not a whole GPU: say where.
    for (const auto& t : s.tenants) {
      const std::string& on = ctx.baseline.at(s.name + "/" + t.name).measured_on;
      if (!on.empty()) {
        *p.config.exclusive_source += " (measured on " + on + ")";
        break;
      }
    }
    p.before = exclusive_from_baseline(s, ctx);
  } else {
    const MigInstance& big = mig.instances[mig.largest];
    // A collective tenant's ranks all on that instance: several ranks on one GPU to NCCL (2.30 or later).
    WorkerSet largest{"mig-largest", one_process_per_tenant(s), [&big](std::size_t, int) {
                        return std::vector<std::string>{"CUDA_VISIBLE_DEVICES=" + big.uuid};
                      }};
    largest.device_from_env = true;
    p.sets.push_back(largest);
    p.round = exclusive_blocks(s, 1);
    p.config.exclusive_source = "largest MIG instance " + big.profile + " (" + big.uuid + ", " +
                                   std::to_string(big.sm_count) + " SMs): slowdowns are against that instance, not a whole GPU";
    p.after = [](RunResult& r) {
      for (auto& t : r.tenants) t.exclusive.source = PhaseSource::largest_mig_instance;
    };
  }
  for (std::size_t i = 0; i < s.tenants.size(); ++i) p.round.push_back({Phase::alone, 0, {i}});
  p.round.push_back({Phase::colocated, 0, all_tenants(s)});
  return p;
}

void refuse_mig_options(const ModeRequest& o) {
  if (!o.baseline.empty())
    throw InputError("--baseline: only used with mode mig, where the exclusive phase cannot be measured");
  if (!o.mig_create.empty()) throw InputError("--mig-create: only used with mode mig");
}

}  // namespace

Mode mig_mode() { return Mode::mig; }

ModeRow mig_row() {
  ModeRow r;
  r.mode = Mode::mig;
  r.description = "each tenant alone and all together, each on its own MIG instance (exclusive: --baseline)";
  r.plan = mig_plan;
  r.set_up = set_up_mig;
  r.tear_down = tear_down_mig;
  r.refuse_options_when_unused = refuse_mig_options;
  r.needs_nvml = true;  // the instances are found through NVML, whatever the backend
  r.needs_mig_mode = true;
  r.whole_gpu = false;
  r.node0_only = "MIG instances";
  r.extra_blocks_per_tenant = 1;  // each tenant's alone block on its instance
  r.in_all = true;
  r.waives_nvml_errors = true;  // a GPU whose NVML cannot list MIG instances has no mode mig to run
  return r;
}

}  // namespace ib
