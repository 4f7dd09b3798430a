// Mode exclusive: each tenant alone on the whole device, the baseline only. On a GPU in MIG mode the
// workers run on the one MIG instance CUDA shows them, and the results say so.
#include "harness/modes/plan.h"
#include "harness/modes/whole_gpu.h"

namespace ib {

Plan exclusive_plan(const Scenario& s, const ModeContext& ctx, int) {
  Plan p;
  p.sets.push_back({"plain", one_process_per_tenant(s),
                    [&s, &ctx](std::size_t i, int) { return command_device_env(s, i, ctx); }});
  p.round = exclusive_blocks(s, 0);
  note_mig_instance(p, ctx);
  return p;
}

}  // namespace ib
