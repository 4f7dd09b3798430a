// fleet.md, the outcome of `merge` for people (docs/fleet.md): the exit code in words, the stragglers, the
// worst GPUs, the groups, the members and their verdicts. Formats one FleetResult; computes nothing.
#pragma once

#include "harness/results/fleet.h"

#include <string>

namespace ib {

std::string fleet_markdown(const FleetResult& fleet);

}  // namespace ib
