// For the modes that expect a whole GPU (exclusive, timeslice, mps, streams): on a GPU in MIG mode
// they run on the MIG instance CUDA shows, and the exclusive phase says so (source mig_instance).
#pragma once

#include "harness/modes/plan.h"

namespace ib {

// A command tenant's program picks its own GPU (CUDA device 0 unless told), where the bench's workloads take
// --device: on device N != 0, which NVML watches, it is shown that GPU by CUDA_VISIBLE_DEVICES, by NVML's UUID
// where known (the same GPU for CUDA and NVML whatever CUDA's order), else by index. A tenant placed on a
// device of its own (placement.device) is shown that one, by CUDA's index.
inline std::vector<std::string> command_device_env(const Scenario& s, std::size_t tenant, const ModeContext& ctx) {
  const Tenant& t = s.tenants[tenant];
  if (t.workload != "command") return {};
  if (t.placement.device && *t.placement.device != s.device) return {"CUDA_VISIBLE_DEVICES=" + std::to_string(*t.placement.device)};
  if (s.device == 0) return {};
  const std::string uuid = ctx.device.is_object() ? ctx.device.value("uuid", std::string()) : std::string();
  return {"CUDA_VISIBLE_DEVICES=" + (uuid.empty() ? std::to_string(s.device) : uuid)};
}

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
