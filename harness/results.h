// Plain result structs. The harness computes every field; writers in reports/ only format them.
#pragma once

#include "harness/metrics.h"
#include "harness/stats.h"
#include "harness/telemetry.h"
#include "kernels/workload.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ib {

constexpr const char* kSchemaVersion = "1.0";

// How a worker process ended, as recorded in the results.
struct WorkerOutcome {
  // ok | waived | error (the workload reported one) | crashed (killed by a signal) | exited (non-zero
  // exit) | timeout (killed by the watchdog) | stopped (ended by the harness because a neighbour
  // failed) | interrupted (SIGINT/SIGTERM) | not_run
  std::string status = "not_run";
  std::string message;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string log_file;  // the worker's stdout/stderr
  // The placement-related environment the worker itself saw (CUDA_VISIBLE_DEVICES, CUDA_MPS_*).
  std::map<std::string, std::string> env;
  // Parameters the workload chose in setup, as it reported them (Workload::resolved_params).
  nlohmann::json resolved = nlohmann::json::object();
};

struct PhaseResult {
  // "measured"; or "exclusive" when this phase is by definition the exclusive one (alone under
  // time-slicing), in which case stats are those of the exclusive phase and no samples are repeated;
  // for an exclusive phase not on a whole GPU: "baseline" (from --baseline), "largest_mig_instance"
  // (mode mig) or "mig_instance" (another mode on a GPU in MIG mode).
  std::string source = "measured";
  WorkerOutcome outcome;
  // Raw samples, in order. in_window: the sample started and ended inside the overlap window
  // (always 1 outside the colocated phase); only those count in stats. outlier: MAD flag.
  std::vector<std::int64_t> start_ns;
  std::vector<double> duration_s;
  std::vector<std::uint8_t> in_window;
  std::vector<std::uint8_t> outlier;
  // Per-request latencies of latency-type workloads, sample by sample: latency_count[i] of them
  // belong to sample i, in order.
  std::vector<std::uint32_t> latency_count;
  std::vector<double> latencies_s;
  std::optional<Summary> latency;  // over the requests of counted samples
  // Workload counters (SampleOutput::counters), one value per sample per name.
  std::map<std::string, std::vector<double>> counter_samples;
  struct CounterTotal {
    double total = 0.0;  // sum over counted samples
    double rate = 0.0;   // total / sum of counted sample durations (per second)
  };
  std::map<std::string, CounterTotal> counters;
  // NVML telemetry during the phase (DESIGN.md section 5): the readings, a throttled flag per sample
  // (flagged, never dropped) and the summary over counted samples. Empty when not sampled.
  std::vector<TelemetrySample> telemetry;
  std::vector<std::uint8_t> throttled;
  std::optional<ThrottleSummary> throttle;
  std::string telemetry_error;
  // Fields NVML does not report on this device (e.g. utilisation on a MIG device), as the sampler
  // noted them; their columns in the series are null.
  std::vector<std::string> telemetry_unsupported;
  std::int64_t measure_start_ns = 0;
  std::int64_t measure_end_ns = 0;
  Summary stats{};                 // over counted (in-window) sample durations
  double throughput = 0.0;         // work per second over counted samples: n * work / sum(duration)
  std::string throughput_unit;     // e.g. "FLOP/s"
  double window_cv = 0.0;          // CV of throughput in 1 s windows (NaN when < 2 windows)
  std::size_t outliers = 0;
  bool measured() const { return outcome.status == "ok"; }
};

struct TenantMetrics {
  // What E, A and C are: "sample_time" (sample durations) or "request_latency" (per-request
  // latencies of latency-type workloads, completion - arrival).
  std::string basis = "sample_time";
  Estimate p95_slowdown{};
  double median_slowdown = 0.0;
  double partition_cost = 0.0;
  double interference = 0.0;
};

struct TenantResult {
  std::string name;
  std::string role;
  std::string workload;
  nlohmann::json params;
  // What the first phase that ran this tenant resolved (e.g. the arrival rate its `load` implies);
  // the later phases get these as explicit params, so all of them run the same configuration.
  nlohmann::json resolved_params = nlohmann::json::object();
  nlohmann::json placement;
  Work work;                       // per sample
  PhaseResult exclusive, alone, colocated;
  std::optional<TenantMetrics> metrics;  // when exclusive and colocated were both measured
  Verdict verdict = Verdict::error;
  std::string verdict_reason;
  std::vector<std::string> warnings;
};

struct SystemMetrics {
  double stp = 0.0;
  double antt = 0.0;
};

struct RunResult {
  std::string scenario;
  std::string scenario_file;
  std::string mode;
  int device = 0;
  int repetition = 1;              // 1-based
  int repetitions = 1;
  double warmup_s = 0.0;
  double duration_s = 0.0;
  double cutoff = 0.0;
  std::string status = "ok";       // ok | error | waived | interrupted
  nlohmann::json mode_config;      // how the mode was set up: device, compute mode, MPS daemon, MIG instances
  std::string message;
  std::vector<TenantResult> tenants;
  std::optional<SystemMetrics> system;
  std::optional<double> barrier_skew_s;   // colocated release: max - min of the workers' start times
  std::optional<std::int64_t> overlap_start_ns, overlap_end_ns;
};

struct Meta {
  std::vector<std::string> argv;
  std::string version;
  std::string git_sha;
  std::string start_time;           // ISO 8601 UTC
  std::string host;                 // hostname
  int host_cpus = 0;
  std::string backend;              // host | cuda
  std::string backend_requested;    // host | cuda | auto
  std::string backend_note;         // e.g. the no-GPU banner
  std::string suite;
  nlohmann::json telemetry = nlohmann::json::object();  // {"hz", "source"}
  std::uint64_t bootstrap_seed = 0;
  int bootstrap_resamples = 0;
};

// Totals over all runs and the exit code they imply (DESIGN.md section 8).
struct RunSummary {
  bool pass = false;
  bool interrupted = false;
  int runs = 0;
  int tenants = 0;
  int passed = 0, failed = 0, inconclusive = 0, baseline = 0, waived = 0, errors = 0;
  int exit_code = 0;
};

struct Results {
  std::string schema_version = kSchemaVersion;
  Meta meta;
  std::vector<RunResult> runs;
  RunSummary summary;
};

}  // namespace ib
