// The fleet's HTML page, an outcome of `merge` (docs/fleet.md): the fleet table, the stragglers, the worst
// GPUs and each member's P95 slowdowns with their intervals against the cutoff, drawn as inline SVG (no
// script, nothing fetched). Formats one FleetResult; computes nothing.
#pragma once

#include "harness/results/fleet.h"

#include <string>

namespace ib {

std::string fleet_html(const FleetResult& fleet);

}  // namespace ib
