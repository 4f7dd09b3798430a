// Plain result structs. The harness computes every field; writers in reports/ only format them.
#pragma once

#include "harness/core/host.h"
#include "harness/core/names.h"
#include "harness/nvml/nvml.h"
#include "harness/stats/metrics.h"
#include "harness/stats/stats.h"
#include "harness/nvml/telemetry.h"
#include "kernels/workload.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ib {

// Readers accept every minor version of this major (minor versions only add fields).
constexpr const char* kSchemaVersion = "2.9";
constexpr const char* kSchemaMajor = "2";

// The three phases of docs/design.md section 3.
enum class Phase { exclusive, alone, colocated };
template <>
struct EnumWords<Phase> {
  static constexpr std::array<const char*, 3> words = {"exclusive", "alone", "colocated"};
};
inline const char* phase_name(Phase p) { return to_string(p); }

// The verdicts' words, for readers (verdict_name in harness/stats/metrics.h says the same; a unit test
// keeps the two in step).
template <>
struct EnumWords<Verdict> {
  static constexpr std::array<const char*, 6> words = {"pass", "fail", "inconclusive", "baseline", "waived", "error"};
};

// What became of a block (docs/design.md section 3): clean blocks count; a contaminated one is re-run,
// excluded when no re-run is left; failed or interrupted: the repetition stopped in it.
// excluded, or re-run when re-runs are left. An exclusive or alone block with a tail burst (its P95 far
// above its phase's other blocks while its median is not: the machine's hiccup, since nothing of ours
// competes there) is an `outlier`, re-run or not counted like a contaminated one (analysis.h).
enum class BlockStatus { clean, contaminated, excluded, failed, interrupted, outlier };
template <>
struct EnumWords<BlockStatus> {
  static constexpr std::array<const char*, 6> words = {"clean", "contaminated", "excluded", "failed", "interrupted",
                                                       "outlier"};
};

template <>
struct EnumWords<Pairing> {
  static constexpr std::array<const char*, 2> words = {"paired", "independent"};
};

// What a warning is about (docs/design.md section 4). The kinds that change how a verdict is read (blocks
// not counted, a tail burst, drift, throttling, coverage) are shown on the terminal; all are in
// summary.md and the JSON.
enum class WarningKind {
  blocks_not_counted, tail_burst, drift, throttled, coverage, noisy_baseline, multi_modal, outliers, escaped_processes, pattern_gave_up,
  buffered_output, other
};
template <>
struct EnumWords<WarningKind> {
  static constexpr std::array<const char*, 12> words = {
      "blocks_not_counted", "tail_burst", "drift",    "throttled",         "coverage",       "noisy_baseline",
      "multi_modal",        "outliers",   "escaped_processes", "pattern_gave_up", "buffered_output", "other"};
};
inline bool changes_how_a_verdict_reads(WarningKind k) {
  return k == WarningKind::blocks_not_counted || k == WarningKind::tail_burst || k == WarningKind::drift ||
         k == WarningKind::throttled || k == WarningKind::coverage || k == WarningKind::escaped_processes ||
         k == WarningKind::buffered_output;
}

struct Warning {
  WarningKind kind = WarningKind::other;
  std::string text;
  bool operator==(const Warning& o) const { return kind == o.kind && text == o.text; }
};

// How a run decides when to stop measuring (--until; docs/design.md section 4, "Deciding").
enum class StopRule { decided, fixed };
template <>
struct EnumWords<StopRule> {
  static constexpr std::array<const char*, 2> words = {"decided", "fixed"};
};

// Why a repetition stopped adding rounds: every verdict decided, every undecided one resolved to
// --resolution, the budget (--max-duration) spent, a fixed length (--until fixed, or a repetition before
// the last of its scenario), a stop signal, or a failed worker.
enum class StoppedBy { decided, resolution, budget, fixed, interrupted, failed };
template <>
struct EnumWords<StoppedBy> {
  static constexpr std::array<const char*, 6> words = {"decided", "resolution", "budget", "fixed", "interrupted",
                                                       "failed"};
};

// How a worker's part in a phase ended: ok | waived (the workload cannot run here) | error (the workload
// reported one) | crashed (killed by a signal) | exited (non-zero exit) | timeout (killed by the
// watchdog) | stopped (ended by the harness because a neighbour failed) | interrupted (SIGINT/SIGTERM)
// | not_run.
enum class WorkerStatus { ok, waived, error, crashed, exited, timeout, stopped, interrupted, not_run };
template <>
struct EnumWords<WorkerStatus> {
  static constexpr std::array<const char*, 9> words = {"ok",      "waived",  "error",       "crashed", "exited",
                                                       "timeout", "stopped", "interrupted", "not_run"};
};

