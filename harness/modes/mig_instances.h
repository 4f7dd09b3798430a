// MIG instances made for a run (mode mig's --mig-create, each layout of mig-sweep): created beside the instances
// already there (where each goes is worked out first, harness/modes/mig_layouts.h), every creation recorded in the
// journal before it is asked for, and exactly those destroyed when the guard goes.
#pragma once

#include "harness/nvml/nvml.h"

#include <string>
#include <vector>

namespace ib {

class Journal;

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

}  // namespace ib
