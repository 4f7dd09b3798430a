// fleet.json, the outcome of `merge` (docs/design.md section 10; docs/fleet.md), in the schema
// reports/fleet.schema.json. Formats one FleetResult; computes nothing.
#pragma once

#include "harness/results/fleet.h"

#include <nlohmann/json.hpp>

namespace ib {

nlohmann::ordered_json fleet_to_json(const FleetResult& fleet);

}  // namespace ib
