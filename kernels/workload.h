// The one interface between the harness and every workload (CUDA or host).
//
// A workload knows how to set itself up, run one sample of work and say how much work a sample is.
// It does not time itself, spawn processes or pick streams: the harness's executor owns timing
// (steady clock for host workloads, CUDA events on a harness-owned stream for CUDA ones).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ib {

// Thrown by a workload when it cannot run (bad parameter that slipped past validation, a failed
// correctness check, an allocation failure). The worker reports it and exits non-zero.
class WorkloadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Backend { host, cuda };
const char* backend_name(Backend b);

// Parameters after validation, with defaults filled in.
using Params = nlohmann::json;

// How much work one sample does, e.g. {2*m*n*k, "FLOP"} or {2*bytes, "B"}.
struct Work {
  double amount = 0.0;
  std::string unit;  // "FLOP", "B", "request", ...
};

// Result of a workload's "can it run here?" check; not supported means `waived`, not failed.
struct Support {
  bool supported = true;
  std::string reason;  // why not, when !supported
};

// Which rank of its tenant this process is (docs/design.md section 13): a tenant with `ranks: N` runs one
// worker process per rank; any other tenant is rank 0 of 1.
struct RankInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;  // among the tenant's ranks on this node
};

// The rendezvous of a tenant's ranks, through the harness (the worker protocol's kv_put / kv_get): one
// key-value exchange per tenant and repetition. A collective's rank 0 publishes NCCL's unique id, a gloo
// store keeps its addresses here.
class Rendezvous {
 public:
  virtual ~Rendezvous() = default;
  // Publishes `value` (any bytes, at most 64 KiB) under `key` ([A-Za-z0-9_-./:], at most 200 characters).
  virtual void put(const std::string& key, const std::string& value) = 0;
  // The value some rank published under `key`, waiting for it at most `timeout_s`; throws WorkloadError
  // naming the key when it did not come (a rank that never joined) or the worker is ending.
  virtual std::string get(const std::string& key, double timeout_s) = 0;
};

// What the harness hands a workload: where to run. `stream` is a cudaStream_t owned by the
// harness for CUDA workloads and nullptr for host workloads. `rendezvous` and `rank` are set for
// setup() (the rendezvous stays valid until teardown()).
struct ExecContext {
  int device = 0;
  void* stream = nullptr;
  Rendezvous* rendezvous = nullptr;
  RankInfo rank;
};

// Per-sample extras a workload may fill in (the harness times the sample itself).
// A collective workload's per-sample counter (SampleOutput::counters): its longest single collective in the
// sample, in seconds. A sample holds `iters` (or `reps`) collectives and a timeout (NCCL's watchdog,
// PyTorch's 10 minutes) applies to each, so the stall margin is judged on this (harness/analysis/ranks.h),
// not on the whole sample. A figure, not an amount: never summed into the phase's counters.
constexpr const char* kLongestCollectiveCounter = "longest_collective_s";
// A sample whose work is its own (SampleOutput::counters): a command tenant's interval line (kernels/command,
// metric interval_s) is a sample as long as the interval, holding the work the program reported for it. Its
// tenant is judged on time per unit of work (duration / this) instead of the sample's duration
// (harness/analysis: basis "time_per_work"), and its throughput is the sum of this over the sum of durations.
constexpr const char* kSampleWorkCounter = "sample_work";
// A command tenant's matching lines that were read in one piece with the line before them (its output is
// buffered, so where its steps lie in time is not known): a warning names the tenant when they are many.
constexpr const char* kLinesInBurstCounter = "lines_in_burst";

struct SampleOutput {
  // Per-request latencies inside this sample, for latency-type workloads (completion - intended
  // arrival); may be empty (an open-loop slice in which no request arrived).
  std::vector<double> latencies_s;
  // Named amounts this sample produced beside its work, e.g. {"slo_met_requests", 37} or
  // {"bus_bytes", 1.2e9}. The harness sums each over the counted samples of a phase and reports
  // the total and the rate (total / summed sample time), like Google Benchmark's rate counters.
  // A figure per sample that is not an amount (kLongestCollectiveCounter) is kept per sample but never summed.
  std::map<std::string, double> counters;
  // Set by a workload whose sample is timed by someone else on CLOCK_MONOTONIC: a user's program
  // reporting its steps (kernels/command). The host executor then takes the sample's start and
  // duration from here instead of its own clock around run_sample.
  struct ReportedTime {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
  };
  std::optional<ReportedTime> reported_time;
};

