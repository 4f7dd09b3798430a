// Mode streams: the colocated tenants as threads of one worker process, each with its own stream
// (the in-process reference). Exclusive blocks run in a process per tenant; alone = exclusive.
#include "harness/modes/mode_table.h"
#include "harness/modes/whole_gpu.h"

namespace ib {

namespace {

Plan streams_plan(const Scenario& s, const ModeContext& ctx, int) {
  Plan p;
  const auto none = [](std::size_t, int) { return std::vector<std::string>{}; };
  p.sets.push_back({"plain", one_process_per_tenant(s), none});
  p.sets.push_back({"streams", {all_tenants(s)}, none});
  p.round = exclusive_blocks(s, 0);
  p.round.push_back({Phase::colocated, 1, all_tenants(s)});
  alone_is_exclusive(p);
  note_mig_instance(p, ctx);
  return p;
}

}  // namespace

ModeRow streams_row() {
  ModeRow r;
  r.mode = Mode::streams;
  r.description = "all tenants in one process, one stream (host: one thread) each: the in-process baseline";
  r.plan = streams_plan;
  r.one_process = "every tenant in one process";
  r.in_all = true;
  return r;
}

}  // namespace ib
