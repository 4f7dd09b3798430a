// What `run` was asked for: the command line parsed into one plain struct (cli/run_options.cpp fills it, cli/node_role.h
// adds which part this harness plays across nodes), and nothing else. run/assemble.h turns it into what the
// orchestrator, the modes, the repetitions and the nodes need; nobody copies the options field by field elsewhere.
#pragma once

#include "harness/modes/mode_setup.h"
#include "harness/results/results.h"
#include "harness/run/foreign_load.h"
#include "harness/run/orchestrator.h"
#include "harness/scenario/scenario.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ib {

struct RunRequest {
  // What runs: a scenario, a suite, or the one-line form; under the scenario's mode, this one, or all of them.
  std::optional<Mode> mode;  // --mode M (overrides the scenario's)
  bool all_modes = false;    // --mode all: every mode --mode all runs (modes/mode_table.h, modes_in_all)
  std::string scenario;
  std::string suite;
  std::string backend = "cuda";  // --backend cuda | host | auto, as the results record it
  std::optional<int> device;
  std::optional<double> duration, warmup, cutoff, collective_timeout;
  std::optional<int> repeat;
  // The one-line form: --victim-command [--victim-metric M] [--aggressors A,B] -- PROGRAM ARGS...
  bool victim_command = false;
  std::vector<std::string> victim_argv;  // what follows --
  std::string victim_metric;
  std::string aggressors;  // as given, comma-separated

  // How each repetition runs and when it stops (the stop rule: stop_rule, analysis/deciding.h).
  double timeout_margin = 60.0;
  std::uint64_t seed = 1;
  int resamples = 1000;
  int rounds = 10;
  StopRule until = StopRule::decided;   // --until decided|fixed
  std::optional<double> max_duration;   // --max-duration S (default kDefaultBudgetFactor x --duration)
  double resolution = 0.0;              // --resolution X (points of slowdown; 0: none)
  RoundOrder round_order = RoundOrder::abba;
  int max_reruns = 2;
  double max_foreign_cpus = 0.25;
  double max_steal_cpus = default_max_steal_cpus();  // 5% of this machine's CPUs, at least 0.10
  std::optional<double> telemetry_hz;  // default: 10 with the cuda backend, off with host
  ModeRequest modes;                   // --baseline, --mig-create, --mps-pipe-dir

  // What it writes.
  std::string out;
  bool no_raw = false;
  bool force = false;             // --force: replace the results an existing --out folder holds
  std::string junit, prometheus;  // further outputs (--junit FILE, --prometheus FILE)
  std::string history;            // --history DB: appended to after results.json is written
  std::string html;               // --html FILE

  // A run across nodes (docs/design.md section 13): --nodes N, --node-rank R, --conductor HOST:PORT, --token T.
  int nodes = 1;
  std::optional<int> node_rank;  // default: SLURM_PROCID, else JOB_COMPLETION_INDEX, else RANK (torchrun)
  std::string conductor;         // default: MASTER_ADDR:MASTER_PORT (torchrun's)
  std::string token;             // default: SLURM_JOB_ID.SLURM_STEP_ID
  double join_timeout = 60.0;
};

// Which part this harness plays in a run across nodes, from the request and the launcher's variables
// (cli/node_role.h resolves it).
struct NodeRole {
  int nodes = 1;       // 1: a run on this node alone
  int node_rank = 0;   // 0 conducts
  std::string host;    // the conductor's address: where node 0 listens and the others connect
  int port = 0;
  std::string token;
};

}  // namespace ib
