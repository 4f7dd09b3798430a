// Before anything runs: resolving what a mode needs on this machine. MIG placement of tenants,
// the saved baseline for a GPU in MIG mode, and MIG instances created with --mig-create (destroyed
// by the guard on every way out).
#pragma once

#include "harness/nvml.h"
#include "harness/orchestrator.h"
#include "harness/scenario.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ib {

// Assigns every tenant its own MIG instance: explicit mig_instance first, then mig_profile (first
// free instance of that profile), then the rest in order. Throws InputError naming the field when
// that is impossible. `largest` is the instance with the most SMs (then memory).
MigPlan plan_mig(const Scenario& s, const std::vector<MigInstance>& instances);

// Exclusive phases from a results file written by an exclusive run (raw samples needed), by
// "<scenario>/<tenant>" for every tenant of `scenarios`. Throws InputError when one is missing.
std::map<std::string, BaselinePhase> load_baseline(const std::string& path, const std::vector<Scenario>& scenarios);

// Why time-slicing cannot run in this compute mode (EXCLUSIVE_PROCESS, PROHIBITED), or nullopt.
std::optional<std::string> timeslice_refusal(ComputeMode mode, int device);

// Creates MIG instances (GPU + compute instance) and destroys exactly those when destroyed.
class MigInstancesGuard {
 public:
  // Throws CannotRunError (and destroys what it created so far) when one cannot be created.
  MigInstancesGuard(Nvml& nvml, unsigned device, const std::vector<std::string>& profiles);
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
};

}  // namespace ib
