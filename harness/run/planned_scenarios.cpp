// Conducting a run's planned repetitions (conduct.h): the loop over scenarios and repetitions, each repetition's
// finalizing and its scenario's aggregate, with a stop signal during the bootstrap leaving what finished whole.
#include "harness/run/planned_scenarios.h"

#include "harness/analysis/analysis.h"
#include "harness/analysis/ranks.h"
#include "harness/core/stop_signals.h"
#include "harness/modes/mode_table.h"

#include <algorithm>

namespace ib {

namespace {

// A scenario under a mode this machine cannot run (--mode all): recorded, not run.
RunResult waived_run(const Scenario& s, const std::string& reason) {
  RunResult r = new_run_result(s, 1);
  r.status = RunStatus::waived;
  r.message = reason;
  for (auto& t : r.tenants) {
    t.verdict = Verdict::waived;
    t.verdict_reason = "mode " + r.mode + " waived: " + reason;
  }
  return r;
}

// Recomputes the aggregate of the (scenario, mode) that `run` belongs to, over its repetitions so far.
void update_aggregates(Results& results, const RunResult& run, std::uint64_t seed, int resamples, const StopCheck& stop) {
  std::vector<const RunResult*> reps;
  for (const auto& r : results.runs)
    if (r.scenario == run.scenario && r.mode == run.mode) reps.push_back(&r);
  auto fresh = aggregate_repetitions(reps, seed, resamples, stop);
  auto& all = results.aggregates;
  all.erase(std::remove_if(all.begin(), all.end(),
                           [&](const TenantAggregate& a) { return a.scenario == run.scenario && a.mode == run.mode; }),
            all.end());
  all.insert(all.end(), fresh.begin(), fresh.end());
}

// finalize_run on a copy, so that a stop signal during its bootstrap leaves `run` whole: it is then
// finalized without resampling (point estimates, no confidence interval, so no verdict settles on it)
// and says so. False when that happened.
bool finalize_or_interrupt(RunResult& run, std::uint64_t seed, int resamples, const StopCheck& stop) {
  RunResult attempt = run;
  try {
    finalize_run(attempt, seed, resamples, stop);
    run = std::move(attempt);
    return true;
  } catch (const Interrupted&) {
    finalize_run(run, seed, 0);
    if (run.message.empty()) run.message = "interrupted during the analysis: no confidence intervals computed";
    return false;
  }
}

// The aggregate of `run`'s (scenario, mode); without resampling when a stop signal ends the bootstrap.
void aggregate_or_interrupt(Results& results, const RunResult& run, std::uint64_t seed, int resamples,
                            const StopCheck& stop) {
  try {
    update_aggregates(results, run, seed, resamples, stop);
  } catch (const Interrupted&) {
    update_aggregates(results, run, seed, 0, {});
  }
  attach_amplification(results.runs, results.aggregates);  // a collective's, once its single-rank reference has run
}

// The repetitions of `run`'s (scenario, mode) in `results`, in order.
std::vector<const RunResult*> repetitions_of(const Results& results, const std::string& scenario, const std::string& mode) {
  std::vector<const RunResult*> reps;
  for (const auto& r : results.runs)
    if (r.scenario == scenario && r.mode == mode) reps.push_back(&r);
  return reps;
}

}  // namespace

StoppingOptions stopping_options(const ConductSettings& o, const Scenario& s) {
  StoppingOptions st;
  st.until = stop_rule(o.until, o.resamples, runs_fixed(s.mode));
  st.rounds = o.rounds;
  st.duration_s = s.duration_s;
  st.max_duration_s = o.max_duration.value_or(0.0);
  st.resolution = o.resolution;
  st.resamples = o.resamples;
  return st;
}

double worst_case_seconds(const ConductSettings& o, const std::vector<Scenario>& plan) {
  double total = 0.0;
  for (const Scenario& s : plan) {
    const StoppingOptions st = stopping_options(o, s);
    const int last_rounds = st.until == StopRule::fixed ? st.rounds : budget_rounds(st);
    const double n = static_cast<double>(s.tenants.size());
    // exclusive blocks and one colocated block per round, and what the mode adds (MPS, MIG: each tenant's alone block)
    const double blocks = n + 1 + static_cast<double>(extra_blocks_per_round(s.mode, s.tenants.size()));
    const double block_s = s.duration_s / st.rounds + 0.05;
    total += s.repetitions * 2 * n * s.warmup_s +
             ((s.repetitions - 1) * st.rounds + last_rounds) * blocks * block_s;
  }
  return total;
}

void run_planned_scenarios(const ConductSettings& o, const std::vector<Scenario>& plan, const std::map<Mode, std::string>& waived_modes,
                           Orchestrator& orchestrator, Results& results, const WriteRuns& write_runs,
                           const StopCheck& stop) {
  // Bootstrap seeds: repetition `rep` of the k-th planned scenario uses seed + (k << 16) + (rep - 1) * 977,
  // its tenant i that + i; the aggregate of the scenario the first repetition's seed, so that with one
  // repetition the aggregate is that repetition's estimate exactly (and a look's figures are the
  // results'). A run is reproducible from meta.bootstrap.seed.
  std::uint64_t index = 0;
  const auto stopped = [&] { return orchestrator.interrupted() || stop(); };
  const auto add = [&](RunResult run) {
    results.runs.push_back(std::move(run));
    aggregate_or_interrupt(results, results.runs.back(), o.seed + (index << 16), o.resamples, stop);
    results.summary = summarize_results(results.aggregates, static_cast<int>(results.runs.size()), stopped());
    write_runs(results);  // after every repetition: an interrupted run keeps what it finished
  };
  for (const auto& s : plan) {
    if (const auto w = waived_modes.find(s.mode); w != waived_modes.end()) {
      add(waived_run(s, w->second));
      ++index;
      continue;
    }
    int earlier_rounds = 0;
    for (int rep = 1; rep <= s.repetitions && !stopped(); ++rep) {
      const Stopping plan_of_rep = plan_stopping(stopping_options(o, s), rep, s.repetitions, earlier_rounds);
      const LookSettings look_settings{o.seed + (index << 16), o.resamples, o.resolution};
      const LookFn look = [&, look_settings](const RunResult& so_far, int) {
        return look_at(repetitions_of(results, so_far.scenario, so_far.mode), so_far, so_far.stopping.z, look_settings, stop);
      };
      RunResult run;
      try {
        run = orchestrator.run(s, rep, plan_of_rep, runs_fixed(s.mode) ? LookFn{} : look);
      } catch (const CannotRunError&) {  // e.g. the MPS daemon would not start: keep what finished
        write_runs(results);
        throw;
      }
      earlier_rounds += run.rounds;
      finalize_or_interrupt(run, o.seed + (index << 16) + static_cast<std::uint64_t>(rep - 1) * 977, o.resamples, stop);
      add(std::move(run));
    }
    ++index;
    if (stopped()) break;
  }
}

}  // namespace ib
