// Before anything runs: what the scenarios' modes need from this machine (mode_setup.h), each mode's part asked of
// its row in the table of modes (mode_table.h), and --mode all's waivers.
#include "harness/modes/mode_setup.h"

#include "harness/core/errors.h"
#include "harness/modes/device_readiness.h"
#include "harness/modes/mode_table.h"

#include <algorithm>

namespace ib {

void ensure_nvml(ModeSetup& setup, int device) {
  if (setup.nvml_tried) return;
  setup.nvml_tried = true;
  try {
    setup.nvml = Nvml::load();
    setup.device["nvml"] = setup.nvml->library_path();
    setup.device["name"] = setup.nvml->device_name(static_cast<unsigned>(device));
    setup.device["uuid"] = setup.nvml->device_uuid(static_cast<unsigned>(device));
  } catch (const NvmlError& e) {
    setup.nvml.reset();
    setup.nvml_error = e.what();
    setup.device["nvml"] = "unavailable: " + setup.nvml_error;
  }
}

namespace {

// The rows of the modes the scenarios use, in the table's order.
std::vector<const ModeRow*> modes_used(const std::vector<Scenario>& scenarios) {
  std::vector<const ModeRow*> used;
  for (const ModeRow& row : mode_table())
    if (std::any_of(scenarios.begin(), scenarios.end(), [&row](const Scenario& s) { return s.mode == row.mode; }))
      used.push_back(&row);
  return used;
}

bool any_used(const std::vector<const ModeRow*>& used, bool ModeRow::*fact) {
  return std::any_of(used.begin(), used.end(), [fact](const ModeRow* row) { return row->*fact; });
}

std::vector<Scenario> scenarios_in(Mode m, const std::vector<Scenario>& scenarios) {
  std::vector<Scenario> out;
  for (const auto& s : scenarios)
    if (s.mode == m) out.push_back(s);
  return out;
}

// An option for a mode no scenario uses is a mistake (except under --mode all, where every mode runs).
void refuse_options_of_unused_modes(const ModeRequest& o, const std::vector<const ModeRow*>& used) {
  for (const ModeRow& row : mode_table())
    if (row.refuse_options_when_unused && std::find(used.begin(), used.end(), &row) == used.end())
      row.refuse_options_when_unused(o);
}

int common_device(const std::vector<Scenario>& scenarios) {
  const int device = scenarios.front().device;
  for (const auto& s : scenarios)
    if (s.device != device) throw InputError(s.file + ": device: all scenarios of one run must use the same device");
  return device;
}

// A mode that sets up node 0 only what every worker uses (the MPS daemon and its pipe folder, the MIG instances
// NVML lists there): a worker placed on another node could not reach it, and would run unshared.
void refuse_other_nodes(const std::vector<Scenario>& scenarios) {
  for (const Scenario& s : scenarios) {
    const char* what = mode_row(s.mode).node0_only;
    if (!what) continue;
    for (std::size_t i = 0; i < s.tenants.size(); ++i) {
      const Tenant& t = s.tenants[i];
      for (int r = 0; r < t.ranks; ++r)
        if (const int node = t.placement_of(r).node; node != 0)
          throw PlacementError(s.file + ": tenants[" + std::to_string(i) + "]." +
                               (t.rank_placements.empty() ? std::string("placement") : "rank_placements[" + std::to_string(r) + "]") +
                               ".node: mode " + mode_name(s.mode) + " sets up node 0 only (its " + what + "); node " +
                               std::to_string(node) + " runs in mode exclusive or timeslice");
    }
  }
}

// A mode that runs its colocated tenants in one process (streams): that process runs on one node, so tenants placed
// on two nodes would be colocated on the first one's, not where they say.
void refuse_tenants_on_several_nodes(const std::vector<Scenario>& scenarios) {
  for (const Scenario& s : scenarios) {
    const char* what = mode_row(s.mode).one_process;
    if (!what) continue;
    for (std::size_t i = 1; i < s.tenants.size(); ++i)
      if (const int node = s.tenants[i].placement.node, first = s.tenants[0].placement.node; node != first)
        throw PlacementError(s.file + ": tenants[" + std::to_string(i) + "].placement.node: mode " + mode_name(s.mode) +
                             " runs " + what + ", on one node (tenants[0]'s node " + std::to_string(first) + ")");
  }
}

// Time-slicing on a GPU (mode timeslice, MPS beside plain processes): the compute mode allows it, the slice length
// is recorded.
void check_time_slicing(ModeSetup& setup, int device, const std::vector<const ModeRow*>& used) {
  std::vector<ComputeModeRefusal> refusals;
  for (const ModeRow* row : used)
    if (row->compute_mode_refusal) refusals.push_back(row->compute_mode_refusal);
  check_compute_mode(setup, device, refusals);
}

}  // namespace

void prepare_modes(const ModeRequest& o, Backend backend, const std::vector<Scenario>& scenarios, ModeSetup& setup,
                   ModeContext& ctx, bool all_modes) {
  refuse_other_nodes(scenarios);
  refuse_tenants_on_several_nodes(scenarios);
  const std::vector<const ModeRow*> used = modes_used(scenarios);
  if (!all_modes) refuse_options_of_unused_modes(o, used);
  const int device = common_device(scenarios);
  if (backend == Backend::cuda || any_used(used, &ModeRow::needs_nvml)) {
    ensure_nvml(setup, device);
    refuse_unready_node(setup, device, any_used(used, &ModeRow::needs_mig_mode));
  }
  if (setup.nvml && backend == Backend::cuda && any_used(used, &ModeRow::time_slices_gpu))
    check_time_slicing(setup, device, used);
  for (const ModeRow* row : used)
    if (row->set_up) row->set_up(o, scenarios_in(row->mode, scenarios), setup, ctx, device);
  if (backend == Backend::cuda && any_used(used, &ModeRow::whole_gpu) && setup.mig_instance_note.empty())
    note_mig_instance(setup, device);
  ctx.device = setup.device;
  ctx.mig_instance_note = setup.mig_instance_note;
}

RunModes prepare_run_modes(const ModeRequest& request, bool all_modes, Backend backend,
                           const std::vector<Scenario>& scenarios, ModeSetup& setup, ModeContext& ctx) {
  RunModes out;
  if (!all_modes) {
    prepare_modes(request, backend, scenarios, setup, ctx, false);
    out.plan = scenarios;
    return out;
  }
  const std::vector<Mode> modes = modes_in_all();
  for (Mode m : modes) {
    std::vector<Scenario> copies = scenarios;
    for (auto& s : copies) s.mode = m;
    try {
      prepare_modes(request, backend, copies, setup, ctx, true);
    } catch (const CannotRunError& e) {
      out.waived[m] = e.what();
    } catch (const PlacementError& e) {
      // A placement the mode cannot give (MIG: more workers than instances, allreduce over several instances;
      // MPS or MIG: a worker on another node): the other modes still run. (A bad --baseline is still bad input.)
      out.waived[m] = std::string("mode ") + mode_name(m) + ": " + e.what();
    } catch (const NvmlError& e) {
      if (!mode_row(m).waives_nvml_errors) throw;
      out.waived[m] = std::string("mode ") + mode_name(m) + ": " + e.what();
    }
  }
  for (const auto& s : scenarios)
    for (Mode m : modes) {
      out.plan.push_back(s);
      out.plan.back().mode = m;
    }
  return out;
}

std::vector<std::string> tear_down_modes(ModeSetup& setup) {
  std::vector<std::string> problems;
  for (const ModeRow& row : mode_table())
    if (row.tear_down)
      for (std::string& p : row.tear_down(setup)) problems.push_back(std::move(p));
  return problems;
}

}  // namespace ib
