#include "harness/run/repetition.h"

#include "harness/analysis/analysis.h"
#include "harness/core/text.h"
#include "harness/modes/mps_daemon.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <fstream>
#include <sstream>

namespace ib {

using nlohmann::json;

namespace {

std::int64_t secs(double s) { return static_cast<std::int64_t>(s * 1e9); }
int pi(Phase p) { return static_cast<int>(p); }

std::string last_log_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  if (last.size() > 300) last = last.substr(0, 300) + "...";
  return last;
}

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

RepetitionRun::RepetitionRun(const OrchestratorOptions& o, const Scenario& s, const Plan& plan, RunResult& r,
                             Launcher& launcher, Clock& clock, const std::function<bool()>& interrupt_requested,
                             const LookFn& look)
    : o_(o), s_(s), plan_(plan), r_(r), launcher_(launcher), clock_(clock), interrupt_requested_(interrupt_requested),
      look_(look), reruns_left_(o.max_reruns) {
  const std::size_t n = s.tenants.size();
  planned_.assign(n, {0, 0, 0});
  started_.assign(n, {0, 0, 0});
  completed_.assign(n, {0, 0, 0});
  // The first rounds are planned; each round after them adds its blocks when it starts (run_round).
  for (const BlockSpec& b : plan.round)
    for (std::size_t i : b.tenants) planned_[i][pi(b.phase)] += o.rounds;
  seats_.assign(plan.sets.size(), std::vector<std::vector<Seat>>(n));
  for (auto& set : seats_)
    for (std::size_t i = 0; i < n; ++i) set[i].assign(static_cast<std::size_t>(s.tenants[i].ranks), Seat{});
  if (!o.modes.run_dir.empty()) {
    no_mps_pipe_dir_ = o.modes.run_dir + "/no-mps";
    if (mkdir(no_mps_pipe_dir_.c_str(), 0700) != 0 && errno != EEXIST) no_mps_pipe_dir_.clear();
  }
}

RepetitionRun::~RepetitionRun() {
  // A worker still alive here (an exception on the way) is killed; its channel reaps it when it goes.
  for (Worker& w : workers_)
    if (w.channel && !w.exited) w.channel->kill();
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
                                   std::to_string(t.ranks), std::string("--local-rank"), std::to_string(rank)})
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
    std::vector<std::string> env = with_mps_decided(ws.env(tenants[0]), ws.mps_client, no_mps_pipe_dir_);
    if (s_.tenants[tenants[0]].ranks > 1)  // what torchrun gives each rank, for a program that reads it
      for (const auto& [k, v] : {std::pair<const char*, int>{"IB_RANK", rank}, {"IB_WORLD_SIZE", s_.tenants[tenants[0]].ranks},
                                 {"IB_LOCAL_RANK", rank}})
        env.push_back(std::string(k) + "=" + std::to_string(v));
    const SpawnSpec spec{o_.worker_exe, worker_args(tenants, ws.device_from_env, rank), env, w.log,
                         kInheritedMpsSettings};
    w.channel = launcher_.start(spec);
  } catch (const std::exception& e) {
    w.error = e.what();
    w.exited = w.eof = true;
    return false;
  }
  double allowance_s = 0.0;  // a user's program may take long to start (tenant_allowances_s)
  for (std::size_t i : tenants) allowance_s = std::max(allowance_s, tenant_allowances_s(s_.tenants[i]).ready_s);
  w.deadline_ns = clock_.now_ns() + secs(s_.warmup_s + o_.timeout_margin_s + allowance_s);
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

std::vector<pid_t> RepetitionRun::own_pids() const {
  std::vector<pid_t> pids = {getpid()};
  for (const Worker& w : workers_)
    if (w.channel && !w.exited && w.channel->pid() > 0) pids.push_back(w.channel->pid());
  if (plan_.helper_pids)
    for (pid_t p : plan_.helper_pids())
      if (std::find(pids.begin(), pids.end(), p) == pids.end()) pids.push_back(p);
  // What our workers started (a command tenant's program, its children) is ours too.
  return with_descendants(pids, process_parents());
}

void RepetitionRun::show_progress(const std::string& what) {
  if (!o_.progress) return;
  std::ostringstream os;
  os << s_.name << " (" << r_.mode << ") rep " << r_.repetition << "/" << s_.repetitions << " " << what;
  o_.progress(os.str());
}

