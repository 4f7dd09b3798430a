// RepetitionRun's blocks: a block released to its workers, waited for and collected (its end, who completed it,
// the barrier skew), the foreign load and GPU memory measured around it, judged (foreign load, tail burst) and
// re-run while contaminated and re-runs are left.
#include "harness/run/repetition.h"
#include "harness/run/repetition_steps.h"

#include "harness/analysis/analysis.h"
#include "harness/core/text.h"

#include <algorithm>
#include <climits>
#include <sstream>

namespace ib {

using namespace repetition_steps;

RepetitionRun::Slot& RepetitionRun::slot_of(const BlockSpec& spec, std::size_t tenant) {
  const Seat seat = seats_[spec.set][tenant][0];
  return workers_[seat.worker].slots[seat.slot];
}

bool RepetitionRun::any_failed() const {
  return std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.failed(); });
}

// "go" to every worker of the block's set that runs one of its tenants, each with its watchdog
// re-armed for the block (the warm-up's deadline has nothing to do with it), all with one start time.
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
    ++started_[i][phase_index(spec.phase)];
    allowance_s = std::max(allowance_s, tenant_allowances_s(s_.tenants[i]).step_s);
  }
  const std::int64_t now = clock_.now_ns();
  // The re-warm gives every go time to arrive: T costs a block nothing more unless the lead is longer.
  const std::int64_t at = now + ns_of_seconds(std::max(o_.rewarm_s, o_.start_lead_s));  // a node's T is shifted
  const std::int64_t deadline = at + ns_of_seconds(block_s() + o_.timeout_margin_s + allowance_s);
  for (const auto& [k, slots] : slots_of) {
    Worker& w = workers_[k];
    w.deadline_ns = deadline;
    w.channel->send(to_line(ControlMessage{GoCommand{index, block_s(), slots, at}}));
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
    if (all_done) ++completed_[i][phase_index(spec.phase)];
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
  if (o_.before_block) o_.before_block();
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
  for (std::size_t i : spec.tenants) ++planned_[i][phase_index(spec.phase)];  // the re-run is one more block to finish
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

}  // namespace ib
