// When a repetition stops adding rounds (docs/design.md section 4, "Deciding"; docs/methodology.md,
// "Running until decided"): its stopping plan (the looks and their O'Brien-Fleming boundaries,
// harness/stats/sequential.h) and the look itself, which judges every tenant of the scenario at the
// look's boundary over the repetitions so far.
#pragma once

#include "harness/results/results.h"
#include "harness/stats/bootstrap.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace ib {

struct StoppingOptions {
  StopRule until = StopRule::decided;
  int rounds = 10;               // --rounds: rounds before the first look
  int look_every = 2;            // rounds between looks (a pair keeps ABBA's balance)
  double duration_s = 10.0;      // the scenario's measured seconds per phase for those rounds
  double max_duration_s = 0.0;   // --max-duration: the most seconds per phase (0: kDefaultBudgetFactor x duration)
  double resolution = 0.0;       // --resolution: a half-width that is enough (0: none)
  int resamples = 1000;          // no interval (< 2): fixed length, nothing to decide on
};
// The stop rule, decided here and nowhere else: a repetition runs until its verdicts are decided when --until
// decided asked for it, the bootstrap gives intervals to decide on (--resamples 2 or more) and its mode has
// something to decide (`mode_runs_fixed` false: mode exclusive measures baselines only, modes/mode_table.h);
// otherwise it runs --rounds rounds. The run's rule (its meta.until) is the one without a mode.
StopRule stop_rule(StopRule until, int resamples, bool mode_runs_fixed = false);

// --max-duration's default, in multiples of --duration: the first look after the planned length, the
// last at twice it (a nightly suite's wall time at most about doubles; measured in docs/measurements).
constexpr double kDefaultBudgetFactor = 2.0;

// The most rounds a repetition that runs until decided may run: --max-duration over the block length
// duration / rounds (at least `rounds`).
int budget_rounds(const StoppingOptions& o);

// The plan of repetition `repetition` (1-based) of `repetitions`, after `earlier_rounds` rounds of the
// earlier ones. Only the last repetition runs until decided (the earlier ones are restarts of the same
// fixed length, so that every repetition is alike); its looks count every repetition's rounds.
Stopping plan_stopping(const StoppingOptions& o, int repetition, int repetitions, int earlier_rounds);

struct LookSettings {
  std::uint64_t seed = 1;        // the aggregate's seed, so the last look's figures are the results'
  int resamples = 1000;
  double resolution = 0.0;
};

// One look: every tenant's P95 slowdown over `earlier` and `so_far` (summarised here) at boundary z.
// decided: every tenant's interval lies on one side of the cutoff; resolution: every tenant is decided
// or its half-width is at most settings.resolution; nullopt: go on. A stop signal during the bootstrap:
// nullopt (the repetition sees the signal next and stops).
std::optional<StoppedBy> look_at(const std::vector<const RunResult*>& earlier, const RunResult& so_far, double z,
                                 const LookSettings& settings, const StopCheck& stop = {});

}  // namespace ib
