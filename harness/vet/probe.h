// Platform probe (docs/design.md section 6): facts about the GPU (through NVML) and the host, the checklist built on
// them (each check pass/warn/fail/unknown with its evidence, threshold and source), the table of nominal memory of
// known GPU models, and the cost advice. Everything except collect_probe_facts/read_host_facts is pure.
// Definitions and thresholds are documented in docs/telemetry.md.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/nvml/nvml.h"
#include "harness/nvml/telemetry.h"

namespace ib {

struct HostFacts {
  unsigned online_cores = 0;  // sysconf(_SC_NPROCESSORS_ONLN)
  unsigned usable_cores = 0;  // CPUs in this process's affinity mask (sched_getaffinity); what we may run on
  std::optional<unsigned long long> memory_total_bytes;      // /proc/meminfo MemTotal
  std::optional<unsigned long long> memory_available_bytes;  // /proc/meminfo MemAvailable
  // Measured elsewhere (the h2d workload); empty until then.
  std::optional<double> h2d_pinned_gbps, h2d_pageable_gbps;
};

// Cores from sysconf/sched_getaffinity and memory from /proc/meminfo.
HostFacts read_host_facts();
// MemTotal / MemAvailable ("kB" lines) from the text of /proc/meminfo into `out`.
void parse_meminfo(const std::string& text, HostFacts& out);

struct ProbeFacts {
  unsigned device = 0;
  bool nvml_available = true;  // false: NVML could not be loaded or initialised; nvml_error says why
  std::string nvml_error;
  DeviceFacts gpu;
  std::optional<MigModeState> mig;  // empty: MIG not supported
  std::vector<MigInstance> mig_instances;
  std::optional<TelemetryReading> reading;   // one reading: power limits, max SM clock
  std::vector<TelemetrySample> idle_samples;  // telemetry over the idle window, while we ran nothing
  double idle_window_s = 0;
  std::vector<std::string> telemetry_notes;  // unsupported telemetry fields
  std::vector<unsigned> own_pids;            // compute processes that are ours (not neighbours)
  std::optional<double> load_util_pct;       // mean GPU utilisation under our own load (measured elsewhere)
  HostFacts host;
  unsigned gpu_count = 1;                    // GPUs NVML sees on this machine
  std::vector<GpuPairPath> gpu_pairs;        // every pair a < b of them (empty where NVML cannot say)
};

// Gathers the facts of `device`: samples telemetry at `hz` for `idle_window_s` seconds while running nothing
// (blocks that long), then reads the device facts (so the process list is the one at the end of the window), the
// MIG state and the host. own_pids = {getpid()}. Call it before this process creates a CUDA context. Throws
// NvmlError on NVML errors other than "unsupported", Interrupted when `stop` says so during the window.
ProbeFacts collect_probe_facts(Nvml& nvml, unsigned device, double idle_window_s = 5.0, double hz = 10.0,
                               const std::function<bool()>& stop = {});

// ---- nominal memory of known GPU models ----
struct NominalMemory {
  std::string model;                         // the table key that matched, e.g. "H100 NVL"
  std::vector<unsigned long long> sizes_mib;  // one size, or every size the model comes in when the name is silent
  std::string label;                         // e.g. "141 GB" or "40 or 80 GB"
};
// Matches `name` against the table by substring at word boundaries (case-insensitive; the longest key wins), then
// picks the size the name states ("80GB", "144G") when the model comes in several. Unknown model: empty.
std::optional<NominalMemory> nominal_memory(const std::string& name);

// ---- checks ----
enum class CheckStatus { pass, warn, fail, unknown };
const char* check_status_name(CheckStatus s);

struct ProbeCheck {
  std::string id;         // stable key, e.g. "memory_total"
  std::string title;
  CheckStatus status = CheckStatus::unknown;
  std::string evidence;   // what was seen, with numbers
  std::string threshold;  // the rule applied
  std::string source;     // where the rule comes from (seed / docs/design.md section)
};

struct ProbeThresholds {
  double min_memory_fraction = 0.90;  // memory total below this fraction of nominal: slice or vGPU suspected
  double idle_util_pct = 5.0;         // GPU utilisation while we run nothing: mean above -> fail, peak above -> warn
  unsigned min_host_cores = 4;        // usable host cores below this -> warn
  double min_host_memory_ratio = 1.0;  // host memory below this × GPU memory -> warn
  double min_h2d_link_fraction = 0.5;  // pinned H2D below this fraction of the link's theoretical rate -> warn
  double min_load_util_pct = 30.0;     // GPU utilisation under our own load below this -> warn (seed 004)
};

// The checklist, in a fixed order: nvml (only when NVML is missing), identity, memory_total, mig, virtualization,
// neighbours, power_limit, max_sm_clock, pcie, nvlink, ecc, host, h2d_bandwidth, load_utilization (the table of
// check functions in probe.cpp). GPU checks are "unknown" when NVML is missing.
std::vector<ProbeCheck> evaluate_probe(const ProbeFacts& facts, const ProbeThresholds& thresholds = {});

// Theoretical per-direction PCIe bandwidth in GB/s of a link (per-lane rate after encoding × width); 0 for an
// unknown generation.
double pcie_link_gbps(unsigned generation, unsigned width);

// ---- cost advice (docs/design.md section 6, seed 000) ----
enum class Recommendation { exclusive, shared, undecided };
const char* recommendation_name(Recommendation r);

struct CostOption {
  double throughput = 0;      // units of work per second
  double price_per_h = 0;     // price per hour
  double cost_per_unit = 0;   // price_per_h / 3600 / throughput
  double time_per_unit_s = 0;  // 1 / throughput
};

struct CostAdvice {
  CostOption exclusive, shared;
  bool p95_cutoff_passed = false;
  Recommendation recommendation = Recommendation::undecided;
  double shared_to_exclusive_cost = 0;  // shared.cost_per_unit / exclusive.cost_per_unit
  std::string reason;
};

// Cost per unit of work on each option; recommends the cheaper, but never the shared option when its P95 cutoff
// failed; a tie goes to exclusive. Seed 000: switch to exclusive when T_share × P_share > T_excl × P_excl
// (T = time per unit of work, P = price), which is the same comparison. Non-positive or non-finite throughputs,
// negative or non-finite prices: undecided, with the reason.
CostAdvice cost_advice(double throughput_exclusive, double throughput_shared, double price_exclusive_per_h,
                       double price_shared_per_h, bool p95_cutoff_passed);

// vet: is the baseline from the same GPU model as this one? pass when the names match, warn when
// they differ (the P95 comparison is then across models), unknown when the baseline names no GPU.
ProbeCheck baseline_model_check(const std::string& baseline_gpu, const std::string& this_gpu,
                                const std::string& baseline_file);

}  // namespace ib