RepetitionRun::Slot& RepetitionRun::slot_of(const BlockSpec& spec, std::size_t tenant) {
  const Seat seat = seats_[spec.set][tenant][0];
  return workers_[seat.worker].slots[seat.slot];
}

bool RepetitionRun::any_failed() const {
  return std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.failed(); });
}

// "go" to every worker of the block's set that runs one of its tenants, each with its watchdog
// re-armed for the block (the warm-up's deadline has nothing to do with it).
void RepetitionRun::release(const BlockSpec& spec, int index) {
  std::map<std::size_t, std::vector<std::size_t>> slots_of;  // worker -> its released slots
  double allowance_s = 0.0;  // one sample of a user's program may last its step_timeout_s
  for (std::size_t i : spec.tenants) {
    for (const Seat& seat : seats_of(spec, i)) {  // every rank of a tenant with ranks
      Slot& slot = workers_[seat.worker].slots[seat.slot];
      slot.done = false;
      slot.started_ns = 0;
      slots_of[seat.worker].push_back(seat.slot);
    }
    ++started_[i][pi(spec.phase)];
    allowance_s = std::max(allowance_s, tenant_allowances_s(s_.tenants[i]).step_s);
  }
  const std::int64_t deadline = clock_.now_ns() + secs(block_s() + o_.rewarm_s + o_.timeout_margin_s + allowance_s);
  for (const auto& [k, slots] : slots_of) {
    Worker& w = workers_[k];
    w.deadline_ns = deadline;
    w.channel->send(to_line(ControlMessage{GoCommand{index, block_s(), slots}}));
  }
}

// Pumps until every released tenant is done with block `index`, something failed, or the watchdog
// fired (then the workers late with it are killed).
void RepetitionRun::wait_for_block(const BlockSpec& spec, int index) {
  const BlockRecord& b = r_.blocks[index];
  const auto done = [&](const Seat& seat) { return workers_[seat.worker].slots[seat.slot].done; };
  for (;;) {
    const bool all_done = std::all_of(spec.tenants.begin(), spec.tenants.end(), [&](std::size_t i) {
      const auto seats = seats_of(spec, i);
      return std::all_of(seats.begin(), seats.end(), done);
    });
    if (all_done || any_failed() || aborting_) return;
    const std::int64_t now = clock_.now_ns();
    bool fired = false;
    for (std::size_t i : spec.tenants)
      for (const Seat& seat : seats_of(spec, i)) {
        Worker& w = workers_[seat.worker];
        if (!done(seat) && !w.exited && now > w.deadline_ns) {
          time_out(w);
          fired = true;
        }
      }
    if (fired) return;
    pump(50);
    std::ostringstream os;
    os.precision(1);
    os << std::fixed << phase_name(spec.phase) << " block " << (index + 1) << " (round " << (b.round + 1) << "/"
       << std::max(o_.rounds, r_.stopping.max_rounds) << ") " << (clock_.now_ns() - b.start_ns) * 1e-9 << "/" << block_s()
       << " s";
    show_progress(os.str());
  }
}

// Waits for block `index` (wait_for_block), then records its end, who completed it and the barrier skew.
void RepetitionRun::collect_block(const BlockSpec& spec, int index) {
  wait_for_block(spec, index);
  BlockRecord& b = r_.blocks[index];
  b.end_ns = clock_.now_ns();
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (std::size_t i : spec.tenants) {
    bool all_done = true;
    for (const Seat& seat : seats_of(spec, i)) {  // a tenant with ranks: each rank's start
      const Slot& slot = workers_[seat.worker].slots[seat.slot];
      if (slot.done && slot.started_ns > 0) {
        lo = std::min(lo, slot.started_ns);
        hi = std::max(hi, slot.started_ns);
      }
      all_done &= slot.done;
    }
    if (all_done) ++completed_[i][pi(spec.phase)];
    if (all_done && s_.tenants[i].ranks > 1) merge_ranks(spec, i, index);
  }
  if (spec.phase == Phase::colocated && hi >= lo) b.barrier_skew_s = static_cast<double>(hi - lo) * 1e-9;
}

