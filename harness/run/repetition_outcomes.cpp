// RepetitionRun's end: its workers told to end, reaped and killed after the grace period; each tenant's outcome
// per phase (the failure's status and message, with the last line of its log), and the statistics, coverage and
// telemetry of every measured phase.
#include "harness/run/repetition.h"
#include "harness/run/repetition_steps.h"

#include "harness/analysis/analysis.h"
#include "harness/core/text.h"

#include <algorithm>
#include <fstream>

namespace ib {

using namespace repetition_steps;

namespace {

std::string last_log_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  if (last.size() > 300) last = last.substr(0, 300) + "...";
  return last;
}

}  // namespace

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
  kill_at_ = clock_.now_ns() + ns_of_seconds(o_.stop_grace_s);
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
    kill_at_ = clock_.now_ns() + ns_of_seconds(o_.stop_grace_s);
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
  oc.lines_given_up = 0;
  for (const Seat& r : ranks)
    if (r.worker != SIZE_MAX) {
      oc.escaped_processes += workers_[r.worker].slots[r.slot].escaped;
      oc.lines_given_up += workers_[r.worker].slots[r.slot].lines_given_up;
    }
  const int p = phase_index(phase);
  if (slot.waived) {
    oc.status = WorkerStatus::waived;
    oc.message = slot.waive_reason;
  } else if (!w.ready_seen) {  // failed, stopped or interrupted while setting up: every phase it had
    oc.status = failure_status(w);
    oc.message = failure_message(w);
  } else if (started_[i][p] == 0 && w.failed() && !interrupted_ && failed_phase_ == phase) {
    // Failed on its own while none of its blocks of the phase had started (its node lost while a neighbour's
    // block ran): the failure the repetition stopped in, named here, or no outcome would name it (issue 49).
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
      if (planned_[i][phase_index(p)] > 0) record_outcome(i, p);
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
      if (planned_[i][phase_index(p)] == 0 || oc.status == WorkerStatus::ok || oc.status == WorkerStatus::stopped ||
          oc.status == WorkerStatus::not_run) continue;
      if (!failed_phase_) failed_phase_ = p;
      if (p != *failed_phase_) continue;
      waived |= oc.status == WorkerStatus::waived;
      failed += (failed.empty() ? "" : "; ") + s_.tenants[i].name + " " + to_string(oc.status) + ": " + oc.message;
    }
  if (failed.empty() && failed_phase_)  // a failure no outcome holds (a worker of another set, between its blocks)
    for (const Worker& w : workers_)
      if (w.failed() && !w.slots.empty())
        failed += (failed.empty() ? "" : "; ") + s_.tenants[w.slots[0].tenant].name + " " + to_string(failure_status(w)) +
                  ": " + failure_message(w);
  if (failed.empty()) return;
  r_.status = waived ? RunStatus::waived : RunStatus::error;
  r_.message = std::string(phase_name(*failed_phase_)) + " phase failed: " + failed;
}

// Statistics of every measured phase, coverage, and the telemetry of the blocks each phase ran in (with the
// reading in effect at each block's start).
void RepetitionRun::finish_phases() {
  summarize_blocks(r_);
  if (!sampler_) return;
  const auto readings = sampler_->samples();
  for (std::size_t i = 0; i < s_.tenants.size(); ++i)
    for (Phase p : {Phase::exclusive, Phase::alone, Phase::colocated}) {
      if (planned_[i][phase_index(p)] == 0) continue;
      PhaseResult& pr = phase_of(r_.tenants[i], p);
      std::vector<std::pair<std::int64_t, std::int64_t>> windows;
      for (const BlockRecord& b : r_.blocks)
        if (b.phase == p && std::find(b.tenants.begin(), b.tenants.end(), s_.tenants[i].name) != b.tenants.end())
          windows.emplace_back(b.start_ns, b.end_ns);
      attach_telemetry(pr, readings_of_blocks(readings, windows));
      if (const auto err = sampler_->error()) pr.telemetry_error = *err;
      pr.telemetry_unsupported = sampler_->notes();
    }
}

}  // namespace ib
