// The sharing modes, one row each (docs/design.md section 3): everything the rest of the harness asks about a
// mode is answered here, from the row its own file under harness/modes/ gives (`<mode>_row()` in `<mode>.cpp`).
// Nothing outside harness/modes/ (and the scenario parser, which reads the mode's word) names a mode's enum
// value: cmake/check_seams.py fails the build when a file does. Adding a mode: its word in the Mode enum
// (harness/scenario/scenario.h), one file harness/modes/<mode>.cpp returning its row, and that row in the table
// (mode_table.cpp); docs/architecture.md has the recipe.
#pragma once

#include "harness/modes/device_readiness.h"
#include "harness/modes/mode_setup.h"
#include "harness/modes/plan.h"
#include "harness/scenario/scenario.h"

#include <cstddef>
#include <string>
#include <vector>

namespace ib {

// One mode: a plain struct of values and functions (a null function: the mode has nothing to do there).
struct ModeRow {
  Mode mode = Mode::exclusive;
  const char* description = "";  // one line for `list modes`
  // The repetition's plan: worker sets, one round's blocks, set-up and tear-down around the workers (plan.h).
  // Throws CannotRunError when the mode's resources cannot be set up (the MPS daemon would not start).
  Plan (*plan)(const Scenario& s, const ModeContext& ctx, int sequence) = nullptr;

  // --- What it needs from this machine before anything runs (prepare_modes, mode_setup.h) ---
  // Its own set-up for the scenarios in this mode (the MPS control binary; MIG mode, instances, placement,
  // baseline). Throws CannotRunError (exit 3) or InputError (exit 2).
  void (*set_up)(const ModeRequest& o, const std::vector<Scenario>& in_mode, ModeSetup& setup, ModeContext& ctx,
                 int device) = nullptr;
  // After the last repetition: undoes what set_up made (MIG instances); what could not be undone, a line each.
  std::vector<std::string> (*tear_down)(ModeSetup& setup) = nullptr;
  // Refuses (InputError) the options only this mode uses when no scenario runs in it (not under --mode all).
  void (*refuse_options_when_unused)(const ModeRequest& o) = nullptr;
  // Why the device's compute mode refuses this mode, or nullopt (time-slicing: EXCLUSIVE_PROCESS, PROHIBITED).
  ComputeModeRefusal compute_mode_refusal = nullptr;
  bool time_slices_gpu = false;   // processes share the GPU by the driver's time-slicing: the compute mode is read
  bool needs_nvml = false;        // NVML is needed even on the host backend (MIG instances are found through it)
  bool needs_mig_mode = false;    // runs on MIG instances: MIG mode must be on (its set-up says how when it is off)
  bool whole_gpu = true;          // expects a whole GPU: on a GPU in MIG mode it measures one instance and says so
  // What it sets up on node 0 only, for a refusal of a worker placed elsewhere ("MPS daemon"); null: any node.
  const char* node0_only = nullptr;
  // What it runs in one process on one node ("every tenant in one process"), for a refusal of tenants
  // placed on more than one node; null: each tenant's worker goes to its own node.
  const char* one_process = nullptr;

  // --- How its repetitions run ---
  std::size_t extra_blocks_per_tenant = 0;  // blocks per round beyond the exclusive and colocated ones (alone)
  bool runs_fixed = false;                  // always --rounds rounds, never a look (nothing to decide)

  // --- --mode all ---
  bool in_all = false;             // --mode all runs it
  bool waives_nvml_errors = false; // under --mode all, an NVML error in its set-up waives it (else: exit 3)
};

// Every mode, in the Mode enum's order.
const std::vector<ModeRow>& mode_table();
const ModeRow& mode_row(Mode m);

// The plan of scenario `s` under its mode. `sequence` counts the plans this invocation made (1, 2, ...), for
// names that must not repeat (the MPS daemon's folders).
Plan make_plan(const Scenario& s, const ModeContext& ctx, int sequence);
const char* mode_description(Mode m);
// The modes --mode all runs, in order.
std::vector<Mode> modes_in_all();
// Blocks one round holds beyond each tenant's exclusive block and the colocated block.
std::size_t extra_blocks_per_round(Mode m, std::size_t tenants);
// Always a fixed number of rounds, never a look (mode exclusive measures baselines only: nothing to decide).
bool runs_fixed(Mode m);

}  // namespace ib
