// Mode timeslice: the tenants as separate processes in the default compute mode, taking turns on the
// device (the OS scheduler on the host backend). One process per tenant serves both its exclusive
// blocks (the others idle at the barrier) and the colocated block; alone = exclusive by definition.
#include "harness/modes/plan.h"
#include "harness/modes/whole_gpu.h"

namespace ib {

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

}  // namespace ib
