// The options of `run` (the default command), as parsed; run_command.cpp turns them into a run.
#pragma once

#include "harness/core/stop_signals.h"
#include "harness/run/foreign_load.h"
#include "kernels/workload.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ib {

struct RunOptions {
  std::string mode;
  std::string scenario;
  std::string suite;
  std::string backend = "cuda";
  std::optional<int> device;
  std::optional<double> duration, warmup, cutoff, collective_timeout;
  std::optional<int> repeat;
  std::string out;
  bool no_raw = false;
  bool force = false;  // --force: replace the results an existing --out folder holds
  double timeout_margin = 60.0;
  std::uint64_t seed = 1;
  int resamples = 1000;
  std::string mps_pipe_dir;
  std::string baseline;
  std::vector<std::string> mig_create;
  std::optional<double> telemetry_hz;  // default: 10 with the cuda backend, off with host
  int rounds = 10;
  std::string until = "decided";          // --until decided|fixed
  std::optional<double> max_duration;     // --max-duration S (default kDefaultBudgetFactor x --duration)
  double resolution = 0.0;                // --resolution X (points of slowdown; 0: none)
  std::string round_order = "abba";
  int max_reruns = 2;
  double max_foreign_cpus = 0.25;
  double max_steal_cpus = default_max_steal_cpus();  // 5% of this machine's CPUs, at least 0.10
  std::string junit, prometheus;  // further outputs (--junit FILE, --prometheus FILE)
  std::string history;  // --history DB: appended to after results.json is written
  std::string html;     // --html FILE
  // The one-line form: --victim-command [--victim-metric M] [--aggressors A,B] -- PROGRAM ARGS...
  bool victim_command = false;
  std::vector<std::string> victim_argv;  // what follows --
  std::string victim_metric;
  std::string aggressors;
  // A run across nodes (docs/design.md section 13): --nodes N, --node-rank R, --conductor HOST:PORT, --token T.
  int nodes = 1;
  std::optional<int> node_rank;  // default: SLURM_PROCID, else JOB_COMPLETION_INDEX, else RANK (torchrun)
  std::string conductor;         // default: MASTER_ADDR:MASTER_PORT (torchrun's)
  std::string token;             // default: SLURM_JOB_ID.SLURM_STEP_ID
  double join_timeout = 60.0;
};

// The options of `run` on `app` (the default command), filled into `o` by the parse.
void add_run_options(CLI::App& app, RunOptions& o);

// `run`: every scenario of the options through its set-up, the output folder and its writers, and the planned
// repetitions (run/planned_scenarios.h); the exit code of the run (or of its refusal).
int run_command(const RunOptions& o, const std::vector<std::string>& argv, const Registry& registry, StopSignals& stop);

// One line on stderr for a refusal (shortened when it is bad input); returns `code`.
int fail(int code, const std::string& message);

}  // namespace ib
