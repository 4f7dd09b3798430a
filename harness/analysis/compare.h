// Two saved runs compared tenant by tenant (`interference-bench compare BASE NEW`): the change of the P95
// slowdown, the median slowdown and the colocated throughput, each with a bootstrap CI over both runs'
// samples, classified against a largest tolerated regression. Pure functions over the result structs;
// definitions in docs/methodology.md, "Comparing two runs".
#pragma once

#include "harness/results/comparison.h"
#include "harness/results/results.h"
#include "harness/stats/bootstrap.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace ib {

// 0.05: a slowdown 5 points higher (or 5% less colocated throughput) is the largest change that is not
// a regression.
constexpr double kDefaultMaxRegression = 0.05;

struct CompareOptions {
  double max_regression = kDefaultMaxRegression;
  std::uint64_t seed = 1;
  int resamples = 1000;
};

// One tenant's counted values over the repetitions of one file, grouped by round: E and C on the
// verdict's basis (per-request latencies for latency-type workloads, else sample durations), D the
// colocated sample durations (throughput = work / mean(D)). Paired (a round's E, C and D resampled
// together) unless an exclusive phase came from a baseline file.
struct TenantSamples {
  bool by_latency = false;
  bool per_work = false;  // sample values are time per unit of work (an interval reporter, analysis.h judged_per_work)
  Pairing pairing = Pairing::paired;
  BlockedSamples E, C, D;
  double work_per_sample = 0.0;
};
// A tenant in one repetition: its run (for the blocks' rounds) and its result.
using RunTenant = std::pair<const RunResult*, const TenantResult*>;
TenantSamples tenant_samples(const std::vector<RunTenant>& repetitions);

// The class of one change against `max_regression` X. For a metric where higher is worse (slowdowns):
// worse when ci_low > X; inconclusive when the CI is NaN or ci_high > X; better when ci_high < -X;
// otherwise same. Where lower is worse (throughput) the same with the signs turned.
ChangeClass classify_change(const Estimate& change, double max_regression, bool higher_is_worse);

// The class that stands for several: worse, else inconclusive, else better, else same (none: same).
ChangeClass worst_class(const std::vector<ChangeClass>& classes);

// p95_slowdown, median_slowdown and throughput of NEW against BASE. The bootstrap draws, per replicate
// and in this order, a replicate of BASE (its rounds, each round's E, C and D together), then one of
// NEW, from one generator seeded with `o.seed` (harness/stats/bootstrap.h). The CI is normal on the
// change: change -/+ q sd(replicates), q = 1.96, or with enough rounds resampled whole (as the runs' own
// intervals) sqrt(C / (C - 1)) times Student's t with C - 1 degrees of freedom, C the rounds of the file
// with fewer. P95 needs kMinSamplesP95 values in every E and C, else it is inconclusive.
// How a standard deviation of replicates becomes a 95% half-width (as the run's own intervals,
// bootstrap.h): with rounds resampled whole, times sqrt(C / (C - 1)) and Student's t with C - 1
// degrees of freedom, C the rounds (clusters); otherwise, or with fewer than 2, 1.96.
double interval_factor(std::size_t clusters, bool whole_rounds);

std::vector<MetricChange> compare_samples(const TenantSamples& base, const TenantSamples& next, const CompareOptions& o);

// Every tenant of BASE matched with NEW by (scenario, mode, tenant name, workload, params), over the
// repetitions that ran (waived runs are left out); the totals and the exit code (1: a tenant worse;
// else 5: one inconclusive, or no tenant matched; else 0).
Comparison compare_results(const Results& base, const Results& next, const CompareOptions& o);

}  // namespace ib
