// Turns raw samples into statistics, metrics and verdicts. Pure functions over the result structs:
// the orchestrator collects samples, these compute, writers format.
#pragma once

#include "harness/results/results.h"
#include "harness/stats/bootstrap.h"

#include <cstdint>
#include <optional>

namespace ib {

// Whether sample i counts: inside its block's overlap window and its block is clean. (Phases read
// from files written before schema 2.0 have no `counted`: their in_window says it.)
bool sample_counts(const PhaseResult& phase, std::size_t i);

// Marks in_window (inside the block's overlap window; every sample outside the colocated phase) and
// counted (in_window and the block is clean), flags MAD outliers among the counted samples and fills
// stats, throughput, window_cv and the block counts.
void summarize_phase(PhaseResult& phase, const Work& work, const std::vector<BlockRecord>& blocks);

// Overlap windows of the colocated blocks (from the tenants' first and last sample times), every
// measured phase summarised, and the coverage of each counted colocated sample.
void summarize_blocks(RunResult& run);

// Coverage of each interval of `self`: the fraction of it during which every interval list of `others`
// had an interval open. Intervals are [start, end) in ns, each list sorted by start and non-overlapping.
using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;
std::vector<double> coverage(const Intervals& self, const std::vector<Intervals>& others);

// Attaches a phase's telemetry: flags each sample throttled (telemetry.h) and summarises the
// throttling over the counted samples. Call after summarize_phase.
void attach_telemetry(PhaseResult& phase, std::vector<TelemetrySample> telemetry);

// Per-request latencies of the samples that count (empty for workloads without latencies).
std::vector<double> counted_latencies(const PhaseResult& phase);
// Durations of the samples that count.
std::vector<double> counted_durations(const PhaseResult& phase);
// The same, grouped by block (one repetition): what the bootstrap resamples.
std::vector<std::vector<double>> counted_by_block(const PhaseResult& phase, bool latencies);

// Fills metrics, verdicts and warnings of every tenant of one repetition and the run's STP/ANTT.
// `seed` seeds the bootstrap (each tenant gets seed + its index, so a run is reproducible). Throws
// Interrupted when `stop` says so during the bootstrap; `run` is then partly filled (finalize a copy).
void finalize_run(RunResult& run, std::uint64_t seed, int resamples, const StopCheck& stop = {});

// The verdicts that count: per (scenario, mode, tenant), judged on all its repetitions together.
// `reps` are the repetitions of one scenario under one mode, in order.
// Throws Interrupted when `stop` says so during the bootstrap.
std::vector<TenantAggregate> aggregate_repetitions(const std::vector<const RunResult*>& reps, std::uint64_t seed,
                                                   int resamples, const StopCheck& stop = {});

// Totals and the exit code (DESIGN.md section 8) over the aggregates: 4 when a workload failed, else 1
// when a verdict failed, else 5 when one is inconclusive, else 0. An interrupted run exits 130.
RunSummary summarize_results(const std::vector<TenantAggregate>& aggregates, int runs, bool interrupted);

}  // namespace ib
