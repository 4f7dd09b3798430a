// What mode mig needs from this machine before anything runs (docs/design.md section 7): MIG mode on and MIG
// instances (made with --mig-create, as root, or those there), each worker (a tenant, or each rank of a tenant)
// seated on its own, and the saved baseline its exclusive phases come from (--baseline); the instances it made
// destroyed at the end. The plan itself is modes/mig.cpp.
#pragma once

#include "harness/modes/mode_setup.h"
#include "harness/modes/plan.h"
#include "harness/nvml/nvml.h"
#include "harness/scenario/scenario.h"

#include <string>
#include <vector>

namespace ib {

// The mode that runs each tenant on a MIG instance of its own, for mig-sweep (each of its layouts is a run of it).
Mode mig_mode();

// Assigns every worker (a tenant, or each rank of a collective tenant) its own MIG instance: explicit mig_instance
// first, then mig_profile (first free instance of that profile), then the rest in order. Throws InputError naming
// the field when that is impossible, or for one process's allreduce over several GPUs (PlacementError, an
// InputError). `largest` is the instance with the most SMs (then memory).
MigPlan plan_mig(const Scenario& s, const std::vector<MigInstance>& instances);

// Mode mig's set-up for `mig_scenarios` (its row in modes/mode_table.cpp): the baseline checked first, then MIG
// mode, the instances (--mig-create's made, journalled in setup.journal) and each scenario's placement into `ctx`.
// Throws CannotRunError (MIG off, no instances, not root), InputError (a bad baseline, an impossible placement).
void set_up_mig(const ModeRequest& o, const std::vector<Scenario>& mig_scenarios, ModeSetup& setup, ModeContext& ctx,
                int device);
// Destroys the instances --mig-create made (newest first); what could not be destroyed, one line each.
std::vector<std::string> tear_down_mig(ModeSetup& setup);

// The MIG instances the mig scenarios' tenants (and exclusive phases) use: the foreign-load probe asks only
// those, each through its own handle (none without a mig scenario: the whole GPU is asked). A run that mixes
// mig and other modes (--mode all) is probed on those instances in every mode.
std::vector<MigInstance> mig_instances_in_use(const ModeContext& ctx);

}  // namespace ib
