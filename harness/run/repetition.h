// The engine behind Orchestrator::run: one repetition of one scenario as its plan says. Starts the
// plan's worker sets one process at a time (each sets up and warms up alone, so a calibration never
// sees a neighbour), runs the rounds' blocks (release, watch, collect samples, foreign load, re-run a
// contaminated block), ends the workers and records how each phase ended. Workers are started and
// watched through the Launcher and Clock of launcher.h (processes, or a fake in tests).
#pragma once

#include "harness/run/orchestrator.h"
#include "harness/run/launcher.h"
#include "harness/worker/messages.h"
#include "harness/nvml/telemetry.h"

#include <array>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ib {

class RepetitionRun {
 public:
  // `interrupt_requested`: true once a stop signal arrived (never waits).
  // r.stopping says how many rounds it may run and when `look` is asked (orchestrator.h).
  RepetitionRun(const OrchestratorOptions& o, const Scenario& s, const Plan& plan, RunResult& r, Launcher& launcher,
                Clock& clock, const std::function<bool()>& interrupt_requested, const LookFn& look = {});
  ~RepetitionRun();  // kills any worker still alive
  RepetitionRun(const RepetitionRun&) = delete;
  RepetitionRun& operator=(const RepetitionRun&) = delete;

  // Runs everything; fills r (samples, blocks, outcomes, status, message).
  void run();

 private:
  // The samples a rank reported for the block in progress, merged over the tenant's ranks when the
  // block is collected (merge_ranks).
  struct RankSamples {
    std::vector<std::int64_t> start_ns;
    std::vector<double> duration_s;
    std::map<std::string, std::vector<double>> counters;
  };
  struct Slot {
    std::size_t tenant = 0;
    int rank = 0;
    RankSamples block_samples;  // a tenant with ranks only
    bool ready = false, waived = false, done = false;  // done: the current block
    std::int64_t started_ns = 0;
    std::size_t escaped = 0;  // processes of its program that had left their group (EscapedMessage)
    std::size_t lines_given_up = 0;  // lines of its program's output its step pattern gave up on (GaveUpMessage)
    std::string waive_reason;
    std::map<std::string, std::string> env;
    nlohmann::json resolved = nlohmann::json::object();
  };
  struct Worker {
    std::size_t set = 0;
    std::vector<Slot> slots;
    std::unique_ptr<WorkerChannel> channel;
    bool eof = false;          // its reports ended (end of file, or the harness stopped reading)
    bool exited = false, timed_out = false, stopped_by_us = false, interrupted = false;
    bool ready_seen = false;   // every slot was ready once
    bool ended = false;        // the harness said "end" (all blocks ran)
    bool killed = false;       // SIGKILLed after the grace period that followed "end" or "stop"
    // The watchdog: when the worker must be ready (armed at its start) or done with the block it was
    // released for (re-armed at each release); past it, it is killed at once.
    std::int64_t deadline_ns = INT64_MAX;
    std::string error;
    ExitStatus exit;
    std::string log;
    bool failed() const;
    bool waived() const;
  };
  // Which worker and slot run tenant i in set k (rank 0; a tenant with ranks has one seat per rank).
  struct Seat {
    std::size_t worker = SIZE_MAX, slot = 0;  // SIZE_MAX: not started (the repetition stopped before)
  };

  bool start_all_workers();
  bool start_worker(std::size_t set, const std::vector<std::size_t>& tenants);
  bool start_rank_workers(std::size_t set, std::size_t tenant);
  Worker& add_worker(std::size_t set, const std::vector<std::size_t>& tenants, const std::string& who, int rank = 0);
  bool launch(Worker& w, const std::vector<std::size_t>& tenants, int rank = 0);
  void on_kv_put(Worker& w, const Slot& slot, KvPutMessage&& m);
  void on_kv_get(Worker& w, const Slot& slot, const KvGetMessage& m);
  void merge_ranks(const BlockSpec& spec, std::size_t tenant, int block);
  std::vector<Seat> seats_of(const BlockSpec& spec, std::size_t tenant) const;
  std::string ranks_note(const std::vector<Seat>& ranks, const Seat& speaker) const;
  bool wait_until_ready(Worker& w, const std::string& who);
  void run_rounds();
  bool run_round(const std::vector<std::size_t>& order, int round);
  bool stop_at_look(int rounds_done, int last);
  bool run_block(const BlockSpec& spec, int round, int attempt);
  void judge_block(BlockRecord& b, const BlockSpec& spec, const CpuSnapshot& before, const std::vector<pid_t>& own);
  void release(const BlockSpec& spec, int index);
  void collect_block(const BlockSpec& spec, int index);
  void wait_for_block(const BlockSpec& spec, int index);
  void measure_foreign_load(BlockRecord& b, const CpuSnapshot& before, const std::vector<pid_t>& own);
  void pump(int timeout_ms);
  void note_gpu_memory(const BlockSpec& spec, const ForeignLoad& load);
  void read_reports(Worker& w);
  void reap_exited();
  void time_out(Worker& w);
  void handle_message(Worker& w, const std::string& line);
  void on_ready(Worker& w, Slot& slot, ReadyMessage&& m);
  void on_done(Slot& slot, const DoneMessage& m);
  void on_samples(Slot& slot, const SamplesMessage& m);
  void stop_everything(bool interrupted);
  void tell_end(Worker& w);
  void end_workers();
  void record_outcomes();
  void describe_failure(Phase phase);
  WorkerStatus failure_status(const Worker& w) const;
  std::string failure_message(const Worker& w) const;
  void record_outcome(std::size_t tenant, Phase phase);
  void finish_phases();
  Slot& slot_of(const BlockSpec& spec, std::size_t tenant);
  bool any_failed() const;
  // The harness, its live workers and the plan's helper processes (an MPS server).
  std::vector<pid_t> own_pids() const;
  std::vector<std::string> worker_args(const std::vector<std::size_t>& tenants, bool device_from_env, int rank) const;
  std::string log_path(const WorkerSet& set, const std::string& who) const;
  void show_progress(const std::string& what);
  double block_s() const { return s_.duration_s / o_.rounds; }

  const OrchestratorOptions& o_;
  const Scenario& s_;
  const Plan& plan_;
  RunResult& r_;
  Launcher& launcher_;
  Clock& clock_;
  std::function<bool()> interrupt_requested_;
  LookFn look_;
  std::vector<Worker> workers_;
  std::vector<std::vector<std::vector<Seat>>> seats_;  // [set][tenant][rank]
  // The rendezvous (kv_put / kv_get) of each tenant's ranks, for this repetition, by (worker set, tenant): the
  // values published, and the gets still waiting for one (worker index, key). A tenant has ranks in each set
  // (mps: plain and MPS clients; mig: the largest instance and its own), and each set's ranks form their own
  // communicator: a rank must never read another set's rank 0's address.
  using KvScope = std::pair<std::size_t, std::size_t>;
  std::map<KvScope, std::map<std::string, std::string>> kv_;
  std::map<KvScope, std::vector<std::pair<std::size_t, std::string>>> kv_waiting_;
  std::unique_ptr<TelemetrySampler> sampler_;
  std::string no_mps_pipe_dir_;
  bool aborting_ = false, interrupted_ = false;
  std::int64_t kill_at_ = 0;
  int reruns_left_ = 0;
  std::optional<Phase> failed_phase_;  // where the repetition stopped because something failed
  // Per tenant and phase: blocks planned, started and completed (index: static_cast<int>(Phase)).
  std::vector<std::array<int, 3>> planned_, started_, completed_;
};

}  // namespace ib
