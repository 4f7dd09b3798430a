// mig-sweep.json, the outcome of `mig-sweep` (docs/design.md section 12), in the schema
// reports/mig-sweep.schema.json. Formats one MigSweepResult; computes nothing.
#pragma once

#include "harness/results/mig_sweep.h"

#include <nlohmann/json.hpp>

namespace ib {

nlohmann::ordered_json mig_sweep_to_json(const MigSweepResult& result);

}  // namespace ib