// Where a phase's figures come from: measured here; "exclusive" when the phase is by definition the
// exclusive one (alone under time-slicing); for an exclusive phase not on a whole GPU, the baseline
// file (--baseline), the largest MIG instance (mode mig) or the one MIG instance other modes see.
enum class PhaseSource { measured, exclusive, baseline, largest_mig_instance, mig_instance };
template <>
struct EnumWords<PhaseSource> {
  static constexpr std::array<const char*, 5> words = {"measured", "exclusive", "baseline", "largest_mig_instance",
                                                       "mig_instance"};
};

// How one repetition of a scenario under a mode ended.
enum class RunStatus { ok, error, waived, interrupted };
template <>
struct EnumWords<RunStatus> {
  static constexpr std::array<const char*, 4> words = {"ok", "error", "waived", "interrupted"};
};

// Load on the machine that was not ours, measured around one block (docs/design.md section 3).
struct ForeignLoad {
  double seconds = 0.0;           // how long the reading covered
  double foreign_cpus = 0.0;      // CPU time of processes that are not the harness or its workers, in CPUs
  double steal_cpus = 0.0;        // time the hypervisor ran something else, in CPUs
  double own_cpus = 0.0;          // the harness and its workers, in CPUs
  std::optional<int> gpu_foreign_processes;       // GPU compute processes that are not ours (NVML)
  std::optional<unsigned> gpu_idle_util_pct;      // GPU utilisation after a short gap with nothing of ours running
  std::optional<unsigned long long> gpu_foreign_memory_bytes;  // memory used by the foreign processes
  // How long the release waited for our own processes' GPU work to stop (a command tenant paused with SIGSTOP
  // keeps its queued kernels running), and how many of ours were still running GPU work when the wait gave up
  // (the block is then contaminated). Empty when NVML gives no per-process utilisation.
  std::optional<double> gpu_drain_s;
  std::optional<int> gpu_own_busy_processes;
  // Not written: GPU memory of each of our processes NVML listed, and the card's total, which the
  // repetition attributes to the block's tenants (PhaseResult::gpu_memory_peak_bytes).
  std::vector<std::pair<int, unsigned long long>> gpu_own_process_memory;
  std::optional<unsigned long long> gpu_memory_total_bytes;
  // Mode mig: the memory of the MIG instance each of our listed processes was on (pid -> bytes), which is a
  // tenant's "card", not the whole GPU's.
  std::map<int, unsigned long long> gpu_memory_total_by_pid;
};

// One block of a repetition: `tenants` released together for `phase`, in round `round`.
struct BlockRecord {
  int index = 0;                  // 0-based, in the order blocks ran; raw samples carry it
  int round = 0;                  // 0-based
  Phase phase = Phase::exclusive;
  std::vector<std::string> tenants;
  int attempt = 1;                // > 1: a re-run of a contaminated block
  std::int64_t start_ns = 0, end_ns = 0;  // release and the last tenant's end of measurement
  std::optional<std::int64_t> overlap_start_ns, overlap_end_ns;  // colocated: the overlap window
  std::optional<double> barrier_skew_s;  // colocated: max - min of the tenants' start times
  ForeignLoad load;
  BlockStatus status = BlockStatus::clean;
  std::string reason;             // why contaminated, excluded, an outlier or failed
  // Tenants whose samples in this block had a tail burst (analysis.h, tail_bursts): an exclusive or
  // alone block is then an outlier; a colocated one is kept (it may be interference) and named.
  std::vector<std::string> tail_bursts;
  bool counts() const { return status == BlockStatus::clean; }
};

// How a worker process ended, as recorded in the results.
struct WorkerOutcome {
  WorkerStatus status = WorkerStatus::not_run;
  std::string message;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string log_file;  // the worker's stdout/stderr
  // The placement-related environment the worker itself saw (CUDA_VISIBLE_DEVICES, CUDA_MPS_*).
  std::map<std::string, std::string> env;
  // Parameters the workload chose in setup, as it reported them (Workload::resolved_params).
  nlohmann::json resolved = nlohmann::json::object();
  // Processes of the tenant's program found outside its process group (setsid, setpgid): killed with it,
  // and a warning of their own (WarningKind::escaped_processes) that is the tenant's fault.
  std::size_t escaped_processes = 0;
  // Lines of a command tenant's output its step pattern gave up on (over its match limit): not read as
  // steps, and a warning of their own (WarningKind::pattern_gave_up).
  std::size_t lines_given_up = 0;
};

