// What mode mig needs from this machine before anything runs (mig_setup.h): MIG mode on, the instances (made with
// --mig-create, or those there), each worker seated on one, the saved baseline; and the instances made, destroyed.
#include "harness/modes/mig_setup.h"

#include "harness/core/errors.h"
#include "harness/modes/baseline.h"

#include <unistd.h>

#include <algorithm>

namespace ib {

namespace {

// One worker of a mig scenario that needs an instance: rank `rank` of tenant `tenant`.
struct MigSeat {
  std::size_t tenant;
  int rank;
};

// Assigns instances to seats in three passes: explicit mig_instance, then mig_profile (the first free instance of
// that profile), then the first free instance. `where(seat)` names the seat's placement field for errors.
class MigSeating {
 public:
  MigSeating(const Scenario& s, const std::vector<MigInstance>& instances) : s_(s), instances_(instances) {
    for (const auto& m : instances) available_ += (available_.empty() ? "" : ", ") + std::to_string(m.index) + ":" + m.profile;
    if (available_.empty()) available_ = "none";
    for (std::size_t i = 0; i < s.tenants.size(); ++i)
      for (int r = 0; r < s.tenants[i].ranks; ++r) seats_.push_back({i, r});
    taken_.assign(seats_.size(), instances.size());
  }

  std::vector<std::vector<std::size_t>> assign() {
    for (std::size_t k = 0; k < seats_.size(); ++k) take_explicit(k);
    for (std::size_t k = 0; k < seats_.size(); ++k) take_profile(k);
    for (std::size_t k = 0; k < seats_.size(); ++k) take_any(k);
    std::vector<std::vector<std::size_t>> out(s_.tenants.size());
    for (std::size_t k = 0; k < seats_.size(); ++k) out[seats_[k].tenant].push_back(taken_[k]);
    return out;
  }

 private:
  const Placement& placement(std::size_t k) const { return s_.tenants[seats_[k].tenant].placement_of(seats_[k].rank); }
  std::string where(std::size_t k) const {
    const Tenant& t = s_.tenants[seats_[k].tenant];
    const std::string tenant = s_.file + ": tenants[" + std::to_string(seats_[k].tenant) + "]";
    if (t.rank_placements.empty()) return tenant + ".placement";
    return tenant + ".rank_placements[" + std::to_string(seats_[k].rank) + "]";
  }
  std::string who(std::size_t k) const {
    const Tenant& t = s_.tenants[seats_[k].tenant];
    return t.ranks > 1 ? "rank " + std::to_string(seats_[k].rank) + " of " + t.name : t.name;
  }
  std::size_t holder(std::size_t instance) const {
    return static_cast<std::size_t>(std::find(taken_.begin(), taken_.end(), instance) - taken_.begin());
  }
  void take_explicit(std::size_t k) {
    const auto& pl = placement(k);
    if (!pl.mig_instance) return;
    const auto m = static_cast<std::size_t>(*pl.mig_instance);
    if (m >= instances_.size())
      throw PlacementError(where(k) + ".mig_instance: impossible placement: there is no MIG instance " + std::to_string(m) +
                           " (instances here: " + available_ + ")");
    if (const std::size_t h = holder(m); h < seats_.size())
      throw PlacementError(where(k) + ".mig_instance: impossible placement: MIG instance " + std::to_string(m) +
                           " is already " + who(h) + "'s (each rank needs its own)");
    taken_[k] = m;
  }
  void take_profile(std::size_t k) {
    const auto& pl = placement(k);
    if (!pl.mig_profile || taken_[k] != instances_.size()) return;
    for (std::size_t m = 0; m < instances_.size() && taken_[k] == instances_.size(); ++m)
      if (instances_[m].profile == *pl.mig_profile && holder(m) == seats_.size()) taken_[k] = m;
    if (taken_[k] == instances_.size())
      throw PlacementError(where(k) + ".mig_profile: impossible placement: no free MIG instance of profile " +
                           *pl.mig_profile + " for " + who(k) + " (instances here: " + available_ + ")");
  }
  void take_any(std::size_t k) {
    for (std::size_t m = 0; m < instances_.size() && taken_[k] == instances_.size(); ++m)
      if (holder(m) == seats_.size()) taken_[k] = m;
    if (taken_[k] == instances_.size())
      throw PlacementError(where(k) + ": impossible placement: " + std::to_string(seats_.size()) +
                           " workers (tenants or ranks) need their own MIG instance and there are " +
                           std::to_string(instances_.size()) + " (" + available_ + ")");
  }

