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
// counted (in_window and the block is clean), flags MAD outliers among the counted samples' values and fills
// stats (over the values: durations, or time per unit of work), throughput (work over time: n x the work per
// sample, or the samples' own work), window_cv (1 s windows, or each sample's own interval) and the block counts.
void summarize_phase(PhaseResult& phase, const Work& work, const std::vector<BlockRecord>& blocks);

// Overlap windows of the colocated blocks (from the tenants' first and last sample times), tail bursts
// (an exclusive or alone block with one becomes an outlier, not counted; a colocated one is named),
// every measured phase summarised, and the coverage of each counted colocated sample. Idempotent.
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
// The values (sample_value, harness/results/results.h: durations, or time per unit of work) of the samples that
// count.
std::vector<double> counted_values(const PhaseResult& phase);
// The same, grouped by block (one repetition), in order of first appearance.
std::vector<std::vector<double>> counted_by_block(const PhaseResult& phase, bool latencies);
// The same, grouped by round: entry k holds the counted values of the phase's blocks of round k (of
// `blocks`, the run's), empty when round k has none; what the round bootstrap resamples.
std::vector<std::vector<double>> counted_by_round(const PhaseResult& phase, const std::vector<BlockRecord>& blocks,
                                                  int rounds, bool latencies);

// Tail bursts (docs/design.md section 4, "One bad block"): among one tenant's blocks of one phase, a block
// whose P95 lies far above the others' while its median does not. With L_b = log P95_b and
// T_b = log(P95_b / median_b), a block is flagged when both
//   L_b - median(L) > max(kTailZ * 1.4826 * MAD(L), log(1 + cutoff / 4))   and the same for T,
// a robust z-score (Iglewicz and Hoaglin's 3.5) with a floor of a quarter of the cutoff, so that a
// phase of very even blocks does not flag a small difference. Requiring T too leaves alone a block
// that is slower as a whole (a plateau of the machine's speed moves its median with its P95; the
// paired rounds cancel that). Needs kMinBlocksForTails blocks; fewer: nothing is flagged.
constexpr std::size_t kMinBlocksForTails = 5;
constexpr double kTailZ = 3.5;
struct BlockTail {
  double p95 = 0.0, median = 0.0;
};
std::vector<bool> tail_bursts(const std::vector<BlockTail>& blocks, double cutoff);

// The tail of tenant `tenant`'s values in block `index` of `run` (per-request latencies where its
// phase has them, else sample times; colocated: inside the block's overlap window). Nothing: nullopt.
std::optional<BlockTail> block_tail(const RunResult& run, std::size_t tenant, int index);

// Whether block `index` (an exclusive or alone block, just measured) had a tail burst for one of its
// tenants against that tenant's earlier clean or outlier blocks of the phase in this repetition. Names
// the tenants in the block's tail_bursts and returns the reason, or "" when none.
std::string tail_burst_now(RunResult& run, int index);

// Fills metrics, verdicts and warnings of every tenant of one repetition and the run's STP/ANTT.
// `seed` seeds the bootstrap (each tenant gets seed + its index, so a run is reproducible); intervals
// are at the run's stopping boundary (run.stopping.z). Throws Interrupted when `stop` says so during
// the bootstrap; `run` is then partly filled (finalize a copy).
void finalize_run(RunResult& run, std::uint64_t seed, int resamples, const StopCheck& stop = {});

// The P95 slowdown estimates of every tenant over repetitions `reps` of one scenario under one mode
// (in order), at boundary z: repetitions, then rounds (paired where the exclusive phase was measured in
// the same rounds), then moving blocks. A tenant without both phases: nullopt. Throws Interrupted.
std::vector<std::optional<TenantMetrics>> tenant_metrics(const std::vector<const RunResult*>& reps, std::uint64_t seed,
                                                         int resamples, double z, const StopCheck& stop = {});

// The verdicts that count: per (scenario, mode, tenant), judged on all its repetitions together at the
// last repetition's stopping boundary, with how far each got (Decision).
// `reps` are the repetitions of one scenario under one mode, in order.
// Throws Interrupted when `stop` says so during the bootstrap.
std::vector<TenantAggregate> aggregate_repetitions(const std::vector<const RunResult*>& reps, std::uint64_t seed,
                                                   int resamples, const StopCheck& stop = {});

// Totals and the exit code (docs/design.md section 8) over the aggregates: 4 when a workload failed, else 1
// when a verdict failed, else 5 when one is inconclusive, else 0. An interrupted run exits 130.
RunSummary summarize_results(const std::vector<TenantAggregate>& aggregates, int runs, bool interrupted);

}  // namespace ib
