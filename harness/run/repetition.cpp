#include "harness/run/repetition.h"

#include "harness/analysis/analysis.h"
#include "harness/core/clock.h"
#include "harness/modes/mps_daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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

std::string sanitize(const std::string& s) {
  std::string o;
  for (char c : s) o += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return o;
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
                             const std::function<bool(int)>& poll_signal)
    : o_(o), s_(s), plan_(plan), r_(r), poll_signal_(poll_signal), reruns_left_(o.max_reruns) {
  const std::size_t n = s.tenants.size();
  planned_.assign(n, {0, 0, 0});
  started_.assign(n, {0, 0, 0});
  completed_.assign(n, {0, 0, 0});
  for (const BlockSpec& b : plan.round)
    for (std::size_t i : b.tenants) planned_[i][pi(b.phase)] += o.rounds;
  seats_.assign(plan.sets.size(), std::vector<Seat>(n));
  if (!o.modes.run_dir.empty()) {
    no_mps_pipe_dir_ = o.modes.run_dir + "/no-mps";
    if (mkdir(no_mps_pipe_dir_.c_str(), 0700) != 0 && errno != EEXIST) no_mps_pipe_dir_.clear();
  }
}

RepetitionRun::~RepetitionRun() {
  for (Worker& w : workers_) {
    close_fd(w.proc.control_fd);
    close_fd(w.proc.report_fd);
    if (!w.exited && w.proc.pid > 0) {
      kill_process_group(w.proc.pid, SIGKILL);
      wait_for(w.proc.pid);
    }
  }
}

std::vector<std::string> RepetitionRun::worker_args(const std::vector<std::size_t>& tenants, bool device_from_env) const {
  // Inside a worker placed by CUDA_VISIBLE_DEVICES=MIG-..., its one visible device is CUDA device 0.
  std::vector<std::string> a = {"worker", "--backend", backend_name(o_.backend), "--device",
                                std::to_string(device_from_env ? 0 : s_.device), "--warmup", std::to_string(s_.warmup_s),
                                "--rewarm", std::to_string(o_.rewarm_s)};
  for (std::size_t i : tenants) {
    const Tenant& t = s_.tenants[i];
    json params = t.params;
    params.update(r_.tenants[i].resolved_params);  // what an earlier worker of this tenant resolved
    a.push_back("--tenant");
    a.push_back(json{{"workload", t.workload}, {"params", params}, {"cpus", t.placement.cpus}}.dump());
  }
  return a;
}

// Starts one worker process and waits until it is ready (or failed, waived, timed out, interrupted).
bool RepetitionRun::start_worker(std::size_t set, const std::vector<std::size_t>& tenants) {
  const WorkerSet& ws = plan_.sets[set];
  Worker w;
  w.set = set;
  for (std::size_t i : tenants) {
    Slot slot;
    slot.tenant = i;
    w.slots.push_back(slot);
  }
  const std::string who = tenants.size() > 1 ? "all" : sanitize(s_.tenants[tenants[0]].name);
  w.log = o_.log_dir + "/" + sanitize(s_.name) + "-" + r_.mode + "-r" + std::to_string(r_.repetition) + "-" + ws.name +
          "-" + who + ".log";
  workers_.push_back(std::move(w));
  const std::size_t k = workers_.size() - 1;
  for (std::size_t slot = 0; slot < tenants.size(); ++slot) seats_[set][tenants[slot]] = {k, slot};
  Worker& wk = workers_[k];
  try {
    SpawnSpec spec{o_.worker_exe, worker_args(tenants, ws.device_from_env),
                   with_mps_decided(ws.env(tenants[0]), ws.mps_client, no_mps_pipe_dir_), wk.log, kInheritedMpsSettings};
    wk.proc = spawn_process(spec);
  } catch (const std::exception& e) {
    wk.error = e.what();
    wk.exited = wk.eof = true;
    return false;
  }
  fcntl(wk.proc.report_fd, F_SETFL, fcntl(wk.proc.report_fd, F_GETFL) | O_NONBLOCK);
  wk.reader = std::make_unique<LineReader>(wk.proc.report_fd);
  const std::int64_t deadline = monotonic_ns() + secs(s_.warmup_s + o_.timeout_margin_s);
  const auto all_ready = [&] {
    return std::all_of(wk.slots.begin(), wk.slots.end(), [](const Slot& s) { return s.ready; });
  };
  while (!all_ready() && !wk.failed() && !wk.waived() && !interrupted_) {
    if (monotonic_ns() > deadline) {
      wk.timed_out = true;
      kill_process_group(wk.proc.pid, SIGKILL);
      break;
    }
    pump(50);
    show_progress("warming up " + ws.name + " " + who);
  }
  wk.ready_seen = all_ready() && !wk.failed();
  return wk.ready_seen && !wk.waived() && !interrupted_;
}

