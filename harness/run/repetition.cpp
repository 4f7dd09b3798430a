// One repetition of a scenario under one mode (repetition.h): set up and torn down, its workers started, its
// rounds of blocks run until a look decides or the budget is spent, then its outcomes and phases recorded.
// Workers and their messages: repetition_workers.cpp; blocks: repetition_blocks.cpp; outcomes:
// repetition_outcomes.cpp; ranks: repetition_ranks.cpp.
#include "harness/run/repetition.h"
#include "harness/run/repetition_steps.h"

#include "harness/core/text.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <sstream>

namespace ib {

using namespace repetition_steps;

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
    for (std::size_t i : b.tenants) planned_[i][phase_index(b.phase)] += o.rounds;
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
      for (std::size_t i : b.tenants) ++planned_[i][phase_index(b.phase)];
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
  // The first block's samples need a reading in effect when it starts (readings_of_blocks): wait for the
  // sampler's first while the workers warm up, at most 2 s (an NVML that does not answer leaves its error).
  if (start_all_workers()) {
    if (sampler_) (void)sampler_->wait_for_samples(1, std::chrono::seconds(2));
    run_rounds();
  }
  end_workers();
  if (sampler_) sampler_->stop();
  record_outcomes();
  finish_phases();
}

}  // namespace ib
