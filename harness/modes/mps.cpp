// Mode mps: exclusive blocks in plain processes (no MPS), alone and colocated blocks in MPS clients of
// a private control daemon (or one attached with --mps-pipe-dir), each with its thread percentage and
// pinned-memory limit. Both sets of processes stay alive for the repetition: in the default compute
// mode plain contexts and the MPS server share the GPU by time-slicing, and an idle one takes no turn.
// The daemon is this node's: a worker placed on another node is refused before anything runs.
#include "harness/modes/mode_table.h"
#include "harness/modes/mps_daemon.h"
#include "harness/modes/whole_gpu.h"

#include "harness/core/errors.h"
#include "harness/process/process.h"

namespace ib {

namespace {
// A rank's own placement (rank_placements[r]) gives its share, as any tenant's placement does.
std::vector<std::string> mps_client_env(const Scenario& s, const Tenant& t, int rank, const MpsDaemon& d) {
  std::vector<std::string> env = d.client_env();
  const Placement& pl = t.placement_of(rank);
  if (pl.mps_active_thread_percentage)
    env.push_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" + std::to_string(*pl.mps_active_thread_percentage));
  if (pl.mps_pinned_mem_limit)
    env.push_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=" + std::to_string(s.device) + "=" + *pl.mps_pinned_mem_limit);
  return env;
}

Plan mps_plan(const Scenario& s, const ModeContext& ctx, int sequence) {
  Plan p;
  // One daemon per repetition (mps1, mps2, ... in the order they start), quit when the plan goes (its
  // destructor), on every way out. The pipe folder's path stays short: it holds Unix sockets.
  const std::string n = "mps" + std::to_string(sequence);
  std::shared_ptr<MpsDaemon> daemon = ctx.mps_pipe_dir.empty()
                                          ? MpsDaemon::start(ctx.run_dir + "/" + n, ctx.log_dir + "/" + n, ctx.journal)
                                          : MpsDaemon::attach(ctx.mps_pipe_dir);
  p.config.mps = daemon->describe();
  p.resources = daemon;
  // The server the daemon starts for our clients is listed by NVML as a compute process: ours.
  p.helper_pids = [d = daemon.get()] { return d->server_pids(); };
  p.sets.push_back({"plain", one_process_per_tenant(s),
                    [&s, &ctx](std::size_t i, int) { return command_device_env(s, i, ctx); }});
  WorkerSet clients{"mps", one_process_per_tenant(s), [&s, &ctx, d = daemon.get()](std::size_t i, int rank) {
                      std::vector<std::string> env = mps_client_env(s, s.tenants[i], rank, *d);
                      for (std::string& e : command_device_env(s, i, ctx)) env.push_back(std::move(e));
                      return env;
                    }};
  clients.mps_client = true;
  p.sets.push_back(clients);
  p.round = exclusive_blocks(s, 0);
  for (std::size_t i = 0; i < s.tenants.size(); ++i) p.round.push_back({Phase::alone, 1, {i}});
  p.round.push_back({Phase::colocated, 1, all_tenants(s)});
  note_mig_instance(p, ctx);
  return p;
}

// The control daemon is started per repetition: its binary must be there, unless one is attached to.
void set_up_mps(const ModeRequest& o, const std::vector<Scenario>&, ModeSetup&, ModeContext&, int) {
  if (o.mps_pipe_dir.empty() && find_on_path(kMpsControl).empty())
    throw CannotRunError(std::string("mode mps needs the MPS control daemon, but ") + kMpsControl +
                         " is not on PATH (it ships with the NVIDIA driver)");
}

void refuse_mps_options(const ModeRequest& o) {
  if (!o.mps_pipe_dir.empty()) throw InputError("--mps-pipe-dir: only used with mode mps");
}

}  // namespace

ModeRow mps_row() {
  ModeRow r;
  r.mode = Mode::mps;
  r.description = "exclusive, then each tenant alone and all together as MPS clients of a private control daemon";
  r.plan = mps_plan;
  r.set_up = set_up_mps;
  r.refuse_options_when_unused = refuse_mps_options;
  r.time_slices_gpu = true;  // the plain processes of its exclusive blocks and the MPS server take turns
  r.node0_only = "MPS daemon";
  r.extra_blocks_per_tenant = 1;  // each tenant's alone block as an MPS client
  r.in_all = true;
  return r;
}

}  // namespace ib