void RepetitionRun::measure_foreign_load(BlockRecord& b, const CpuSnapshot& before, const std::vector<pid_t>& own) {
  const CpuSnapshot after = cpu_snapshot(own);
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  ForeignLoad gpu = b.load;  // the GPU fields were read before the release
  b.load = foreign_load_between(before, after, hz);
  b.load.gpu_foreign_processes = gpu.gpu_foreign_processes;
  b.load.gpu_idle_util_pct = gpu.gpu_idle_util_pct;
  b.load.gpu_foreign_memory_bytes = gpu.gpu_foreign_memory_bytes;
  b.load.gpu_drain_s = gpu.gpu_drain_s;
  b.load.gpu_own_busy_processes = gpu.gpu_own_busy_processes;
  const std::string why = contamination_reason(b.load, o_.limits, hz, own.size());
  if (!why.empty()) {
    b.status = BlockStatus::contaminated;
    b.reason = why;
  }
}

// The GPU memory each of the block's tenants held before its release (its worker and what that
// started, e.g. a command tenant's program), kept at its peak per phase: a user's program's footprint
// for the advice (analysis/advice.h).
void RepetitionRun::note_gpu_memory(const BlockSpec& spec, const ForeignLoad& load) {
  if (load.gpu_own_process_memory.empty() || (!load.gpu_memory_total_bytes && load.gpu_memory_total_by_pid.empty())) return;
  const std::map<pid_t, pid_t> parents = process_parents();
  for (std::size_t i : spec.tenants) {
    const Seat seat = seats_[spec.set][i][0];
    if (seat.worker == SIZE_MAX || !workers_[seat.worker].channel) continue;
    const std::vector<pid_t> mine = with_descendants({workers_[seat.worker].channel->pid()}, parents);
    unsigned long long bytes = 0;
    bool listed = false;
    std::optional<unsigned long long> total = load.gpu_memory_total_bytes;  // mode mig: its instance's, below
    for (const auto& [pid, used] : load.gpu_own_process_memory)
      if (std::find(mine.begin(), mine.end(), static_cast<pid_t>(pid)) != mine.end()) {
        bytes += used;
        listed = true;
        if (const auto it = load.gpu_memory_total_by_pid.find(pid); it != load.gpu_memory_total_by_pid.end())
          total = it->second;
      }
    // NVML listed none of the tenant's processes (under MPS it lists the server, not its clients): its
    // memory is unknown, not 0 bytes.
    if (!listed) continue;
    PhaseResult& p = phase_of(r_.tenants[i], spec.phase);
    p.gpu_memory_peak_bytes = std::max(p.gpu_memory_peak_bytes.value_or(0), bytes);
    p.gpu_memory_total_bytes = total;
  }
}

// Runs one block (and its re-runs while it is contaminated and re-runs are left). False when the
// repetition cannot go on (a worker failed, a timeout, an interruption).
bool RepetitionRun::run_block(const BlockSpec& spec, int round, int attempt) {
  if (interrupted_ || interrupt_requested_()) {
    stop_everything(true);
    return false;
  }
  BlockRecord b;
  b.index = static_cast<int>(r_.blocks.size());
  b.round = round;
  b.phase = spec.phase;
  b.attempt = attempt;
  for (std::size_t i : spec.tenants) b.tenants.push_back(s_.tenants[i].name);
  // Asked once per block: the same processes before and after (an MPS server asked for twice might
  // answer differently), and get_server_list is a helper command.
  const std::vector<pid_t> own = own_pids();
  if (o_.gpu_load_probe) o_.gpu_load_probe(b.load, own);
  note_gpu_memory(spec, b.load);
  const CpuSnapshot before = cpu_snapshot(own);
  b.start_ns = clock_.now_ns();
  r_.blocks.push_back(b);
  release(spec, b.index);
  collect_block(spec, b.index);
  BlockRecord& done = r_.blocks[b.index];
  if (aborting_ || any_failed()) {
    done.status = interrupted_ ? BlockStatus::interrupted : BlockStatus::failed;
    describe_failure(spec.phase);
    stop_everything(interrupted_);
    return false;
  }
  judge_block(done, spec, before, own);
  if (done.status == BlockStatus::clean) return true;
  if (reruns_left_ <= 0) {
    if (done.status == BlockStatus::contaminated) done.status = BlockStatus::excluded;
    done.reason += "; no re-run left (--max-reruns), not counted";
    return true;
  }
  --reruns_left_;
  for (std::size_t i : spec.tenants) ++planned_[i][pi(spec.phase)];  // the re-run is one more block to finish
  return run_block(spec, round, attempt + 1);
}

