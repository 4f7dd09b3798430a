// Before anything runs: resolving what the scenarios' modes need on this machine (docs/design.md sections 7 and 8).
// The steps every mode shares are here (NVML, the node's readiness, the compute mode, a GPU in MIG mode under a
// whole-GPU mode); what one mode needs is its row's set-up in the table of modes (mode_table.h): MPS's control
// binary (mps.cpp), MIG's instances, placement and baseline (mig_setup.cpp). --mode all's waivers too.
#pragma once

#include "harness/modes/mig_instances.h"
#include "harness/modes/plan.h"
#include "harness/nvml/nvml.h"
#include "harness/scenario/scenario.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ib {

class Journal;

// What this machine says about the device the scenarios use, and what the set-up made (docs/design.md sections
// 7 and 8). Everything here happens before anything runs; what it made is undone by tear_down_modes (and by the
// guard's destructor on every other way out).
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

// Loads NVML once (when something needs it); a failure is remembered in setup, not thrown.
void ensure_nvml(ModeSetup& setup, int device);

// Resolves what the scenarios' modes need on this machine before anything runs: refuses a worker on another node
// for a mode that sets up node 0 only, an option of a mode no scenario uses (unless `all_modes`: called once per
// mode for --mode all, where options for the other modes are not an error), a node that is not ready, a compute
// mode a mode cannot share the GPU in; then each mode's own set-up (the MPS control binary, MIG mode, instances
// (--mig-create), placement and baseline), and notes a GPU in MIG mode under a whole-GPU mode. What the plans need
// goes into `ctx`. Throws CannotRunError (exit 3) or InputError (exit 2).
void prepare_modes(const ModeRequest& request, Backend backend, const std::vector<Scenario>& scenarios,
                   ModeSetup& setup, ModeContext& ctx, bool all_modes);

// What runs, in order, and what is waived.
struct RunModes {
  std::vector<Scenario> plan;           // each scenario under its mode, or (--mode all) under each mode in turn
  std::map<Mode, std::string> waived;   // --mode all: the modes this machine cannot run, with the reason
};
// prepare_modes for the scenarios as they are, or (`all_modes`, --mode all) once for each mode --mode all runs
// (modes_in_all(), mode_table.h), a mode this machine cannot run waived rather than refused: its set-up's
// CannotRunError, a placement it cannot give (PlacementError), and for a mode whose row says so an NVML error.
RunModes prepare_run_modes(const ModeRequest& request, bool all_modes, Backend backend,
                           const std::vector<Scenario>& scenarios, ModeSetup& setup, ModeContext& ctx);

// After the last repetition: every mode's tear-down (the MIG instances --mig-create made, destroyed); what could
// not be undone, one line each.
std::vector<std::string> tear_down_modes(ModeSetup& setup);

}  // namespace ib