struct PhaseResult {
  // exclusive: stats are those of the exclusive phase and no samples are repeated.
  PhaseSource source = PhaseSource::measured;
  WorkerOutcome outcome;
  // Raw samples, in order. block: the BlockRecord::index it was measured in. in_window: the sample
  // started and ended inside its block's overlap window (always 1 outside the colocated phase).
  // counted: in_window and its block is clean; only those count in stats. outlier: MAD flag.
  // coverage (colocated): the fraction of the sample during which every other tenant was inside a sample.
  std::vector<std::int64_t> start_ns;
  std::vector<double> duration_s;
  std::vector<int> block;
  std::vector<std::uint8_t> in_window;
  std::vector<std::uint8_t> counted;
  std::vector<std::uint8_t> outlier;
  std::vector<double> coverage;
  // Per-request latencies of latency-type workloads, sample by sample: latency_count[i] of them
  // belong to sample i, in order.
  std::vector<std::uint32_t> latency_count;
  std::vector<double> latencies_s;
  std::optional<Summary> latency;  // over the requests of counted samples
  // A tenant with ranks (docs/design.md section 13): every rank's duration of each sample, [rank][sample];
  // the sample's duration is their maximum (nccl-tests -I). Empty for a tenant without ranks.
  std::vector<std::vector<double>> rank_duration_s;
  // A tenant with ranks: every rank's arrival at each sample, [rank][sample]: the start of its own sample
  // on node 0's CLOCK_MONOTONIC (a rank on another node shifted onto it by the conductor). start_ns[k] is
  // their minimum. Empty for a tenant without ranks.
  std::vector<std::vector<std::int64_t>> rank_start_ns;
  // Over the counted samples of a tenant with ranks: the straggler (the rank that arrived last most
  // often, harness/stats/collectives.h) and how often it did.
  struct RankFigures {
    int ranks = 0;
    int straggler_rank = 0;
    double straggler_share = 0.0;
  };
  std::optional<RankFigures> rank_figures;
  // Workload counters (SampleOutput::counters), one value per sample per name.
  std::map<std::string, std::vector<double>> counter_samples;
  struct CounterTotal {
    double total = 0.0;  // sum over counted samples
    double rate = 0.0;   // total / sum of counted sample durations (per second)
  };
  std::map<std::string, CounterTotal> counters;
  // GPU memory the tenant's processes held (NVML per-process used memory, read before each of its
  // blocks) at most, and the card's total; empty when NVML could not say.
  std::optional<unsigned long long> gpu_memory_peak_bytes;
  std::optional<unsigned long long> gpu_memory_total_bytes;
  // NVML telemetry during the phase (docs/design.md section 5): the readings, a throttled flag per sample
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
  Summary stats{};                 // over the counted (in-window) samples' values, in value_unit
  // What a sample's value, and so stats, is in: "s" (its duration) or "s/UNIT" (its duration over the work it
  // reported, the time per unit of work, e.g. "s/B": judged_per_work). Set with set_sample_values.
  std::string value_unit = "s";
  // Judged per work: every sample's time per unit of work (sample_value), what the writers show and draw;
  // empty otherwise (a sample's value is its duration).
  std::vector<double> time_per_work;
  double throughput = 0.0;         // work per second over counted samples: n * work / sum(duration)
  std::string throughput_unit;     // e.g. "FLOP/s"
  double window_cv = 0.0;          // CV of throughput in 1 s windows of each block (NaN when < 2 windows)
  std::size_t outliers = 0;
  int blocks = 0;                  // blocks of this phase that ran
  int blocks_counted = 0;          // of them clean, so counted
  std::optional<double> coverage_mean, coverage_p5;  // colocated: over the counted samples
  bool measured() const { return outcome.status == WorkerStatus::ok; }
};

// Whether a phase's samples carry their own work (kSampleWorkCounter: a command tenant's interval lines), so
// that it is judged on time per unit of work (basis "time_per_work") instead of sample durations.
bool judged_per_work(const PhaseResult& phase);
// The value sample i is judged on: its duration, or its duration over its own work (judged_per_work).
double sample_value(const PhaseResult& phase, std::size_t i);
// Sets value_unit ("s", or "s/" + work_unit when judged_per_work) and time_per_work from the samples
// (harness/analysis summarize_phase; the reader of results.json).
void set_sample_values(PhaseResult& phase, const std::string& work_unit);

