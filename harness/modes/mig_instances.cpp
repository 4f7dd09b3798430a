// MIG instances made for a run (--mig-create, mig-sweep's layouts): placed before anything is made, each creation
// journalled, and exactly those destroyed on every way out (mig_instances.h).
#include "harness/modes/mig_instances.h"

#include "harness/core/errors.h"
#include "harness/core/text.h"
#include "harness/modes/journal.h"
#include "harness/modes/mig_layouts.h"

namespace ib {

namespace {

// "1g.18gb (MIG-...) at memory slices 6-6, ...": the pre-existing instances, for a refusal they cause.
std::string instances_text(const std::vector<MigGpuInstance>& instances) {
  std::string out;
  for (const MigGpuInstance& m : instances) {
    out += (out.empty() ? "" : ", ") + gpu_instance_label(m);
    if (m.placement) out += " at memory slices " + slices_text(*m.placement);
  }
  return out;
}

// Where each of `profiles` is to be created beside the instances already there, worked out before anything is
// made so that a layout that fits is never refused for the order it was asked in (a 1g.18gb created first
// wherever NVML likes can leave no room for a 4g.71gb). None when NVML cannot say where the instances there sit
// or which placements the profiles take: then NVML places each as it is created. CannotRunError, naming the
// instances in the way, when they cannot all be created.
std::vector<std::optional<MigPlacement>> creation_placements(Nvml& nvml, unsigned device,
                                                             const std::vector<std::string>& profiles) {
  std::vector<std::optional<MigPlacement>> none(profiles.size());
  std::vector<MigGpuInstanceProfile> gpu_profiles;
  std::vector<MigGpuInstance> existing;  // with or without a compute instance: each takes its slices
  try {
    gpu_profiles = nvml.mig_gpu_instance_profiles(device);
    existing = nvml.mig_gpu_instances(device);
  } catch (const NvmlError&) {
    return none;
  }
  std::vector<MigPlacement> occupied;
  for (const MigGpuInstance& m : existing) {
    if (!m.placement) return none;
    occupied.push_back(*m.placement);
  }
  const MigCreationPlan plan = plan_mig_creation(profiles, gpu_profiles, occupied);
  const std::string list = joined(profiles, ",");
  if (plan.check.problem == MigLayoutProblem::blocked_by_existing)
    throw CannotRunError("--mig-create " + list + ": " + plan.check.reason + "; in the way: " + instances_text(existing) +
                         ". Nothing was created");
  if (!plan.check.layout) throw CannotRunError("--mig-create " + list + ": " + plan.check.reason + ". Nothing was created");
  return {plan.placements.begin(), plan.placements.end()};
}

}  // namespace

MigInstancesGuard::MigInstancesGuard(Nvml& nvml, unsigned device, const std::vector<std::string>& profiles,
                                     Journal* journal)
    : nvml_(nvml), device_(device), journal_(journal) {
  const auto placements = creation_placements(nvml_, device_, profiles);
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    const std::string& p = profiles[i];
    try {
      if (journal_) journal_->record({JournalEvent::mig_intent, device_, {p, 0, 0}, ""});
      created_.push_back(nvml_.create_mig_instance(device_, p, placements[i]));
      if (journal_) journal_->record({JournalEvent::mig_created, device_, created_.back(), ""});
    } catch (const CannotRunError&) {  // the journal cannot be written: create nothing more
      destroy_all();
      throw;
    } catch (const NvmlError& e) {
      try {
        if (journal_) journal_->record({JournalEvent::mig_not_created, device_, {p, 0, 0}, ""});
      } catch (const CannotRunError&) {  // the journal then keeps the intent, which cleanup only reports
      }
      destroy_all();
      throw CannotRunError("--mig-create " + p + ": " + e.what() + " (instances created so far were destroyed)");
    }
  }
}

void MigInstancesGuard::destroy_all() noexcept {
  // Newest first, each exactly once; a failure is recorded and the others are still destroyed.
  while (!created_.empty()) {
    const CreatedMigInstance c = created_.back();
    created_.pop_back();
    try {
      nvml_.destroy_mig_instance(device_, c);
      if (journal_) journal_->record({JournalEvent::mig_destroyed, device_, c, ""});
    } catch (const std::exception& e) {
      problems_.push_back("could not destroy MIG instance " + c.profile + " (GI " + std::to_string(c.gpu_instance_id) +
                          ", CI " + std::to_string(c.compute_instance_id) + "): " + e.what());
    }
  }
}

MigInstancesGuard::~MigInstancesGuard() { destroy_all(); }

}  // namespace ib
