// A mode is a plan (docs/design.md section 3): which worker processes exist for a repetition, with which
// environment, which blocks one round holds, what is set up before the workers start and torn down
// after them, and which phases are not measured but taken from elsewhere. The orchestrator runs any
// plan and knows nothing of MPS or MIG. Each mode's plan maker is in its own file, harness/modes/<mode>.cpp,
// and reached through its row of the table of modes (make_plan, harness/modes/mode_table.h).
#pragma once

#include "harness/nvml/nvml.h"
#include "harness/results/results.h"
#include "harness/scenario/scenario.h"

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ib {

class Journal;

// Mode mig: where each tenant of a scenario runs, each of its ranks on an instance of its own (resolved
// and validated before anything runs).
struct MigPlan {
  std::vector<MigInstance> instances;  // every MIG device of the GPU
  // Per tenant, per rank (one entry for a tenant without ranks): index into instances.
  std::vector<std::vector<std::size_t>> rank_instance;
  std::size_t largest = 0;             // where the exclusive phase runs when there is no baseline
  const MigInstance& instance_of(std::size_t tenant, int rank = 0) const {
    return instances.at(rank_instance.at(tenant).at(static_cast<std::size_t>(rank)));
  }
};

// An exclusive phase read from a saved results file, with the work per sample it was measured with.
struct BaselinePhase {
  std::string workload;
  PhaseResult phase;
  Work work;
  // "" from a whole GPU; else where its exclusive run measured it (that run's mode_config.exclusive_source,
  // e.g. "one MIG instance, not a whole GPU: ..."): mig-sweep's yardstick on the GPU's largest instance.
  std::string measured_on;
};

// What the modes were given and found before anything ran (prepare_modes fills it).
struct ModeContext {
  std::string run_dir;            // private temporary folder of this invocation (MPS pipes)
  std::string log_dir;            // --out/logs (the MPS daemon's logs go below it)
  std::string mps_pipe_dir;       // mode mps: attach to this daemon instead of starting one
  std::map<std::string, MigPlan> mig_plans;  // mode mig: by scenario name
  // Saved exclusive phases (--baseline), by "<scenario>/<tenant>": used instead of measuring.
  std::map<std::string, BaselinePhase> baseline;
  std::string baseline_file;
  nlohmann::json device;          // what was read about the device (compute mode, MIG mode), per run
  // Non-empty when the GPU is in MIG mode: modes other than mig then run on the one MIG instance CUDA
  // shows a worker, and this says so in each such run (mode_config.exclusive_source).
  std::string mig_instance_note;
  Journal* journal = nullptr;     // where private MPS daemons are recorded before they start
};

// Worker processes of one kind, alive for the whole repetition: e.g. plain processes for the
// exclusive blocks and MPS clients for the alone and colocated blocks.
struct WorkerSet {
  std::string name;                                 // in log file names: "plain", "mps", "mig", ...
  std::vector<std::vector<std::size_t>> processes;  // per process: the tenants it runs (slots, in order)
  // The environment a process gets on top of the harness's, by its first tenant and its rank (0 for a
  // tenant without ranks): a rank may have a placement of its own (a MIG instance, an MPS share).
  std::function<std::vector<std::string>(std::size_t tenant, int rank)> env;
  bool mps_client = false;        // its env reaches an MPS daemon (otherwise MPS is kept away)
  bool device_from_env = false;   // CUDA_VISIBLE_DEVICES names its device: CUDA device 0 inside
};

// One block of a round: `tenants` of worker set `set` are released together and measure `phase`.
struct BlockSpec {
  Phase phase = Phase::exclusive;
  std::size_t set = 0;
  std::vector<std::size_t> tenants;
};

struct Plan {
  // What the plan set up, for the run's mode_config (mps, mig, exclusive_source; the orchestrator adds
  // mode and device).
  ModeConfig config;
  std::vector<WorkerSet> sets;
  std::vector<BlockSpec> round;   // one round's blocks in canonical order (rounds reorder them)
  // Before any worker starts (e.g. exclusive phases from a baseline file) and after the last block
  // (e.g. alone := exclusive under time-slicing). May be empty.
  std::function<void(RunResult&)> before;
  std::function<void(RunResult&)> after;
  // Processes of this run that are not workers (the MPS servers of its daemon), asked before each
  // block: foreign-load control counts their CPU time and their GPU compute process as ours. May be empty.
  std::function<std::vector<pid_t>()> helper_pids;
  // What the plan set up (an MPS daemon); released when the plan is destroyed, on every way out.
  std::shared_ptr<void> resources;
};

// ModeContext::device (mode_setup's JSON words) as the results record them; a key without a field
// goes to ModeDeviceFacts::unmapped.
ModeDeviceFacts mode_device_facts(const nlohmann::json& device);

// Shared by the plans: exclusive blocks, one per tenant, on set `set`; one process per tenant.
std::vector<BlockSpec> exclusive_blocks(const Scenario& s, std::size_t set);
std::vector<std::vector<std::size_t>> one_process_per_tenant(const Scenario& s);
std::vector<std::size_t> all_tenants(const Scenario& s);
// The alone phase is the exclusive one by definition (time-slicing, streams): after the blocks, each
// tenant's alone phase refers to its exclusive phase.
void alone_is_exclusive(Plan& p);
// A phase that is by definition another one (alone under time-slicing is exclusive): its outcome
// and statistics, no repeated samples.
PhaseResult reference_to(const PhaseResult& p, PhaseSource source);

}  // namespace ib