struct TenantMetrics {
  // What E, A and C are: "sample_time" (sample durations), "request_latency" (per-request latencies of
  // latency-type workloads, completion - arrival) or "time_per_work" (each sample's duration over its own work:
  // a command tenant's interval lines, judged_per_work above).
  std::string basis = "sample_time";
  Estimate p95_slowdown{};
  double median_slowdown = 0.0;   // median(C)/median(E) - 1
  double partition_cost = 0.0;    // median(A)/median(E)
  double interference = 0.0;      // median(C)/median(A)
  std::size_t n_exclusive = 0, n_colocated = 0;  // counted E and C values the P95s came from
  // A tenant with ranks (docs/design.md section 13; harness/stats/collectives.h): how many ranks' median
  // colocated duration exceeds their exclusive one by more than blast_threshold, and the longest colocated
  // sample against the collective timeout (margin = timeout / stall; below 1 the job would have died).
  struct Collective {
    int ranks = 0;
    int blast_radius = 0;
    double blast_threshold = 0.0;
    double longest_stall_s = 0.0;
    double timeout_s = 0.0;
    double stall_margin = 0.0;
  };
  std::optional<Collective> collective;
};

// How far a verdict got (docs/design.md section 4, "Deciding"): judged after `rounds` rounds (over its
// repetitions) and `seconds` of measuring, at look `look` of `looks_planned` with boundary `z`; the
// slowdown the run resolves is the interval's half-width.
struct Decision {
  bool decided = false;            // pass or fail
  int rounds = 0;
  double seconds = 0.0;            // from the first block's release to the last block's end, summed over repetitions
  int look = 0;                    // 0: no look was taken (fixed length)
  int looks_planned = 0;
  double z = 1.959963984540054;
  StoppedBy stopped_by = StoppedBy::fixed;
  double resolution = 0.0;         // (ci_high - ci_low) / 2 of the P95 slowdown; NaN without an interval
};

// The verdict of one (scenario, mode, tenant) over all its repetitions: what the summary and the exit
// code use (docs/design.md section 3: verdicts are judged on the aggregate over repetitions).
// The advice for a user's own workload (docs/design.md section 11; seeds 000 and 004): each rule with
// the evidence it was judged on and its source; an input that was not measured or declared makes its
// rule unknown, never a guess.
enum class RuleHolds { yes, no, unknown };
template <>
struct EnumWords<RuleHolds> {
  static constexpr std::array<const char*, 3> words = {"yes", "no", "unknown"};
};
enum class CardChoice { exclusive, shared, unknown };
template <>
struct EnumWords<CardChoice> {
  static constexpr std::array<const char*, 3> words = {"exclusive", "shared", "unknown"};
};
struct AdviceRule {
  std::string id;        // e.g. "peak_memory_above_70pct"
  RuleHolds holds = RuleHolds::unknown;
  CardChoice points_to = CardChoice::unknown;  // what the rule says when it holds
  std::string says;      // the rule in words
  std::string evidence;  // the measured or declared values, or what is unknown
  std::string source;    // e.g. "seed 000 (peak memory table)"
};
// What the advice was judged on (all optional: unknown when not measured or declared).
struct AdviceInputs {
  std::optional<double> peak_memory_fraction;  // peak GPU memory of the program / the card's, exclusive phase
  std::optional<double> gpu_util_pct;          // mean GPU utilisation during the exclusive phase
  std::optional<double> run_length_h;          // declared
  std::optional<bool> interruptible;           // declared
  std::optional<double> price_exclusive_per_h, price_shared_per_h;  // declared
  std::optional<double> step_exclusive_s, step_shared_s;            // median step time alone / shared
  Verdict p95_verdict = Verdict::inconclusive;
};
struct Advice {
  CardChoice choice = CardChoice::unknown;
  std::string reason;
  AdviceInputs inputs;
  std::vector<AdviceRule> rules;
  std::optional<double> cost_per_step_exclusive, cost_per_step_shared;  // price/h x step time
};