// Foreign load, then (an exclusive or alone block: nothing of ours competed) a tail burst against the
// tenant's earlier blocks of the phase: both make the block one to re-run (analysis.h, tail_burst_now).
void RepetitionRun::judge_block(BlockRecord& b, const BlockSpec& spec, const CpuSnapshot& before,
                                const std::vector<pid_t>& own) {
  measure_foreign_load(b, before, own);
  if (b.status != BlockStatus::clean || spec.phase == Phase::colocated) return;
  const std::string why = tail_burst_now(r_, b.index);
  if (why.empty()) return;
  b.status = BlockStatus::outlier;
  b.reason = why + " (nothing of ours competed: the machine's noise)";
}

void RepetitionRun::describe_failure(Phase phase) {
  if (!failed_phase_) failed_phase_ = phase;
}

// Tells every worker still running to end (a neighbour failed, or SIGINT/SIGTERM); they are reaped,
// and killed after the grace period, in end_workers().
void RepetitionRun::stop_everything(bool interrupted) {
  if (aborting_) return;
  aborting_ = true;
  interrupted_ |= interrupted;
  for (Worker& w : workers_) {
    if (w.exited) continue;
    // A failed worker is told to end too (it may be waiting for its next block); it stays failed.
    if (!w.failed()) (interrupted ? w.interrupted : w.stopped_by_us) = true;
    tell_end(w);
  }
  kill_at_ = clock_.now_ns() + secs(o_.stop_grace_s);
}

void RepetitionRun::tell_end(Worker& w) {
  if (!w.channel) return;
  w.channel->send(to_line(ControlMessage{EndCommand{}}));
  w.channel->close_control();
}

// Says "end" (unless stop_everything did), then reaps every worker, killing those still alive after
// the grace period.
void RepetitionRun::end_workers() {
  if (!aborting_) {
    for (Worker& w : workers_) {
      w.ended = true;
      tell_end(w);
    }
    kill_at_ = clock_.now_ns() + secs(o_.stop_grace_s);
  }
  const auto alive = [](const Worker& w) { return w.channel && !w.exited; };
  while (std::any_of(workers_.begin(), workers_.end(), alive)) {
    pump(50);
    if (clock_.now_ns() > kill_at_)
      for (Worker& w : workers_)
        if (alive(w)) {
          w.killed = true;
          w.channel->kill();
        }
  }
}

// Precedence: timeout, interrupted, error, crashed, exited, stopped.
WorkerStatus RepetitionRun::failure_status(const Worker& w) const {
  if (w.timed_out) return WorkerStatus::timeout;
  if (w.interrupted) return WorkerStatus::interrupted;
  if (!w.error.empty()) return WorkerStatus::error;
  if (w.exit.signal && !w.killed) return WorkerStatus::crashed;
  if (w.failed()) return WorkerStatus::exited;
  return WorkerStatus::stopped;
}

std::string RepetitionRun::failure_message(const Worker& w) const {
  const WorkerStatus status = failure_status(w);
  const std::string tail = last_log_line(w.log);
  const std::string log_note = tail.empty() ? "" : "; last log line: " + tail;
  if (status == WorkerStatus::timeout)
    return "no " + std::string(w.ready_seen ? "end of its block" : "ready") + " within " +
           std::to_string(w.ready_seen ? s_.duration_s / o_.rounds : s_.warmup_s) + " s + a " +
           std::to_string(o_.timeout_margin_s) + " s margin; killed";
  if (status == WorkerStatus::interrupted) return "stopped by a signal";
  if (status == WorkerStatus::error) return w.error;
  if (status == WorkerStatus::crashed) return w.exit.describe() + log_note;
  if (status == WorkerStatus::exited) return w.exit.describe() + " before finishing its blocks" + log_note;
  return "stopped by the harness because another worker failed";
}