class Workload {
 public:
  virtual ~Workload() = default;
  // Allocates and initialises inputs and checks the result against a reference on small inputs.
  virtual void setup(const ExecContext& ctx) = 0;
  // Called by the worker at each measurement block's release (release_ns: CLOCK_MONOTONIC ns, the
  // block's start) and at the start of warm-up and of each block's re-warm, after setup() and before that block's first
  // run_sample, with no sample of this workload in flight. Open-loop (latency) workloads start one
  // continuous arrival schedule there (kernels/open_loop.h), so arrivals count from the release and
  // never restart per sample; a workload that was never told starts its schedule at its first
  // run_sample. Other workloads ignore it.
  virtual void begin_block(std::int64_t release_ns) { (void)release_ns; }
  // Called after the warm-up and after each block's measurement, before the worker reports it: a
  // workload that runs on its own between samples (a user's program) is paused here until the
  // next begin_block, so it never runs beside another tenant's exclusive block. Others ignore it.
  virtual void end_block() {}
  // Runs (host) or enqueues on ctx.stream (CUDA) exactly one sample of work.
  virtual void run_sample(const ExecContext& ctx, SampleOutput& out) = 0;
  // Called by the executor after the sample's end event completed (CUDA) or run_sample returned
  // (host), before the sample is reported; throws WorkloadError when the sample's work did not
  // really happen, e.g. an aborted collective whose kernels were unblocked rather than finished.
  // A CUDA executor keeps two samples in flight, so this is not called right after run_sample.
  // Called once per run_sample, in the same order. The `out` given to that run_sample stays alive
  // and unread until this returns, so a workload that does not wait for its GPU work in
  // run_sample may finish filling it here (the open-loop CUDA workloads read their requests'
  // completion events here and add the latencies).
  virtual void check_sample() {}
  // Asked before every sample (untimed) with whether this rank's harness wants another: the answer is
  // whether it runs one. A collective must run the same number of samples on every rank (a rank that
  // stopped alone would leave the others waiting in the next collective), so a collective workload
  // answers what all its ranks agree on (another only if every rank wants one). Others answer `mine`.
  virtual bool continue_together(bool mine) { return mine; }
  // Called by the executor at the start of every run of samples (Executor::run_samples), before its first
  // continue_together: a collective that votes ahead (allreduce) waits for its first vote of a run.
  virtual void begin_samples() {}
  // The work one sample does; constant for a configured workload. For an open-loop workload it is
  // the expected number of requests per sample (`requests`): a sample is a fixed slice of arrival
  // schedule time, and the actual count in the slice (Poisson) is its counters["requests"].
  virtual Work work_per_sample() const = 0;
  virtual void teardown() = 0;
  // Parameters the workload chose itself in setup(), as params that would make it choose the same
  // again (e.g. {"rate": r} for an arrival rate derived from `load` and the service time measured in
  // setup). The harness passes them to the tenant's later phases, so that every phase runs the
  // same configuration rather than re-deriving it on a GPU that neighbours may already be loading.
  virtual Params resolved_params() const { return Params::object(); }
  // Processes of the workload's own program found outside its process group (it had called setsid or
  // setpgid): stopped with it at block ends, killed at teardown, and named in the results as the tenant's
  // fault. Asked after teardown; 0 for a workload that starts no program.
  virtual std::size_t escaped_processes() const { return 0; }
  // Lines of the workload's program's output that its step pattern gave up on (they cost more than the
  // pattern's match limit) and were not read as steps: named in the results as the tenant's pattern's
  // cost. Asked after teardown; 0 for a workload that reads no output.
  virtual std::size_t lines_given_up() const { return 0; }
};

// One declared parameter of a workload. The harness validates scenario params against these,
// so every workload gets the same clear messages ("tenants[0].params.n: expected integer in ...").
struct ParamSpec {
  enum class Type { integer, number, string, boolean };
  std::string name;
  Type type = Type::integer;
  nlohmann::json default_value;
  std::optional<double> min;                 // integer/number: inclusive bounds
  std::optional<double> max;
  std::vector<std::string> choices;          // string: allowed values (empty = any)
  std::string help;
  std::string suffix = {};  // string: a non-empty value must end with this (empty = any); checked at load
};

struct WorkloadSpec {
  std::string name;
  Backend backend = Backend::host;
  std::string description;
  std::vector<ParamSpec> params;
  // Can this workload run here with these (validated) params? Not supported => `waived`.
  std::function<Support(const Params&, const ExecContext&)> supported;
  std::function<std::unique_ptr<Workload>(const Params&)> create;
  // Params that are not a flat list of ParamSpecs (a command tenant's argv, env, metric): when set,
  // validate_params calls this instead of checking `params`. Same contract as validate_params.
  std::function<std::optional<Params>(const nlohmann::json&, std::string&)> validate = {};
  // Runs on every backend (a user's command: timed on the host clock, placed by the environment).
  bool any_backend = false;
  // A collective: a tenant of it may have `ranks` (one worker process each) that meet through the
  // harness's rendezvous (ExecContext::rendezvous) and agree on every sample (continue_together).
  bool collective = false;
};

// Workloads by name. Built explicitly at start-up (no static self-registration, no globals).
class Registry {
 public:
  void add(WorkloadSpec spec);  // throws std::logic_error on a duplicate name
  const WorkloadSpec* find(const std::string& name) const;
  std::vector<const WorkloadSpec*> all() const;  // sorted by name

 private:
  std::map<std::string, WorkloadSpec> specs_;
};

// Checks `given` (a JSON object) against `spec`, returns the params with defaults filled in.
// On error returns std::nullopt and sets `error` to "<key>: <what was expected>" (key relative to
// the params object, e.g. "n: expected integer in [16, 4096], got 5000").
std::optional<Params> validate_params(const WorkloadSpec& spec, const nlohmann::json& given,
                                      std::string& error);

}  // namespace ib
