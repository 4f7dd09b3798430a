// Before anything runs: resolving what a mode needs on this machine. MIG placement of tenants,
// the saved baseline for a GPU in MIG mode, and MIG instances created with --mig-create (destroyed
// by the guard on every way out).
#pragma once

#include "harness/nvml/nvml.h"
#include "harness/modes/plan.h"
#include "harness/scenario/scenario.h"

#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

namespace ib {

// Assigns every worker (a tenant, or each rank of a collective tenant) its own MIG instance: explicit mig_instance
// first, then mig_profile (first free instance of that profile), then the rest in order. Throws InputError naming
// the field when that is impossible, or for one process's allreduce over several GPUs (PlacementError, an
// InputError). `largest` is the instance with the most SMs (then memory).
MigPlan plan_mig(const Scenario& s, const std::vector<MigInstance>& instances);

// Exclusive phases from a results file written by an exclusive run (raw samples needed), by
// "<scenario>/<tenant>" for every tenant of `scenarios`, read by harness/results/results_reader.h. Throws
// InputError when the file does not read or one is missing.
std::map<std::string, BaselinePhase> load_baseline(const std::string& path, const std::vector<Scenario>& scenarios);

// Why time-slicing cannot run in this compute mode (EXCLUSIVE_PROCESS, PROHIBITED), or nullopt.
std::optional<std::string> timeslice_refusal(ComputeMode mode, int device);

// Creates MIG instances (GPU + compute instance) and destroys exactly those when destroyed.
class MigInstancesGuard {
 public:
  // Throws CannotRunError (and destroys what it created so far) when one cannot be created.
  // Each creation is recorded in `journal` (when given) before it is asked for and once it is made,
  // each destroy once it is done.
  MigInstancesGuard(Nvml& nvml, unsigned device, const std::vector<std::string>& profiles, Journal* journal = nullptr);
  ~MigInstancesGuard();
  MigInstancesGuard(const MigInstancesGuard&) = delete;
  MigInstancesGuard& operator=(const MigInstancesGuard&) = delete;
  const std::vector<CreatedMigInstance>& created() const { return created_; }
  void destroy_all() noexcept;
  const std::vector<std::string>& problems() const { return problems_; }  // failed destroys

 private:
  Nvml& nvml_;
  unsigned device_;
  std::vector<CreatedMigInstance> created_;
  std::vector<std::string> problems_;
  Journal* journal_;
};

// What this machine says about the device the scenarios use, and the refusals that follow from it
// (docs/design.md sections 7 and 8). Everything here happens before anything runs.
struct ModeSetup {
  bool nvml_tried = false;
  std::string nvml_error;
  std::unique_ptr<Nvml> nvml;
  std::unique_ptr<MigInstancesGuard> created;
  nlohmann::json device = nlohmann::json::object();
  std::string mig_instance_note;  // see OrchestratorOptions::mig_instance_note
  Journal* journal = nullptr;     // where --mig-create's instances are recorded
};

// The command-line options that concern the modes.
struct ModeRequest {
  std::string baseline;                 // --baseline FILE (mode mig)
  std::vector<std::string> mig_create;  // --mig-create PROFILE,... (mode mig, root)
  std::string mps_pipe_dir;             // --mps-pipe-dir DIR (mode mps, attach only)
};

// What a fleet node's readiness is judged on (docs/design.md section 10; docs/fleet.md, "Preflight").
struct NodeReadiness {
  // The GPU operator's validation folder (/run/nvidia/validations, or $IB_GPU_OPERATOR_VALIDATIONS):
  // whether it exists and which of its files do.
  std::string validations_dir;
  bool validations_present = false;
  std::vector<std::string> validation_files;
  std::optional<MigModeState> mig_mode;  // NVML's, when read
  std::string mig_config_state;          // $IB_MIG_CONFIG_STATE (the MIG manager's node label), "" when unset
};
// The validation files the GPU operator's validator writes when each step passed.
inline const std::vector<std::string>& operator_validation_files() {
  static const std::vector<std::string> files = {"driver-ready", "toolkit-ready", "cuda-ready", "plugin-ready"};
  return files;
}
// Why this node is not ready to measure on, in one line, or nothing: the GPU operator's validator has
// not passed (its folder exists without a file above), a MIG mode change is pending (it needs a GPU reset),
// or the MIG manager's state is not "success". A node that is not ready is exit 3 before anything runs.
std::optional<std::string> node_readiness_refusal(const NodeReadiness& r, int device);
// The readiness facts of this node (the folder, NVML's MIG mode when NVML is loaded, the environment).
NodeReadiness read_node_readiness(ModeSetup& setup, int device);

// Loads NVML once (when something needs it); a failure is remembered in setup, not thrown.
void ensure_nvml(ModeSetup& setup, int device);

// Resolves what the scenarios' modes need on this machine before anything runs, into `oo`:
// compute mode (timeslice refuses EXCLUSIVE_PROCESS/PROHIBITED), the MPS control binary, MIG mode,
// instances (--mig-create), placement and baseline; and refuses the whole-GPU modes on a GPU in MIG
// mode. What the plans need goes into `ctx`. Throws CannotRunError (exit 3) or InputError (exit 2). `all_modes`: called once per mode
// for --mode all, where options for the other modes are not an error.
void prepare_modes(const ModeRequest& request, Backend backend, const std::vector<Scenario>& scenarios,
                   ModeSetup& setup, ModeContext& ctx, bool all_modes);

}  // namespace ib