void RepetitionRun::record_outcome(std::size_t i, Phase phase) {
  const auto spec = std::find_if(plan_.round.begin(), plan_.round.end(), [&](const BlockSpec& b) {
    return b.phase == phase && std::find(b.tenants.begin(), b.tenants.end(), i) != b.tenants.end();
  });
  // A tenant with ranks: a rank whose worker failed speaks for it (its message names the rank); one that
  // died on its own (a signal, an exit without an error) before one whose collective then failed with
  // "connection closed by peer", which is the consequence.
  const std::vector<Seat>& ranks = seats_[spec->set][i];
  Seat seat = ranks[0];
  int best = 0;  // 2: died on its own, 1: failed
  for (const Seat& r : ranks) {
    if (r.worker == SIZE_MAX || !workers_[r.worker].failed()) continue;
    const Worker& rw = workers_[r.worker];
    const int how = (rw.exited && rw.error.empty() && !rw.killed) || (rw.exit.signal && !rw.killed) ? 2 : 1;
    if (how > best) {
      best = how;
      seat = r;
    }
  }
  WorkerOutcome& oc = phase_of(r_.tenants[i], phase).outcome;
  if (seat.worker == SIZE_MAX) {  // never started: the repetition stopped before
    oc.status = WorkerStatus::not_run;
    return;
  }
  const Worker& w = workers_[seat.worker];
  const Slot& slot = w.slots[seat.slot];
  oc.exit_code = w.exit.exit_code;
  oc.signal = w.exit.signal;
  oc.log_file = w.log;
  oc.env = slot.env;
  oc.resolved = slot.resolved;
  oc.escaped_processes = 0;
  for (const Seat& r : ranks)
    if (r.worker != SIZE_MAX) oc.escaped_processes += workers_[r.worker].slots[r.slot].escaped;
  const int p = pi(phase);
  if (slot.waived) {
    oc.status = WorkerStatus::waived;
    oc.message = slot.waive_reason;
  } else if (!w.ready_seen) {  // failed, stopped or interrupted while setting up: every phase it had
    oc.status = failure_status(w);
    oc.message = failure_message(w);
  } else if (started_[i][p] == 0) {
    oc.status = WorkerStatus::not_run;
  } else if (completed_[i][p] >= planned_[i][p] && !(w.ended && !w.error.empty())) {
    oc.status = WorkerStatus::ok;  // every block of this phase finished (the worker may have failed later, elsewhere)
  } else if (completed_[i][p] >= planned_[i][p]) {
    // Every block finished, then its ending failed (a command that ignored SIGTERM): its error.
    oc.status = WorkerStatus::error;
    oc.message = "after its blocks: " + w.error;
  } else {
    oc.status = failure_status(w);
    oc.message = failure_message(w);
  }
  if (ranks.size() > 1 && !oc.message.empty()) oc.message = ranks_note(ranks, seat) + oc.message;
}

void RepetitionRun::record_outcomes() {
  for (std::size_t i = 0; i < s_.tenants.size(); ++i)
    for (Phase p : {Phase::exclusive, Phase::alone, Phase::colocated})
      if (planned_[i][pi(p)] > 0) record_outcome(i, p);
  if (interrupted_) {
    r_.status = RunStatus::interrupted;
    r_.message = "interrupted" + (failed_phase_ ? " during the " + std::string(phase_name(*failed_phase_)) + " phase" : std::string());
    return;
  }
  std::string failed;
  bool waived = false;
  for (Phase p : {Phase::exclusive, Phase::alone, Phase::colocated})
    for (std::size_t i = 0; i < s_.tenants.size(); ++i) {
      const WorkerOutcome& oc = phase_of(r_.tenants[i], p).outcome;
      if (planned_[i][pi(p)] == 0 || oc.status == WorkerStatus::ok || oc.status == WorkerStatus::stopped ||
          oc.status == WorkerStatus::not_run) continue;
      if (!failed_phase_) failed_phase_ = p;
      if (p != *failed_phase_) continue;
      waived |= oc.status == WorkerStatus::waived;
      failed += (failed.empty() ? "" : "; ") + s_.tenants[i].name + " " + to_string(oc.status) + ": " + oc.message;
    }
  if (failed.empty()) return;
  r_.status = waived ? RunStatus::waived : RunStatus::error;
  r_.message = std::string(phase_name(*failed_phase_)) + " phase failed: " + failed;
}

