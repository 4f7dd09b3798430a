// mig-sweep's judgement (DESIGN.md section 12), pure functions over the measured layouts: which layout
// to recommend and the sweep's exit code. The command itself is mig_sweep_command (platform.h).
#pragma once

#include "harness/results/mig_sweep.h"

#include <optional>
#include <vector>

namespace ib {

// The measured layout with the most tenants passing the cutoff, then the most system throughput (STP
// against the exclusive baseline); none when no layout was measured. `distinguishable` is false when the
// runner-up has as many tenants passing and every tenant's P95 slowdown interval overlaps between the two
// (the runs cannot tell them apart).
std::optional<SweepRecommendation> recommend_layout(const std::vector<SweepLayout>& layouts, unsigned tenants);

// 130 interrupted; 4 a layout's workload failed; 3 no layout could be measured; 1 the recommended layout
// leaves a tenant failing the cutoff; 5 the best cannot be told apart from the runner-up, or a tenant of
// it is inconclusive; else 0.
int sweep_exit_code(const MigSweepResult& result, unsigned tenants);

}  // namespace ib
