// The figures of a tenant with ranks (docs/design.md section 13), from every rank's arrival and duration of each sample.
#pragma once

#include "harness/results/results.h"

namespace ib {

// Fills p.rank_figures (the straggler: straggler_rank on arrivals) from p.rank_start_ns over the counted
// samples (p.counted); leaves it empty for a phase without arrivals (without ranks, or a file of schema 2.6
// or before), whose arrivals are not one per sample, or without a counted sample.
void summarize_ranks(PhaseResult& p);

// The blast radius (threshold: a quarter of the cutoff, the slowdown a verdict cannot resolve below) and the
// stall margin of a tenant with ranks in both phases; nullopt otherwise.
std::optional<TenantMetrics::Collective> collective_metrics(const TenantResult& t, double cutoff, double timeout_s);

// Each aggregate's amplification (TenantAggregate::amplification) from its single-rank reference's
// aggregate in `aggregates`: the same mode and tenant, scenario single_rank_reference_name of its own, both
// with metrics, the tenant with ranks in `runs` of its scenario and one rank in the reference's (so only the
// collective that asked is paired, not its unchanged neighbours); unset where the reference has not run
// (yet) or either was not measured.
void attach_amplification(const std::vector<RunResult>& runs, std::vector<TenantAggregate>& aggregates);

}  // namespace ib