// Statistics of every measured phase, coverage, and the telemetry of the blocks each phase ran in.
void RepetitionRun::finish_phases() {
  summarize_blocks(r_);
  if (!sampler_) return;
  const auto readings = sampler_->samples();
  for (std::size_t i = 0; i < s_.tenants.size(); ++i)
    for (Phase p : {Phase::exclusive, Phase::alone, Phase::colocated}) {
      if (planned_[i][pi(p)] == 0) continue;
      PhaseResult& pr = phase_of(r_.tenants[i], p);
      std::vector<TelemetrySample> mine;
      for (const auto& x : readings)
        for (const BlockRecord& b : r_.blocks)
          if (b.phase == p && x.t_ns >= b.start_ns && x.t_ns <= b.end_ns &&
              std::find(b.tenants.begin(), b.tenants.end(), s_.tenants[i].name) != b.tenants.end()) {
            mine.push_back(x);
            break;
          }
      attach_telemetry(pr, std::move(mine));
      if (const auto err = sampler_->error()) pr.telemetry_error = *err;
      pr.telemetry_unsupported = sampler_->notes();
    }
}

// Starts the plan's workers, one at a time; false when one did not get ready (the others are stopped).
bool RepetitionRun::start_all_workers() {
  for (std::size_t k = 0; k < plan_.sets.size(); ++k)
    for (const auto& tenants : plan_.sets[k].processes)
      if (!start_worker(k, tenants)) {
        const auto first = std::find_if(plan_.round.begin(), plan_.round.end(), [&](const BlockSpec& b) { return b.set == k; });
        if (first != plan_.round.end()) describe_failure(first->phase);
        stop_everything(interrupted_);
        return false;
      }
  return true;
}

bool RepetitionRun::run_round(const std::vector<std::size_t>& order, int round) {
  if (round >= o_.rounds)  // beyond the first rounds: this round's blocks are one more each to finish
    for (const BlockSpec& b : plan_.round)
      for (std::size_t i : b.tenants) ++planned_[i][pi(b.phase)];
  r_.rounds = round + 1;  // begun: a block of it may hold samples
  for (std::size_t idx : order)
    if (!run_block(plan_.round[idx], round, 1)) return false;
  return true;
}

// At a planned look (Stopping::looks counts the scenario's rounds so far): its boundary becomes the one
// the repetition is judged at; before the last round `look_` may say the run has decided.
bool RepetitionRun::stop_at_look(int rounds_done, int last) {
  Stopping& st = r_.stopping;
  const int total = st.earlier_rounds + rounds_done;
  const auto at = std::find(st.looks.begin(), st.looks.end(), total);
  if (at == st.looks.end()) return false;
  const int k = static_cast<int>(at - st.looks.begin());
  st.looks_taken = k + 1;
  st.z = st.boundaries[static_cast<std::size_t>(k)];
  if (rounds_done >= last || !look_) return false;
  if (const auto why = look_(r_, k)) {
    st.stopped_by = *why;
    return true;
  }
  return false;
}

// Rounds until a look says the run has decided or the budget (Stopping::max_rounds) is spent.
void RepetitionRun::run_rounds() {
  Stopping& st = r_.stopping;
  const int last = st.until == StopRule::fixed ? o_.rounds : std::max(o_.rounds, st.max_rounds);
  const auto schedule = round_schedule(plan_.round.size(), last, o_.round_order, o_.seed);
  for (int round = 0; round < last; ++round) {
    if (!run_round(schedule[round], round)) {
      st.stopped_by = interrupted_ ? StoppedBy::interrupted : StoppedBy::failed;
      return;
    }
    if (stop_at_look(round + 1, last)) return;
  }
  st.stopped_by = st.until == StopRule::fixed ? StoppedBy::fixed : StoppedBy::budget;
}

void RepetitionRun::run() {
  if (o_.nvml && o_.telemetry_hz > 0.0) {
    sampler_ = std::make_unique<TelemetrySampler>(*o_.nvml, o_.telemetry_device, o_.telemetry_hz);
    sampler_->start();
  }
  if (start_all_workers()) run_rounds();
  end_workers();
  if (sampler_) sampler_->stop();
  record_outcomes();
  finish_phases();
}

}  // namespace ib