// Reads what the workers said, reaps the ones that exited, watches for SIGINT/SIGTERM.
void RepetitionRun::pump(int timeout_ms) {
  std::vector<pollfd> fds;
  std::vector<Worker*> owners;
  for (Worker& w : workers_)
    if (w.proc.report_fd >= 0) {
      fds.push_back({w.proc.report_fd, POLLIN, 0});
      owners.push_back(&w);
    }
  poll(fds.data(), fds.size(), fds.empty() ? 0 : timeout_ms);
  for (std::size_t k = 0; k < owners.size(); ++k) {
    if (!fds[k].revents) continue;
    Worker& w = *owners[k];
    std::vector<std::string> lines;
    const bool open = w.reader->read_some(lines);
    for (const auto& line : lines) handle_message(w, line);
    if (!open) {
      w.eof = true;
      close_fd(w.proc.report_fd);
    }
  }
  for (Worker& w : workers_)
    if (!w.exited && w.proc.pid > 0)
      if (auto st = try_wait(w.proc.pid)) {
        w.exited = true;
        w.exit = *st;
      }
  if (!interrupted_ && poll_signal_(fds.empty() ? timeout_ms : 0)) stop_everything(true);
}

void RepetitionRun::handle_message(Worker& w, const std::string& line) {
  try {
    const json m = json::parse(line, nullptr, false);
    const std::size_t k = m.is_object() ? m.value("slot", std::size_t{0}) : 0;
    if (m.is_discarded() || !m.is_object() || !m.contains("type") || k >= w.slots.size()) {
      w.error = "malformed message from worker: " + line.substr(0, 100);
      return;
    }
    Slot& slot = w.slots[k];
    TenantResult& t = r_.tenants[slot.tenant];
    const std::string type = m.value("type", "");
    if (type == "ready") {
      slot.ready = true;
      if (m.contains("env")) slot.env = m.at("env");
      if (m.contains("resolved") && m.at("resolved").is_object()) {
        slot.resolved = m.at("resolved");
        if (t.resolved_params.empty()) t.resolved_params = slot.resolved;
      }
      t.work = {m.value("work", 0.0), m.value("unit", std::string())};
    } else if (type == "waived") {
      slot.waived = true;
      slot.waive_reason = m.value("reason", std::string());
    } else if (type == "error") {
      w.error = (w.slots.size() > 1 ? t.name + ": " : std::string()) + m.value("message", std::string("unknown error"));
    } else if (type == "started") {
      slot.started_ns = m.value("t_ns", std::int64_t{0});
    } else if (type == "samples") {
      handle_samples(w, slot, m);
    } else if (type == "done") {
      const int b = m.value("block", -1);
      if (b < 0 || b >= static_cast<int>(r_.blocks.size())) throw std::out_of_range("done for an unknown block");
      slot.done = true;
      PhaseResult& pr = phase_of(t, r_.blocks[b].phase);
      if (pr.measure_start_ns == 0) pr.measure_start_ns = m.value("measure_start_ns", std::int64_t{0});
      pr.measure_end_ns = m.value("measure_end_ns", std::int64_t{0});
    }
  } catch (const std::exception& e) {
    w.error = std::string("malformed message from worker: ") + e.what();
  }
}

void RepetitionRun::handle_samples(Worker&, Slot& slot, const json& m) {
  const int b = m.at("block").get<int>();
  if (b < 0 || b >= static_cast<int>(r_.blocks.size())) throw std::out_of_range("samples for an unknown block");
  PhaseResult& pr = phase_of(r_.tenants[slot.tenant], r_.blocks[b].phase);
  const auto st = m.at("start_ns").get<std::vector<std::int64_t>>();
  const auto du = m.at("duration_s").get<std::vector<double>>();
  if (du.size() != st.size()) throw std::length_error("start_ns and duration_s differ in length");
  if (m.contains("counters"))
    for (const auto& [name, column] : m.at("counters").items()) {
      auto& all = pr.counter_samples[name];
      all.resize(pr.start_ns.size(), 0.0);  // samples before this counter first appeared
      const auto values = column.get<std::vector<double>>();
      if (values.size() != st.size()) throw std::length_error("counter " + name + " differs in length");
      all.insert(all.end(), values.begin(), values.end());
    }
  pr.start_ns.insert(pr.start_ns.end(), st.begin(), st.end());
  for (auto& [name, all] : pr.counter_samples) all.resize(pr.start_ns.size(), 0.0);
  pr.duration_s.insert(pr.duration_s.end(), du.begin(), du.end());
  pr.block.insert(pr.block.end(), st.size(), b);
  // Per-sample request counts keep latencies attributable to samples (and to the window).
  const auto lc = m.contains("latency_count") ? m.at("latency_count").get<std::vector<std::uint32_t>>()
                                              : std::vector<std::uint32_t>(st.size(), 0);
  const auto la = m.contains("latencies_s") ? m.at("latencies_s").get<std::vector<double>>() : std::vector<double>{};
  std::size_t total = 0;
  for (auto c : lc) total += c;
  if (lc.size() != st.size() || total != la.size()) throw std::length_error("latency_count does not match latencies_s");
  pr.latency_count.insert(pr.latency_count.end(), lc.begin(), lc.end());
  pr.latencies_s.insert(pr.latencies_s.end(), la.begin(), la.end());
}

}  // namespace ib

