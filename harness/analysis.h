// Turns raw phase samples into statistics, metrics and verdicts. Pure functions over the result
// structs: the orchestrator collects samples, these compute, writers format.
#pragma once

#include "harness/results.h"

#include <cstdint>
#include <optional>

namespace ib {

// Marks in_window (samples that start and end inside [window_start, window_end]; all samples
// when no window is given), flags MAD outliers among them and fills stats, throughput, window_cv.
void summarize_phase(PhaseResult& phase, const Work& work, std::optional<std::int64_t> window_start,
                     std::optional<std::int64_t> window_end);

// Attaches a phase's telemetry: flags each sample throttled (telemetry.h) and summarises the
// throttling over the counted samples. Call after summarize_phase.
void attach_telemetry(PhaseResult& phase, std::vector<TelemetrySample> telemetry);

// Per-request latencies of the samples that count (empty for workloads without latencies).
std::vector<double> counted_latencies(const PhaseResult& phase);

// Durations of the samples that count (in_window).
std::vector<double> counted_durations(const PhaseResult& phase);

// Fills metrics, verdicts and warnings of every tenant and the run's STP/ANTT. `seed` seeds the
// bootstrap (each tenant gets seed + its index, so a run is reproducible from meta.bootstrap_seed).
void finalize_run(RunResult& run, std::uint64_t seed, int resamples);

// Totals and the exit code (DESIGN.md section 8): 4 when a workload failed, else 1 when a verdict
// failed or was inconclusive, else 0. An interrupted run exits 130.
RunSummary summarize_results(const std::vector<RunResult>& runs, bool interrupted);

}  // namespace ib