struct TenantAggregate {
  std::string scenario, mode, tenant, workload;
  int repetitions = 0;             // repetitions that ran
  int repetitions_measured = 0;    // of them with exclusive and colocated measured
  std::optional<TenantMetrics> metrics;
  std::vector<std::string> repetition_verdicts;  // each repetition's own verdict, in order
  Verdict verdict = Verdict::error;
  std::string verdict_reason;
  std::optional<Decision> decision;  // when there are metrics
  std::vector<Warning> warnings;
  std::optional<Advice> advice;      // command tenants (a user's program)
  // A collective tenant that asked for its amplification (docs/design.md section 13), once its single-rank
  // reference (scenario `reference_scenario`, the same mode and tenant) has an aggregate too: both P95
  // slowdowns and amplification(collective, single rank) (harness/stats/collectives.h; nullopt where the
  // single rank slowed too little to amplify).
  struct Amplification {
    std::string reference_scenario;
    double collective_slowdown = 0.0;
    double single_rank_slowdown = 0.0;
    std::optional<double> value;
  };
  std::optional<Amplification> amplification;
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
  std::vector<Warning> warnings;
};

inline PhaseResult& phase_of(TenantResult& t, Phase p) {
  return p == Phase::exclusive ? t.exclusive : p == Phase::alone ? t.alone : t.colocated;
}
inline const PhaseResult& phase_of(const TenantResult& t, Phase p) {
  return p == Phase::exclusive ? t.exclusive : p == Phase::alone ? t.alone : t.colocated;
}

// STP = sum of median(X_i)/median(C_i), ANTT = mean of median(C_i)/median(X_i), with X = exclusive
// and X = alone (Eyerman & Eeckhout use the isolated run, X = E).
struct SystemMetrics {
  double stp_exclusive = 0.0, antt_exclusive = 0.0;
  double stp_alone = 0.0, antt_alone = 0.0;
};

// What was read about the device before anything ran (harness/modes/mode_setup.cpp); a fact that was
// not read is absent.
struct ModeDeviceFacts {
  std::optional<std::string> nvml;            // the NVML library used, or "unavailable: <why>"
  std::optional<std::string> name, uuid;
  std::optional<std::string> compute_mode;    // e.g. "Default"
  std::optional<std::string> compute_policy;  // what `nvidia-smi compute-policy -l` says (the time slice), or "not available"
  std::optional<MigModeState> mig_mode;
  std::optional<std::vector<CreatedMigInstance>> mig_created;  // --mig-create
  std::optional<std::string> measures;        // a GPU in MIG mode: what the whole-GPU modes really measured
  // Facts mode_setup records that have no field here yet, written as they are (none today).
  nlohmann::json unmapped = nlohmann::json::object();
};

// Mode mps: the MPS control daemon the clients used.
struct MpsDaemonInfo {
  std::string pipe_directory;
  std::string log_directory;      // empty when attached
  std::string daemon;             // private (started and quit by the harness) or attached (--mps-pipe-dir)
  std::string fault_propagation;  // what one client's fatal fault does to the others
};

// Mode mig: the GPU's MIG devices and where each tenant ran.
struct MigPlacementInfo {
  std::vector<MigInstance> instances;
  std::map<std::string, std::string> assignment;  // tenant name -> MIG device UUID (a tenant with ranks: rank 0's)
  // A tenant with ranks: tenant name -> each rank's MIG device UUID, by rank.
  std::map<std::string, std::vector<std::string>> rank_assignment;
};

// How the mode was set up for one run (results: runs[].mode_config).
struct ModeConfig {
  std::string mode;
  std::optional<ModeDeviceFacts> device;  // absent in a run never set up (a mode waived under --mode all)
  std::optional<MpsDaemonInfo> mps;
  std::optional<MigPlacementInfo> mig;
  // Where the exclusive phase comes from when it is not a whole GPU: the baseline file, the largest MIG
  // instance, the one MIG instance the whole-GPU modes see.
  std::optional<std::string> exclusive_source;
};

// A repetition's stopping plan and what became of it (harness/analysis/deciding.h). Looks count the
// rounds of the scenario's repetitions so far (earlier repetitions' rounds included).
struct Stopping {
  StopRule until = StopRule::fixed;
  int first_rounds = 0;            // rounds before the first look (--rounds)
  int max_rounds = 0;              // the budget in rounds (--max-duration over the block length)
  double resolution = 0.0;         // --resolution (0: none)
  int earlier_rounds = 0;          // rounds of the scenario's earlier repetitions (looks count them)
  std::vector<int> looks;          // planned looks: total rounds at each
  std::vector<double> boundaries;  // z at each
  int looks_taken = 0;             // looks made in this repetition
  StoppedBy stopped_by = StoppedBy::fixed;
  double z = 1.959963984540054;    // the boundary this repetition's estimates are judged at
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
  double collective_timeout_s = 600.0;  // what a collective tenant's longest stall is held against
  RunStatus status = RunStatus::ok;
  ModeConfig mode_config;          // how the mode was set up: device, compute mode, MPS daemon, MIG instances
  std::string message;
  std::vector<TenantResult> tenants;
  std::optional<SystemMetrics> system;
  std::optional<double> barrier_skew_s;   // colocated releases: the largest max - min of the start times
  int rounds = 1;                         // rounds run
  std::string round_order = "abba";       // how blocks were ordered within rounds (abba or shuffle)
  std::vector<BlockRecord> blocks;        // in the order they ran
  Stopping stopping;                      // how it decided to stop adding rounds
};

