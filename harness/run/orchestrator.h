// Runs one scenario repetition as its mode's plan (harness/modes/plan.h): the worker processes set up
// once, then R rounds of blocks (exclusive, alone, colocated; docs/design.md section 3) released from a
// barrier, each watched for foreign load, a watchdog, and stopping on a stop signal (core/stop_signals.h).
#pragma once

#include "harness/run/foreign_load.h"
#include "harness/run/launcher.h"
#include "harness/modes/plan.h"
#include "harness/nvml/nvml.h"
#include "harness/results/results.h"
#include "harness/scenario/scenario.h"

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace ib {

// How the blocks of one round are ordered from round to round.
enum class RoundOrder { abba, shuffle };
const char* round_order_name(RoundOrder o);

// The blocks of `rounds` rounds: per round the indices into a round of `blocks_per_round` blocks, in
// the order they run. abba: the canonical order in even rounds, reversed in odd ones (so a linear
// drift affects every phase alike over two rounds); shuffle: a seeded random order in every round.
std::vector<std::vector<std::size_t>> round_schedule(std::size_t blocks_per_round, int rounds, RoundOrder order,
                                                     std::uint64_t seed);

struct OrchestratorOptions {
  Backend backend = Backend::host;
  std::string worker_exe;         // this binary; workers run `<exe> worker ...`
  std::string log_dir;            // worker logs go here
  double timeout_margin_s = 60.0; // a worker may exceed warm-up or a block by this much, then it is killed
  double stop_grace_s = 3.0;      // after "end", how long a worker has to exit before SIGKILL
  // True once a stop signal arrived (StopSignals::check(); never waits), or empty: never.
  std::function<bool()> stop_requested;
  // How workers are started and waited for (launcher.h), both required: the tool passes a
  // ProcessLauncher and a SystemClock woken by the StopSignals descriptor, tests a fake for both.
  Launcher* launcher = nullptr;
  Clock* clock = nullptr;
  std::function<void(const std::string&)> progress;  // one-line status, or empty
  ModeContext modes;              // what the mode plans need (MPS pipes, MIG placement, baseline)
  Nvml* nvml = nullptr;           // telemetry source; nullptr or telemetry_hz 0: no telemetry
  unsigned telemetry_device = 0;  // the physical GPU (also in mode mig)
  double telemetry_hz = 0.0;
  // Rounds and foreign-load control. `rounds`: the rounds before the first look (all of them when the
  // run's Stopping says fixed); a block lasts duration / rounds.
  int rounds = 10;
  RoundOrder round_order = RoundOrder::abba;
  std::uint64_t seed = 1;         // for RoundOrder::shuffle
  double rewarm_s = 0.05;         // unreported samples at the start of each block
  // "Begin block K at T" (GoCommand::at_ns): T lies at least this far after the release (and no nearer than the
  // re-warm), so every worker has its go by then (a remote one a one-way delay later) and all start together,
  // not one go line apart.
  double start_lead_s = 0.02;
  // Called before each block is released (a run across nodes: each node's clock re-measured); may be empty.
  std::function<void()> before_block;
  ForeignLoadLimits limits;
  int max_reruns = 2;             // contaminated blocks re-run per repetition, at most
  // Fills the GPU fields of a block's foreign load (NVML: processes that are not `own`, utilisation in
  // an idle gap); empty without a GPU.
  std::function<void(ForeignLoad&, const std::vector<pid_t>& own)> gpu_load_probe;
};

// A run's result before any block: the scenario's settings and one entry per tenant.
RunResult new_run_result(const Scenario& s, int repetition);

// Asked at each planned look but the last (harness/analysis/deciding.h) with the repetition so far
// and the look's index into Stopping::looks: why to stop now (decided, resolution), or nullopt.
using LookFn = std::function<std::optional<StoppedBy>(const RunResult& so_far, int look)>;

class Orchestrator {
 public:
  // Throws std::invalid_argument without a launcher and a clock.
  explicit Orchestrator(OrchestratorOptions options);
  // Runs the scenario's plan; samples only, no metrics (see analysis.h). `stopping`: the repetition's
  // stopping plan (default: options.rounds rounds, fixed), recorded in the result with what became of
  // it; `look` is asked at its looks. Throws CannotRunError when the mode cannot be set up (the MPS
  // daemon would not start).
  RunResult run(const Scenario& scenario, int repetition, std::optional<Stopping> stopping = std::nullopt,
                const LookFn& look = {});
  bool interrupted() const { return interrupted_; }

 private:
  // True once stop_requested() said so (latched; never waits).
  bool interrupt_requested();

  OrchestratorOptions o_;
  bool interrupted_ = false;
  int plans_made_ = 0;
};

}  // namespace ib
