// mig-sweep's judgement (docs/design.md section 12), pure functions over the measured layouts: which layout
// to recommend and the sweep's exit code. The command itself is mig_sweep_command (platform.h).
#pragma once

#include "harness/nvml/nvml.h"
#include "harness/nvml/telemetry.h"
#include "harness/results/mig_sweep.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ib {

// The measured layout with the most tenants passing the cutoff, then the most system throughput (STP
// against the sweep's one yardstick) per price when the layouts have prices, else the most STP; none when
// no layout was measured. `distinguishable` is false when the
// runner-up has as many tenants passing and every tenant's P95 slowdown interval overlaps between the two
// (the runs cannot tell them apart).
std::optional<SweepRecommendation> recommend_layout(const std::vector<SweepLayout>& layouts, unsigned tenants);

// 130 interrupted; 4 the yardstick's, a layout's or a reference's workload failed; 3 no layout could be measured; 1 the recommended layout
// leaves a tenant failing the cutoff; 5 the best cannot be told apart from the runner-up, or a tenant of
// it is inconclusive; else 0.
int sweep_exit_code(const MigSweepResult& result, unsigned tenants);

// The GPU's power over `readings` (the colocated phases' NVML readings): median and largest power, the
// enforced limit, and the fraction of readings with reasons whose clock-event reasons name a power cap
// (SwPowerCap or HwPowerBrakeSlowdown). Empty when no reading has a power figure.
std::optional<SweepPower> summarize_power(const std::vector<TelemetrySample>& readings);

// --prices FILE: a JSON object, profile name -> the price of one instance (a positive number, in the
// file's unit, e.g. $/h). Throws InputError naming the file and the key.
std::map<std::string, double> read_sweep_prices(const std::string& file);

// Pre-existing instances (`existing`) are never touched: each planned entry (references and layouts) whose
// instances do not fit beside them on a GPU offering `gpu_profiles` becomes skipped_existing with the reason. When
// NVML does not say where one of them sits, the layouts are left to their runs (which refuse when one does not
// fit) and the references, on the largest instance, are skipped.
void skip_blocked_entries(MigSweepResult& r, const std::vector<MigGpuInstanceProfile>& gpu_profiles,
                          const std::vector<MigGpuInstance>& existing);

// The sweep's one yardstick, before anything runs: the user's --baseline file (`baseline`, given), else the
// instance its exclusive run is to be measured on: the GPU's largest profile, or, where pre-existing
// instances leave no room for it, the largest profile that fits beside them (whole_gpu_largest false, with
// the reason); skipped_existing, with the reason, when none fits or NVML does not say where they sit.
void plan_yardstick(const std::string& baseline, SweepYardstick& y, const std::vector<MigGpuInstanceProfile>& gpu_profiles,
                    const std::vector<MigGpuInstance>& existing);

}  // namespace ib
