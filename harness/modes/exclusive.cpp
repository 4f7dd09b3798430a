// Mode exclusive: each tenant alone on the whole device, the baseline only. On a GPU in MIG mode the
// workers run on the one MIG instance CUDA shows them, and the results say so. It measures baselines only,
// so its repetitions run a fixed number of rounds and never look; --mode all leaves it out (every other mode
// measures the exclusive phase itself).
#include "harness/modes/mode_table.h"
#include "harness/modes/whole_gpu.h"

namespace ib {

namespace {

Plan exclusive_plan(const Scenario& s, const ModeContext& ctx, int) {
  Plan p;
  p.sets.push_back({"plain", one_process_per_tenant(s),
                    [&s, &ctx](std::size_t i, int) { return command_device_env(s, i, ctx); }});
  p.round = exclusive_blocks(s, 0);
  note_mig_instance(p, ctx);
  return p;
}

}  // namespace

ModeRow exclusive_row() {
  ModeRow r;
  r.mode = Mode::exclusive;
  r.description = "one tenant at a time on the whole device (the baseline)";
  r.plan = exclusive_plan;
  r.runs_fixed = true;
  return r;
}

}  // namespace ib
