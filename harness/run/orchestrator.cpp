#include "harness/run/orchestrator.h"

#include "harness/modes/mode_table.h"
#include "harness/run/repetition.h"

#include <unistd.h>

#include <algorithm>
#include <random>
#include <stdexcept>

namespace ib {

const char* round_order_name(RoundOrder o) { return o == RoundOrder::abba ? "abba" : "shuffle"; }

std::vector<std::vector<std::size_t>> round_schedule(std::size_t blocks_per_round, int rounds, RoundOrder order,
                                                     std::uint64_t seed) {
  std::vector<std::vector<std::size_t>> out;
  std::mt19937_64 rng(seed);
  for (int k = 0; k < rounds; ++k) {
    std::vector<std::size_t> idx(blocks_per_round);
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    if (order == RoundOrder::abba && k % 2 == 1) std::reverse(idx.begin(), idx.end());
    if (order == RoundOrder::shuffle)
      for (std::size_t i = idx.size(); i > 1; --i)  // Fisher-Yates with a portable index draw
        std::swap(idx[i - 1], idx[static_cast<std::size_t>(rng() % i)]);
    out.push_back(std::move(idx));
  }
  return out;
}

RunResult new_run_result(const Scenario& s, int repetition) {
  RunResult r;
  r.scenario = s.name;
  r.scenario_file = s.file;
  r.mode = mode_name(s.mode);
  r.device = s.device;
  r.repetition = repetition;
  r.repetitions = s.repetitions;
  r.warmup_s = s.warmup_s;
  r.duration_s = s.duration_s;
  r.cutoff = s.cutoff;
  r.collective_timeout_s = s.collective_timeout_s;
  r.mode_config.mode = r.mode;
  for (const auto& t : s.tenants) {
    TenantResult tr;
    tr.name = t.name;
    tr.role = t.role;
    tr.workload = t.workload;
    tr.params = t.params;
    tr.placement = t.placement.raw;
    r.tenants.push_back(std::move(tr));
  }
  return r;
}

Orchestrator::Orchestrator(OrchestratorOptions options) : o_(std::move(options)) {
  if (!o_.launcher || !o_.clock) throw std::invalid_argument("the orchestrator needs a launcher and a clock");
}

bool Orchestrator::interrupt_requested() {
  if (!interrupted_ && o_.stop_requested) interrupted_ = o_.stop_requested();
  return interrupted_;
}

RunResult Orchestrator::run(const Scenario& s, int repetition, std::optional<Stopping> stopping, const LookFn& look) {
  RunResult r = new_run_result(s, repetition);
  r.rounds = 0;
  if (!stopping) {
    stopping = Stopping{};
    stopping->first_rounds = stopping->max_rounds = o_.rounds;
    stopping->looks = {o_.rounds};
    stopping->boundaries = {stopping->z};
  }
  r.stopping = *stopping;
  r.round_order = round_order_name(o_.round_order);
  r.mode_config.device = mode_device_facts(o_.modes.device);
  if (interrupt_requested()) {
    r.status = RunStatus::interrupted;
    r.message = "interrupted before the repetition started";
    return r;
  }
  Plan plan = make_plan(s, o_.modes, ++plans_made_);  // the plan's resources go when it does
  ModeConfig config = plan.config;  // what the plan set up, with what the run already knows
  config.mode = r.mode_config.mode;
  config.device = std::move(r.mode_config.device);
  r.mode_config = std::move(config);
  if (plan.before) plan.before(r);
  {
    RepetitionRun rep(o_, s, plan, r, *o_.launcher, *o_.clock, [this] { return interrupt_requested(); }, look);
    rep.run();
  }
  if (plan.after) plan.after(r);
  return r;
}

}  // namespace ib