namespace ib {

std::vector<pid_t> RepetitionRun::own_pids() const {
  std::vector<pid_t> pids = {getpid()};
  for (const Worker& w : workers_)
    if (!w.exited && w.proc.pid > 0) pids.push_back(w.proc.pid);
  return pids;
}

void RepetitionRun::show_progress(const std::string& what) {
  if (!o_.progress) return;
  std::ostringstream os;
  os << s_.name << " (" << r_.mode << ") rep " << r_.repetition << "/" << s_.repetitions << " " << what;
  o_.progress(os.str());
}

// "go K SECONDS SLOTS" to every worker of the block's set that runs one of its tenants.
void RepetitionRun::release(const BlockSpec& spec, int index) {
  std::map<std::size_t, std::string> slots_of;  // worker -> "0,1"
  for (std::size_t i : spec.tenants) {
    const Seat seat = seats_[spec.set][i];
    Slot& slot = workers_[seat.worker].slots[seat.slot];
    slot.done = false;
    slot.started_ns = 0;
    std::string& list = slots_of[seat.worker];
    list += (list.empty() ? "" : ",") + std::to_string(seat.slot);
    ++started_[i][pi(spec.phase)];
  }
  const double block_s = s_.duration_s / o_.rounds;
  std::ostringstream seconds;
  seconds.precision(17);
  seconds << block_s;
  for (const auto& [k, list] : slots_of)
    write_all(workers_[k].proc.control_fd, "go " + std::to_string(index) + " " + seconds.str() + " " + list + "\n");
}

// Waits until every released tenant is done with block `index` (or something failed), with the watchdog.
void RepetitionRun::collect_block(const BlockSpec& spec, int index) {
  BlockRecord& b = r_.blocks[index];
  const std::int64_t deadline = b.start_ns + secs(s_.duration_s / o_.rounds + o_.rewarm_s + o_.timeout_margin_s);
  const auto slot_of = [&](std::size_t i) -> Slot& {
    const Seat seat = seats_[spec.set][i];
    return workers_[seat.worker].slots[seat.slot];
  };
  for (;;) {
    const bool all_done = std::all_of(spec.tenants.begin(), spec.tenants.end(), [&](std::size_t i) { return slot_of(i).done; });
    const bool any_failed = std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.failed(); });
    if (all_done || any_failed || aborting_) break;
    if (monotonic_ns() > deadline) {
      for (std::size_t i : spec.tenants) {
        Worker& w = workers_[seats_[spec.set][i].worker];
        if (!slot_of(i).done && !w.exited) {
          w.timed_out = true;
          kill_process_group(w.proc.pid, SIGKILL);
        }
      }
      break;
    }
    pump(50);
    std::ostringstream os;
    os.precision(1);
    os << std::fixed << phase_name(spec.phase) << " block " << (index + 1) << " (round " << (b.round + 1) << "/"
       << o_.rounds << ") " << (monotonic_ns() - b.start_ns) * 1e-9 << "/" << s_.duration_s / o_.rounds << " s";
    show_progress(os.str());
  }
  b.end_ns = monotonic_ns();
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (std::size_t i : spec.tenants) {
    Slot& slot = slot_of(i);
    if (slot.done && slot.started_ns > 0) {
      lo = std::min(lo, slot.started_ns);
      hi = std::max(hi, slot.started_ns);
    }
    if (slot.done) ++completed_[i][pi(spec.phase)];
  }
  if (spec.phase == Phase::colocated && hi >= lo) b.barrier_skew_s = static_cast<double>(hi - lo) * 1e-9;
}

void RepetitionRun::measure_foreign_load(BlockRecord& b, const CpuSnapshot& before) {
  const CpuSnapshot after = cpu_snapshot(own_pids());
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  ForeignLoad gpu = b.load;  // the GPU fields were read before the release
  b.load = foreign_load_between(before, after, hz);
  b.load.gpu_foreign_processes = gpu.gpu_foreign_processes;
  b.load.gpu_idle_util_pct = gpu.gpu_idle_util_pct;
  b.load.gpu_foreign_memory_bytes = gpu.gpu_foreign_memory_bytes;
  const std::string why = contamination_reason(b.load, o_.limits, hz, own_pids().size());
  if (!why.empty()) {
    b.status = BlockStatus::contaminated;
    b.reason = why;
  }
}

