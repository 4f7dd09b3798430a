// For the modes that expect a whole GPU (exclusive, timeslice, mps, streams): on a GPU in MIG mode
// they run on the MIG instance CUDA shows, and the exclusive phase says so (source mig_instance).
#pragma once

#include "harness/modes/plan.h"

namespace ib {

inline void note_mig_instance(Plan& p, const ModeContext& ctx) {
  if (ctx.mig_instance_note.empty()) return;
  p.config.exclusive_source = ctx.mig_instance_note;
  auto after = p.after;
  p.after = [after](RunResult& r) {
    for (auto& t : r.tenants) t.exclusive.source = PhaseSource::mig_instance;
    if (after) after(r);
  };
}

}  // namespace ib
