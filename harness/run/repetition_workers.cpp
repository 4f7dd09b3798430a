// RepetitionRun's workers: each one's arguments, environment and log, started through the launcher with its
// watchdog armed for the warm-up and waited for until ready; what they report (pump: their messages read and
// handled, the exited ones reaped), and a worker killed when its watchdog fires.
#include "harness/run/repetition.h"
#include "harness/run/repetition_steps.h"

#include "harness/core/text.h"
#include "harness/modes/mps_daemon.h"

#include <algorithm>

namespace ib {

using nlohmann::json;
using namespace repetition_steps;

namespace {

// A worker's MPS settings are the harness's decision alone: the CUDA_MPS_* variables of the user's
// shell are dropped, and a process that runs without MPS points CUDA_MPS_PIPE_DIRECTORY at an empty
// private folder, so that a system-wide MPS daemon (default pipe /tmp/nvidia-mps) cannot make it an
// MPS client: a CUDA program that cannot reach a control daemon "continues to run as it normally
// would without MPS" (nvidia-cuda-mps-control(1)).
std::vector<std::string> with_mps_decided(std::vector<std::string> env, bool mps_client, const std::string& no_mps_dir) {
  if (!mps_client && !no_mps_dir.empty()) env.push_back("CUDA_MPS_PIPE_DIRECTORY=" + no_mps_dir);
  return env;
}

}  // namespace

bool RepetitionRun::Worker::failed() const {
  if (waived() || stopped_by_us || interrupted) return false;
  if (timed_out || !error.empty()) return true;
  if (exited && (exit.signal || exit.exit_code.value_or(1) != 0)) return !(ended && killed);
  return (eof || exited) && !ended;  // gone before the harness said "end"
}

bool RepetitionRun::Worker::waived() const {
  return std::any_of(slots.begin(), slots.end(), [](const Slot& s) { return s.waived; });
}

std::vector<std::string> RepetitionRun::worker_args(const std::vector<std::size_t>& tenants, bool device_from_env,
                                                    int rank) const {
  // Inside a worker placed by CUDA_VISIBLE_DEVICES=MIG-..., its one visible device is CUDA device 0.
  // A worker of one tenant (or one rank) goes to its placement's device when it names one.
  int device = s_.device;
  if (tenants.size() == 1 && s_.tenants[tenants[0]].placement_of(rank).device)
    device = *s_.tenants[tenants[0]].placement_of(rank).device;
  std::vector<std::string> a = {"worker", "--backend", backend_name(o_.backend), "--device",
                                std::to_string(device_from_env ? 0 : device), "--warmup", std::to_string(s_.warmup_s),
                                "--rewarm", std::to_string(o_.rewarm_s)};
  for (std::size_t i : tenants) {
    const Tenant& t = s_.tenants[i];
    json params = t.params;
    params.update(r_.tenants[i].resolved_params);  // what an earlier worker of this tenant resolved
    a.push_back("--tenant");
    a.push_back(json{{"workload", t.workload}, {"params", params}, {"cpus", t.placement_of(rank).cpus}}.dump());
    if (t.ranks > 1)  // one tenant per rank worker (start_rank_workers)
      for (const std::string& w : {std::string("--rank"), std::to_string(rank), std::string("--world-size"),
                                   std::to_string(t.ranks), std::string("--local-rank"),
                                   std::to_string(local_rank(t, rank))})
        a.push_back(w);
  }
  return a;
}

std::string RepetitionRun::log_path(const WorkerSet& set, const std::string& who) const {
  return o_.log_dir + "/" + file_name_part(s_.name) + "-" + r_.mode + "-r" + std::to_string(r_.repetition) + "-" + set.name +
         "-" + who + ".log";
}

RepetitionRun::Worker& RepetitionRun::add_worker(std::size_t set, const std::vector<std::size_t>& tenants,
                                                const std::string& who, int rank) {
  Worker w;
  w.set = set;
  for (std::size_t i : tenants) {
    Slot slot;
    slot.tenant = i;
    slot.rank = rank;
    w.slots.push_back(slot);
  }
  w.log = log_path(plan_.sets[set], who);
  workers_.push_back(std::move(w));
  const std::size_t k = workers_.size() - 1;
  for (std::size_t slot = 0; slot < tenants.size(); ++slot)
    seats_[set][tenants[slot]][static_cast<std::size_t>(rank)] = {k, slot};
  return workers_[k];
}

// Starts the worker's process and arms its watchdog for the warm-up.
bool RepetitionRun::launch(Worker& w, const std::vector<std::size_t>& tenants, int rank) {
  const WorkerSet& ws = plan_.sets[w.set];
  try {
    std::vector<std::string> env = with_mps_decided(ws.env(tenants[0], rank), ws.mps_client, no_mps_pipe_dir_);
    if (s_.tenants[tenants[0]].ranks > 1)  // what torchrun gives each rank, for a program that reads it
      for (const auto& [k, v] : {std::pair<const char*, int>{"IB_RANK", rank}, {"IB_WORLD_SIZE", s_.tenants[tenants[0]].ranks},
                                 {"IB_LOCAL_RANK", local_rank(s_.tenants[tenants[0]], rank)}})
        env.push_back(std::string(k) + "=" + std::to_string(v));
    if (s_.tenants[tenants[0]].ranks > 1 && ranks_share_a_gpu(s_.tenants[tenants[0]], s_.device))
      // Every rank's NCCL must allow it (nccl_comm.h), the ranks of another GPU too. In mode mig as well: ranks
      // on MIG instances of one GPU (mode mig takes no placement.device) are one GPU to NCCL.
      env.push_back("IB_RANKS_SHARE_GPU=1");
    SpawnSpec spec{o_.worker_exe, worker_args(tenants, ws.device_from_env, rank), env, w.log, kInheritedMpsSettings};
    spec.node = s_.tenants[tenants[0]].placement_of(rank).node;  // a run across nodes: whose harness starts it
    w.channel = launcher_.start(spec);
  } catch (const std::exception& e) {
    w.error = e.what();
    w.exited = w.eof = true;
    return false;
  }
  double allowance_s = 0.0;  // a user's program may take long to start (tenant_allowances_s)
  for (std::size_t i : tenants) allowance_s = std::max(allowance_s, tenant_allowances_s(s_.tenants[i]).ready_s);
  w.deadline_ns = clock_.now_ns() + ns_of_seconds(s_.warmup_s + o_.timeout_margin_s + allowance_s);
  return true;
}

bool RepetitionRun::wait_until_ready(Worker& w, const std::string& who) {
  const auto all_ready = [&] { return std::all_of(w.slots.begin(), w.slots.end(), [](const Slot& s) { return s.ready; }); };
  while (!all_ready() && !w.failed() && !w.waived() && !interrupted_) {
    if (clock_.now_ns() > w.deadline_ns) {
      time_out(w);
      break;
    }
    pump(50);
    show_progress("warming up " + plan_.sets[w.set].name + " " + who);
  }
  w.ready_seen = all_ready() && !w.failed();
  return w.ready_seen && !w.waived() && !interrupted_;
}

// Starts one worker process and waits until it is ready (or failed, waived, timed out, interrupted).
bool RepetitionRun::start_worker(std::size_t set, const std::vector<std::size_t>& tenants) {
  if (tenants.size() == 1 && s_.tenants[tenants[0]].ranks > 1) return start_rank_workers(set, tenants[0]);
  const std::string who = tenants.size() > 1 ? "all" : file_name_part(s_.tenants[tenants[0]].name);  // for logs, progress
  Worker& w = add_worker(set, tenants, who);
  return launch(w, tenants) && wait_until_ready(w, who);
}

// The watchdog fired: the worker is killed at once (with everything it started), not left to the
// stop that follows.
void RepetitionRun::time_out(Worker& w) {
  w.timed_out = true;
  w.channel->kill();
}

// Reads what the workers said, reaps the ones that exited, watches for SIGINT/SIGTERM.
void RepetitionRun::pump(int timeout_ms) {
  std::vector<WorkerChannel*> channels;
  std::vector<Worker*> owners;
  for (Worker& w : workers_)
    if (w.channel && !w.eof) {
      channels.push_back(w.channel.get());
      owners.push_back(&w);
    }
  std::vector<char> readable;
  clock_.wait(channels, timeout_ms, readable);
  for (std::size_t k = 0; k < owners.size(); ++k)
    if (readable[k]) read_reports(*owners[k]);
  reap_exited();
  const bool signalled = interrupt_requested_();  // asked every time, so a pending signal is read
  if (signalled && !interrupted_) stop_everything(true);
}

void RepetitionRun::read_reports(Worker& w) {
  std::vector<std::string> lines;
  const ReadStatus status = w.channel->read_reports(lines);
  for (const auto& line : lines) handle_message(w, line);
  if (status == ReadStatus::overlong && w.error.empty())
    w.error = ProtocolError("a line longer than " + std::to_string(kMaxReportLineBytes) + " bytes").what();
  if (status != ReadStatus::open) w.eof = true;
}

void RepetitionRun::reap_exited() {
  for (Worker& w : workers_)
    if (w.channel && !w.exited)
      if (auto st = w.channel->poll_exit()) {
        w.exited = true;
        w.exit = *st;
        // What it wrote between the last poll and its exit (its last report after teardown): the pipe
        // holds it, then end of file. At most 16 MiB (the longest line) in 64 KiB reads.
        for (int k = 0; k < 256 && !w.eof; ++k) read_reports(w);
      }
}

// A report the harness cannot accept makes the worker's `error` (the first problem is kept), never
// the harness's.
void RepetitionRun::handle_message(Worker& w, const std::string& line) {
  WorkerMessage m;
  try {
    m = parse_worker_message(line, {w.slots.size(), static_cast<int>(r_.blocks.size())});
  } catch (const ProtocolError& e) {
    if (w.error.empty()) w.error = e.what();
    return;
  }
  Slot& slot = w.slots[m.slot];
  switch (m.type()) {
    case WorkerMessageType::ready: on_ready(w, slot, std::get<ReadyMessage>(std::move(m.body))); break;
    case WorkerMessageType::waived:
      slot.waived = true;
      slot.waive_reason = std::get<WaivedMessage>(m.body).reason;
      break;
    case WorkerMessageType::error:
      if (w.error.empty())
        w.error = (w.slots.size() > 1 ? r_.tenants[slot.tenant].name + ": " : std::string()) +
                  std::get<ErrorMessage>(m.body).message;
      break;
    case WorkerMessageType::started: slot.started_ns = std::get<StartedMessage>(m.body).t_ns; break;
    case WorkerMessageType::samples: on_samples(slot, std::get<SamplesMessage>(m.body)); break;
    case WorkerMessageType::done: on_done(slot, std::get<DoneMessage>(m.body)); break;
    case WorkerMessageType::kv_put: on_kv_put(w, slot, std::get<KvPutMessage>(std::move(m.body))); break;
    case WorkerMessageType::kv_get: on_kv_get(w, slot, std::get<KvGetMessage>(m.body)); break;
    case WorkerMessageType::escaped: slot.escaped = std::get<EscapedMessage>(m.body).count; break;
    case WorkerMessageType::gave_up: slot.lines_given_up = std::get<GaveUpMessage>(m.body).count; break;
  }
}

void RepetitionRun::on_ready(Worker& w, Slot& slot, ReadyMessage&& m) {
  TenantResult& t = r_.tenants[slot.tenant];
  slot.ready = true;
  slot.env = std::move(m.env);
  slot.resolved = std::move(m.resolved);
  t.work = {m.work, m.unit};
  if (t.resolved_params.empty()) {
    t.resolved_params = slot.resolved;  // what the later processes of the tenant are given
    return;
  }
  // A later process was given what the first one resolved (gemm's algorithm, an open loop's rate) and
  // must run exactly that: otherwise its phase measures another configuration, a bias without a sign.
  if (slot.resolved != t.resolved_params && w.error.empty())
    w.error = t.name + ": this process resolved " + slot.resolved.dump() + ", the tenant's first process " +
              t.resolved_params.dump() + ": its phases would not run the same configuration";
}

void RepetitionRun::on_done(Slot& slot, const DoneMessage& m) {
  slot.done = true;
  PhaseResult& pr = phase_of(r_.tenants[slot.tenant], r_.blocks[m.block].phase);
  if (pr.measure_start_ns == 0) pr.measure_start_ns = m.measure_start_ns;
  pr.measure_end_ns = m.measure_end_ns;
}

void RepetitionRun::on_samples(Slot& slot, const SamplesMessage& m) {
  if (s_.tenants[slot.tenant].ranks > 1) {  // merged over the ranks when the block is collected
    RankSamples& b = slot.block_samples;
    b.start_ns.insert(b.start_ns.end(), m.start_ns.begin(), m.start_ns.end());
    b.duration_s.insert(b.duration_s.end(), m.duration_s.begin(), m.duration_s.end());
    for (const auto& [name, values] : m.counters) {
      auto& all = b.counters[name];
      all.resize(b.start_ns.size() - m.size(), 0.0);
      all.insert(all.end(), values.begin(), values.end());
    }
    return;
  }
  PhaseResult& pr = phase_of(r_.tenants[slot.tenant], r_.blocks[m.block].phase);
  for (const auto& [name, values] : m.counters) {
    auto& all = pr.counter_samples[name];
    all.resize(pr.start_ns.size(), 0.0);  // samples before this counter first appeared
    all.insert(all.end(), values.begin(), values.end());
  }
  pr.start_ns.insert(pr.start_ns.end(), m.start_ns.begin(), m.start_ns.end());
  for (auto& [name, all] : pr.counter_samples) all.resize(pr.start_ns.size(), 0.0);
  pr.duration_s.insert(pr.duration_s.end(), m.duration_s.begin(), m.duration_s.end());
  pr.block.insert(pr.block.end(), m.size(), m.block);
  // Per-sample request counts keep latencies attributable to samples (and to the window).
  pr.latency_count.insert(pr.latency_count.end(), m.latency_count.begin(), m.latency_count.end());
  pr.latencies_s.insert(pr.latencies_s.end(), m.latencies_s.begin(), m.latencies_s.end());
}

}  // namespace ib
