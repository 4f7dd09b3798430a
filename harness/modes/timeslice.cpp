// Mode timeslice: the tenants as separate processes in the default compute mode, taking turns on the
// device (the OS scheduler on the host backend). One process per tenant serves both its exclusive
// blocks (the others idle at the barrier) and the colocated block; alone = exclusive by definition.
// A GPU in compute mode EXCLUSIVE_PROCESS or PROHIBITED cannot be time-sliced: refused before anything runs.
#include "harness/modes/mode_table.h"
#include "harness/modes/whole_gpu.h"

namespace ib {

namespace {

Plan timeslice_plan(const Scenario& s, const ModeContext& ctx, int) {
  Plan p;
  p.sets.push_back({"plain", one_process_per_tenant(s),
                    [&s, &ctx](std::size_t i, int) { return command_device_env(s, i, ctx); }});
  p.round = exclusive_blocks(s, 0);
  p.round.push_back({Phase::colocated, 0, all_tenants(s)});
  alone_is_exclusive(p);
  note_mig_instance(p, ctx);
  return p;
}

std::optional<std::string> timeslice_refusal(ComputeMode mode, int device) {
  if (mode == ComputeMode::exclusive_process || mode == ComputeMode::prohibited)
    return std::string("mode timeslice: GPU ") + std::to_string(device) + " is in compute mode " +
           compute_mode_name(mode) +
           ", where processes cannot share it without MPS; interference-bench never changes the compute mode (an "
           "administrator could set DEFAULT with nvidia-smi -c 0)";
  return std::nullopt;
}

}  // namespace

ModeRow timeslice_row() {
  ModeRow r;
  r.mode = Mode::timeslice;
  r.description = "tenants as separate processes sharing the device (GPU time-slicing; OS scheduling on host)";
  r.plan = timeslice_plan;
  r.compute_mode_refusal = timeslice_refusal;
  r.time_slices_gpu = true;
  r.in_all = true;
  return r;
}

}  // namespace ib