// Runs one block (and its re-runs while it is contaminated and re-runs are left). False when the
// repetition cannot go on (a worker failed, a timeout, an interruption).
bool RepetitionRun::run_block(const BlockSpec& spec, int round, int attempt) {
  if (interrupted_ || poll_signal_(0)) {
    stop_everything(true);
    return false;
  }
  BlockRecord b;
  b.index = static_cast<int>(r_.blocks.size());
  b.round = round;
  b.phase = spec.phase;
  b.attempt = attempt;
  for (std::size_t i : spec.tenants) b.tenants.push_back(s_.tenants[i].name);
  if (o_.gpu_load_probe) o_.gpu_load_probe(b.load, own_pids());
  const CpuSnapshot before = cpu_snapshot(own_pids());
  b.start_ns = monotonic_ns();
  r_.blocks.push_back(b);
  release(spec, b.index);
  collect_block(spec, b.index);
  BlockRecord& done = r_.blocks[b.index];
  const bool failed = aborting_ || std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.failed(); });
  if (failed) {
    done.status = interrupted_ ? BlockStatus::interrupted : BlockStatus::failed;
    describe_failure(spec.phase);
    stop_everything(interrupted_);
    return false;
  }
  measure_foreign_load(done, before);
  if (done.status != BlockStatus::contaminated) return true;
  if (reruns_left_ <= 0) {
    done.status = BlockStatus::excluded;
    done.reason += "; no re-run left (--max-reruns)";
    return true;
  }
  --reruns_left_;
  for (std::size_t i : spec.tenants) ++planned_[i][pi(spec.phase)];  // the re-run is one more block to finish
  return run_block(spec, round, attempt + 1);
}

}  // namespace ib

namespace ib {

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
    write_all(w.proc.control_fd, "end\n");
    close_fd(w.proc.control_fd);
  }
  kill_at_ = monotonic_ns() + secs(o_.stop_grace_s);
}

void RepetitionRun::end_workers() {
  if (!aborting_) {
    for (Worker& w : workers_) {
      w.ended = true;
      write_all(w.proc.control_fd, "end\n");
      close_fd(w.proc.control_fd);
    }
    kill_at_ = monotonic_ns() + secs(o_.stop_grace_s);
  }
  while (std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return !w.exited && w.proc.pid > 0; })) {
    pump(50);
    if (monotonic_ns() > kill_at_)
      for (Worker& w : workers_)
        if (!w.exited && w.proc.pid > 0) {
          w.killed = true;
          kill_process_group(w.proc.pid, SIGKILL);
        }
  }
  for (Worker& w : workers_) {
    close_fd(w.proc.control_fd);
    close_fd(w.proc.report_fd);
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
  const Seat seat = seats_[spec->set][i];
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
  oc.env = slot.env.get<std::map<std::string, std::string>>();
  oc.resolved = slot.resolved;
  const int p = pi(phase);
  if (slot.waived) {
    oc.status = WorkerStatus::waived;
    oc.message = slot.waive_reason;
  } else if (!w.ready_seen) {  // failed, stopped or interrupted while setting up: every phase it had
    oc.status = failure_status(w);
    oc.message = failure_message(w);
  } else if (started_[i][p] == 0) {
    oc.status = WorkerStatus::not_run;
  } else if (completed_[i][p] >= planned_[i][p]) {
    oc.status = WorkerStatus::ok;  // every block of this phase finished (the worker may have failed later, elsewhere)
  } else {
    oc.status = failure_status(w);
    oc.message = failure_message(w);
  }
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

void RepetitionRun::run() {
  if (o_.nvml && o_.telemetry_hz > 0.0) {
    sampler_ = std::make_unique<TelemetrySampler>(*o_.nvml, o_.telemetry_device, o_.telemetry_hz);
    sampler_->start();
  }
  bool ok = true;
  for (std::size_t k = 0; k < plan_.sets.size() && ok; ++k)
    for (const auto& tenants : plan_.sets[k].processes) {
      ok = start_worker(k, tenants);
      if (!ok) {
        const auto first = std::find_if(plan_.round.begin(), plan_.round.end(), [&](const BlockSpec& b) { return b.set == k; });
        if (first != plan_.round.end()) describe_failure(first->phase);
        stop_everything(interrupted_);
        break;
      }
    }
  const auto schedule = round_schedule(plan_.round.size(), o_.rounds, o_.round_order, o_.seed);
  for (int round = 0; round < o_.rounds && ok; ++round)
    for (std::size_t idx : schedule[round]) {
      ok = run_block(plan_.round[idx], round, 1);
      if (!ok) break;
    }
  end_workers();
  if (sampler_) sampler_->stop();
  record_outcomes();
  finish_phases();
}

}  // namespace ib
