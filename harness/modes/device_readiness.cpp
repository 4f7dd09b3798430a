// Whether this node and its device are ready to measure on (device_readiness.h): the GPU operator's validation,
// a pending MIG mode change, the MIG manager's state, the compute mode, and a GPU in MIG mode under the modes that
// expect a whole one.
#include "harness/modes/device_readiness.h"

#include "harness/core/errors.h"
#include "harness/process/process.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace ib {

std::optional<std::string> node_readiness_refusal(const NodeReadiness& r, int device) {
  if (r.validations_present) {
    std::string missing;
    for (const std::string& f : operator_validation_files())
      if (std::find(r.validation_files.begin(), r.validation_files.end(), f) == r.validation_files.end())
        missing += (missing.empty() ? "" : ", ") + f;
    if (!missing.empty())
      return "this node is not ready: the GPU operator's validator has not passed (" + r.validations_dir + " lacks " +
             missing + "); measure once it has";
  }
  if (r.mig_mode && r.mig_mode->current != r.mig_mode->pending)
    return "this node is not ready: GPU " + std::to_string(device) + " has a MIG mode change pending (current " +
           (r.mig_mode->current ? "enabled" : "disabled") + ", pending " + (r.mig_mode->pending ? "enabled" : "disabled") +
           "): it takes effect at the next GPU reset";
  if (!r.mig_config_state.empty() && r.mig_config_state != "success")
    return "this node is not ready: the MIG manager's state is \"" + r.mig_config_state +
           "\" (IB_MIG_CONFIG_STATE), not \"success\"";
  return std::nullopt;
}

NodeReadiness read_node_readiness(ModeSetup& setup, int device) {
  NodeReadiness r;
  const char* dir = std::getenv("IB_GPU_OPERATOR_VALIDATIONS");
  r.validations_dir = dir && *dir ? dir : "/run/nvidia/validations";
  std::error_code ec;
  r.validations_present = std::filesystem::is_directory(r.validations_dir, ec);
  if (r.validations_present)
    for (const std::string& f : operator_validation_files())
      if (std::filesystem::exists(r.validations_dir + "/" + f, ec)) r.validation_files.push_back(f);
  if (setup.nvml) {
    try {
      r.mig_mode = setup.nvml->mig_mode(static_cast<unsigned>(device));
    } catch (const NvmlError&) {  // a GPU that cannot say: nothing to judge
    }
  }
  if (const char* state = std::getenv("IB_MIG_CONFIG_STATE")) r.mig_config_state = state;
  return r;
}

void refuse_unready_node(ModeSetup& setup, int device, bool explains_mig_disabled) {
  NodeReadiness readiness = read_node_readiness(setup, device);
  // MIG disabled for a mode that needs it: its set-up says so, with what an administrator does.
  if (explains_mig_disabled && readiness.mig_mode && !readiness.mig_mode->current) readiness.mig_mode.reset();
  if (const auto why = node_readiness_refusal(readiness, device)) throw CannotRunError(*why);
}

void check_compute_mode(ModeSetup& setup, int device, const std::vector<ComputeModeRefusal>& refusals) {
  const ComputeMode cm = setup.nvml->compute_mode(static_cast<unsigned>(device));
  setup.device["compute_mode"] = compute_mode_name(cm);
  for (const ComputeModeRefusal refusal : refusals)
    if (const auto why = refusal(cm, device)) throw CannotRunError(*why);
  // The time-slice length is a driver setting; record it where nvidia-smi shows it, never change it.
  const CommandResult policy = run_helper_command({"nvidia-smi", "compute-policy", "-l"}, {}, "", 5.0);
  setup.device["compute_policy"] = policy.ok() ? policy.output : "not available";
}

// A GPU in MIG mode has no whole device: the other modes run on the one MIG instance CUDA shows a
// worker. That is what someone renting a MIG slice wants measured (and what vet's steps run), so it
// is not refused, but it must not pass for a whole GPU: the results say what was measured.
void note_mig_instance(ModeSetup& setup, int device) {
  ensure_nvml(setup, device);
  if (!setup.nvml) return;
  const auto state = setup.nvml->mig_mode(static_cast<unsigned>(device));
  if (!state || !state->current) return;
  setup.device["mig_mode"] = {{"current", state->current}, {"pending", state->pending}};
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  setup.mig_instance_note =
      "one MIG instance, not a whole GPU: GPU " + std::to_string(device) + " is in MIG mode, so CUDA shows a worker " +
      (visible && *visible ? "CUDA_VISIBLE_DEVICES=" + std::string(visible) : std::string("its first MIG instance")) +
      "; slowdowns are against that instance";
  setup.device["measures"] = setup.mig_instance_note;
  std::cerr << "interference-bench: note: " << setup.mig_instance_note << "\n";
}

}  // namespace ib
