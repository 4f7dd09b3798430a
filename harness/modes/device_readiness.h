// Whether this node and its device are ready to measure on, before anything runs: a fleet node's preflight
// (the GPU operator's validation, a pending MIG mode change, the MIG manager's state; docs/design.md section 10,
// docs/fleet.md "Preflight"), the compute mode the modes that share a GPU need (docs/design.md sections 7 and 8),
// and what a GPU in MIG mode means for the modes that expect a whole one.
#pragma once

#include "harness/modes/mode_setup.h"
#include "harness/nvml/nvml.h"

#include <optional>
#include <string>
#include <vector>

namespace ib {

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
// Throws CannotRunError with node_readiness_refusal's line. `explains_mig_disabled`: a mode that needs MIG mode
// says itself, with what an administrator does, when it is disabled (a change pending to enable it is not judged).
void refuse_unready_node(ModeSetup& setup, int device, bool explains_mig_disabled);

// Why a mode cannot share the GPU in this compute mode, or nullopt (a mode's own rule: modes/mode_table.h).
using ComputeModeRefusal = std::optional<std::string> (*)(ComputeMode mode, int device);
// Reads and records the device's compute mode (NVML loaded) and the time-slice policy nvidia-smi shows; throws
// CannotRunError with the first of `refusals` that refuses the compute mode.
void check_compute_mode(ModeSetup& setup, int device, const std::vector<ComputeModeRefusal>& refusals);

// A GPU in MIG mode under a mode that expects a whole GPU: the run measures the one MIG instance CUDA shows a
// worker, and says so (ModeSetup::mig_instance_note, the device's "measures", a note on stderr).
void note_mig_instance(ModeSetup& setup, int device);

}  // namespace ib
