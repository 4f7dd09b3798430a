// The outputs of `mig-sweep` (docs/design.md section 12), formatted from one MigSweepResult: mig-sweep.json
// (reports/mig-sweep.schema.json), mig-sweep.md (with the GPU operator's node-label command and the Slurm
// gres lines of the recommended layout), one HTML page (tables, no script), and the recommendation as a
// mig-parted config (version v1, mig-configs, device-filter, devices, mig-enabled, mig-devices).
// Formats; computes nothing.
#pragma once

#include "harness/results/mig_sweep.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ib {

// The name of the mig-parted config the recommendation is written as (and the node label's value).
constexpr const char* kMigPartedConfigName = "interference-bench-recommended";

nlohmann::ordered_json mig_sweep_to_json(const MigSweepResult& result);
std::string mig_sweep_markdown(const MigSweepResult& result);
std::string mig_sweep_html(const MigSweepResult& result);
// Only with a recommendation.
std::string mig_parted_yaml(const MigSweepResult& result);

}  // namespace ib
