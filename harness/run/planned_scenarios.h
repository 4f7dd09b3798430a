// Conducting a run's planned repetitions (run/ conducts, cli/ parses the options): every repetition of every planned
// scenario through the orchestrator, each finalized, aggregated with its scenario's earlier repetitions and
// looked at while it runs (analysis/deciding.h), the results handed to the caller's writers after each one.
#pragma once

#include "harness/analysis/deciding.h"
#include "harness/core/clock.h"
#include "harness/results/results.h"
#include "harness/run/orchestrator.h"
#include "harness/scenario/scenario.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ib {

// What the run's options say about its repetitions: the bootstrap, and how long each one goes on.
struct ConductSettings {
  std::uint64_t seed = 1;
  int resamples = 1000;
  double resolution = 0.0;              // --resolution (0: none)
  StopRule until = StopRule::decided;   // the run's stop rule (stop_rule, analysis/deciding.h)
  int rounds = 10;                      // --rounds
  std::optional<double> max_duration;   // --max-duration
};

// Writes the results so far (every writer of the run, after every repetition).
using WriteRuns = std::function<void(const Results&)>;

// Scenario `s`'s stopping options under these settings: the stop rule with its mode's (stop_rule, runs_fixed).
StoppingOptions stopping_options(const ConductSettings& o, const Scenario& s);

// The plan's longest wall time: every repetition's workers warming up one at a time and every round of
// its budget, each block with its re-warm (a bound to plan a nightly job by, printed before starting).
double worst_case_seconds(const ConductSettings& o, const std::vector<Scenario>& plan);

// Runs every repetition of every planned scenario; the files are rewritten after each one. Stops
// early (keeping what finished) once `stop` says so. The last repetition of each scenario runs until
// its verdicts are decided (deciding.h), looking at the aggregate of all its repetitions so far.
// A mode in `waived_modes` is recorded as waived, not run.
void run_planned_scenarios(const ConductSettings& o, const std::vector<Scenario>& plan,
                           const std::map<Mode, std::string>& waived_modes, Orchestrator& orchestrator, Results& results,
                           const WriteRuns& write_runs, const StopCheck& stop);

}  // namespace ib