  const Scenario& s_;
  const std::vector<MigInstance>& instances_;
  std::string available_;
  std::vector<MigSeat> seats_;
  std::vector<std::size_t> taken_;  // per seat: its instance (instances_.size() while it has none)
};

// The one-process allreduce over several GPUs (params.gpus > 1) cannot span MIG instances; ranks can.
void refuse_one_process_collective(const Scenario& s) {
  for (std::size_t i = 0; i < s.tenants.size(); ++i) {
    const Tenant& t = s.tenants[i];
    if (t.workload == "allreduce" && t.params.is_object() && t.params.value("gpus", 1) > 1)
      throw PlacementError(s.file + ": tenants[" + std::to_string(i) +
                           "].params.gpus: one process cannot drive NCCL over several MIG instances (no P2P, NVLink or "
                           "CUDA IPC between them): give the tenant \"ranks\" instead, one worker per MIG instance "
                           "(NCCL 2.31 or later)");
  }
}

}  // namespace

MigPlan plan_mig(const Scenario& s, const std::vector<MigInstance>& instances) {
  refuse_one_process_collective(s);
  MigPlan plan;
  plan.instances = instances;
  plan.rank_instance = MigSeating(s, instances).assign();
  for (std::size_t k = 1; k < instances.size(); ++k) {
    const auto& a = instances[k];
    const auto& b = instances[plan.largest];
    if (a.sm_count > b.sm_count || (a.sm_count == b.sm_count && a.memory_bytes > b.memory_bytes)) plan.largest = k;
  }
  return plan;
}

namespace {

// With --mig-create the run uses only the instances it made, for its tenants and its exclusive phase: a
// pre-existing instance (another user's, perhaps busy) is never touched, whatever its id or size. Indexed
// anew (placement.mig_instance counts the made ones). CannotRunError when NVML does not list one it made.
std::vector<MigInstance> only_created(const std::vector<MigInstance>& listed, const std::vector<CreatedMigInstance>& made) {
  std::vector<MigInstance> out;
  for (const CreatedMigInstance& c : made) {
    const auto it = std::find_if(listed.begin(), listed.end(), [&c](const MigInstance& m) {
      return m.gpu_instance_id == c.gpu_instance_id && m.compute_instance_id == c.compute_instance_id;
    });
    if (it == listed.end())
      throw CannotRunError("--mig-create: the " + c.profile + " instance it made (GPU instance " +
                           std::to_string(c.gpu_instance_id) + ") is not listed by NVML");
    out.push_back(*it);
  }
  std::sort(out.begin(), out.end(), [](const MigInstance& a, const MigInstance& b) { return a.index < b.index; });
  for (std::size_t i = 0; i < out.size(); ++i) out[i].index = static_cast<int>(i);
  return out;
}

// Mode mig needs MIG mode on and instances (made here with --mig-create, as root).
std::vector<MigInstance> mig_instances_for_run(const ModeRequest& o, ModeSetup& setup, int device) {
  if (!setup.nvml) throw CannotRunError("mode mig needs NVML to find the MIG instances: " + setup.nvml_error);
  const unsigned dev = static_cast<unsigned>(device);
  const auto state = setup.nvml->mig_mode(dev);
  const std::string gpu = "GPU " + std::to_string(device) + " (" + setup.device.value("name", std::string()) + ")";
  if (!state) throw CannotRunError("mode mig: " + gpu + " does not support MIG");
  setup.device["mig_mode"] = {{"current", state->current}, {"pending", state->pending}};
  if (!state->current)
    throw CannotRunError("mode mig: MIG mode is disabled on " + gpu + " (current: disabled, pending: " +
                         (state->pending ? "enabled, after a GPU reset" : "disabled") +
                         "). An administrator enables it with `nvidia-smi -i " + std::to_string(device) +
                         " -mig 1` on an idle GPU (it needs a GPU reset) and creates instances with `nvidia-smi mig -i " +
                         std::to_string(device) + " -cgi <profiles> -C`; interference-bench never changes MIG mode");
  if (!o.mig_create.empty() && !setup.created) {
    if (geteuid() != 0) throw CannotRunError("--mig-create: creating MIG instances needs root");
    setup.created = std::make_unique<MigInstancesGuard>(*setup.nvml, dev, o.mig_create, setup.journal);
    nlohmann::json made = nlohmann::json::array();
    for (const auto& c : setup.created->created())
      made.push_back({{"profile", c.profile}, {"gpu_instance_id", c.gpu_instance_id}, {"compute_instance_id", c.compute_instance_id}});
    setup.device["mig_created"] = made;
  }
  auto instances = setup.nvml->mig_instances(dev);
  if (setup.created) instances = only_created(instances, setup.created->created());
  if (instances.empty())
    throw CannotRunError("mode mig: MIG mode is enabled on " + gpu +
                         " but no MIG instances exist: create them (nvidia-smi mig -cgi ... -C) or use --mig-create");
  return instances;
}

}  // namespace

void set_up_mig(const ModeRequest& o, const std::vector<Scenario>& mig_scenarios, ModeSetup& setup, ModeContext& ctx,
                int device) {
  // The baseline is checked before --mig-create changes the GPU.
  if (!o.baseline.empty()) {
    ctx.baseline = load_baseline(o.baseline, mig_scenarios);
    ctx.baseline_file = o.baseline;
  }
  const auto instances = mig_instances_for_run(o, setup, device);
  for (const auto& s : mig_scenarios) ctx.mig_plans[s.name] = plan_mig(s, instances);
}

std::vector<std::string> tear_down_mig(ModeSetup& setup) {
  if (!setup.created) return {};
  setup.created->destroy_all();
  return setup.created->problems();
}

std::vector<MigInstance> mig_instances_in_use(const ModeContext& ctx) {
  std::vector<MigInstance> scope;
  const auto add = [&scope](const MigInstance& m) {
    if (std::none_of(scope.begin(), scope.end(), [&m](const MigInstance& x) { return x.uuid == m.uuid; }))
      scope.push_back(m);
  };
  for (const auto& [name, plan] : ctx.mig_plans) {
    for (const auto& ranks : plan.rank_instance)
      for (std::size_t k : ranks) add(plan.instances.at(k));
    if (ctx.baseline.empty() && !plan.instances.empty()) add(plan.instances.at(plan.largest));
  }
  return scope;
}

}  // namespace ib
