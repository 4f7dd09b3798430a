// A run assembled once from its request (run_request.h): what the results' meta, the scenarios, the repetitions
// (conduct.h), the orchestrator (orchestrator.h), the modes (modes/mode_setup.h) and the nodes need, each worked
// out here and nowhere else. The stop rule is analysis/deciding.h's stop_rule, asked here for the run and by
// conduct.h for each scenario. cli/run_command.cpp wires the parts to what it makes (the output folder, the
// writers, the launcher).
#pragma once

#include "harness/core/clock.h"
#include "harness/modes/mode_setup.h"
#include "harness/results/results.h"
#include "harness/run/planned_scenarios.h"
#include "harness/run/orchestrator.h"
#include "harness/run/run_request.h"
#include "harness/scenario/scenario.h"

#include <string>
#include <vector>

namespace ib {

// What the nodes of a run across nodes need (cli/run_nodes.h turns it into the conductor's and a node's options).
struct NodeParts {
  NodeRole role;
  double join_timeout_s = 60.0;
  std::string worker_exe;  // this binary
  std::string log_dir;     // a node's workers' logs (its --out folder's logs/)
};

struct RunParts {
  // The results' meta as the request sets it (argv, bootstrap, limits, the stop rule, rounds, ...) and the facts
  // of this run (start time, host, scheduler, CPUs); the build (version, sha) and the backend are added later.
  Meta meta;
  std::string out_dir;           // --out, or a new folder interference-bench-results/<UTC time>-<pid>
  ScenarioOverrides overrides;   // what the request overrides in every scenario
  ConductSettings conduct;       // the repetitions: bootstrap and how long each goes on
  // The orchestrator's settings from the request: what is made later (the launcher, the clock, NVML, the
  // temporary folder, the backend once resolved) is attached by the caller.
  OrchestratorOptions orchestrator;
  NodeParts nodes;
};

// Everything the request says, worked out once. `argv`: as the results record it.
RunParts assemble_run(const RunRequest& r, const NodeRole& role, const std::vector<std::string>& argv);

// The backend the run uses (--backend auto: cuda where a GPU is usable, else host, said loudly), into the meta and
// the orchestrator's options. Throws CannotRunError (exit 3) when the GPU is unusable, or --backend cuda has none.
Backend resolve_backend(const RunRequest& r, RunParts& parts);

// Every scenario of the request, loaded and validated before anything runs (exit 2 on the first problem): the
// scenario file, the suite's for this backend (its name into the meta), or the one-line form's; the single-rank
// references of amplification after their scenarios.
std::vector<Scenario> load_run_scenarios(const RunRequest& r, const RunParts& parts, const Registry& registry,
                                         Backend backend, Meta& meta);

// NVML telemetry beside every block (docs/design.md section 5) and the GPU side of the foreign-load check, where
// NVML answers (on the MIG instances the modes use, modes/mig_setup.h), into the orchestrator's options; what was
// attached into `meta.telemetry`.
void attach_nvml(const RunRequest& r, Backend backend, int device, ModeSetup& setup, OrchestratorOptions& oo,
                 Meta& meta);

}  // namespace ib