// What a device record describes: a GPU (through NVML) or, with the host backend, the host's CPUs.
enum class DeviceKind { gpu, host };
template <>
struct EnumWords<DeviceKind> {
  static constexpr std::array<const char*, 2> words = {"gpu", "host"};
};

// A setting with its current and pending (after the next reset) state: ECC, MIG mode.
struct CurrentPending {
  bool current = false;
  bool pending = false;
};

// What the numbers came from (docs/design.md section 8: meta.devices[]). A fact that was not read (NVML does
// not report it, or this kind of device has no such thing) is absent; `unsupported` names what NVML
// declined, `error` why nothing could be read (e.g. NVML unavailable).
struct DeviceRecord {
  DeviceKind kind = DeviceKind::host;
  std::optional<int> index;               // gpu: the device index the scenarios used
  std::string name;                       // GPU name, or the CPU model
  std::optional<std::string> uuid;        // gpu: "GPU-..."
  std::string node;                       // the host name
  std::optional<std::string> driver_version;  // e.g. "550.90.07"
  std::optional<std::string> cuda_version;    // the CUDA version the driver supports, e.g. "12.4"
  std::optional<std::string> vbios_version;
  std::optional<std::string> compute_mode;    // e.g. "Default"
  std::optional<CurrentPending> mig_mode;
  std::optional<CurrentPending> ecc;
  std::optional<double> power_limit_w, default_power_limit_w;  // enforced and default
  std::optional<unsigned> pcie_gen_current, pcie_width_current, pcie_gen_max, pcie_width_max;
  std::optional<unsigned long long> memory_total_bytes;  // GPU memory, or host memory (MemTotal)
  std::optional<unsigned> cores_online, cores_usable;    // host: online CPUs and those this process may use
  std::string error;
  std::vector<std::string> unsupported;
};

// A node of a run across nodes (docs/design.md section 13) as the conductor saw it: its clock against the conductor's
// (conductor time = node time + offset_ns, within +- uncertainty_ns: the chosen exchange's round trip / 2).
struct NodeRecord {
  int node_rank = 0;
  std::string host;
  std::int64_t clock_offset_ns = 0;  // as measured when it joined
  std::int64_t clock_uncertainty_ns = 0;
  std::int64_t clock_rtt_ns = 0;
  // Schema 2.6: re-measured before each block (each block's times use the latest): how many measurements
  // there were in all, and how far their offsets spread (highest - lowest: drift and noise).
  int clock_measurements = 1;
  std::int64_t clock_offset_span_ns = 0;
  std::vector<DeviceRecord> devices;  // schema 2.6: the node's host and the GPUs its NVML sees, from its hello
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
  // Foreign-load control: a block above these is contaminated (re-run up to max_reruns times per repetition).
  double max_foreign_cpus = 0.0;
  double max_steal_cpus = 0.0;
  int max_reruns = 0;
  // When a repetition stops adding rounds (schema 2.2): --until, --rounds, --max-duration (unset: a
  // multiple of each scenario's duration), --resolution (0: none).
  StopRule until = StopRule::fixed;
  int rounds = 0;
  std::optional<double> max_duration_s;
  double resolution = 0.0;
  std::vector<DeviceRecord> devices;  // what the numbers came from (schema 2.1)
  std::optional<SchedulerFacts> scheduler;  // absent when no scheduler launched the run (schema 2.4)
  std::vector<NodeRecord> nodes;            // a run across nodes: every node but the conductor's (schema 2.5)
};

// Totals over all runs and the exit code they imply (docs/design.md section 8).
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
  std::vector<TenantAggregate> aggregates;  // one per (scenario, mode, tenant): the verdicts that count
  RunSummary summary;
};

}  // namespace ib
