// The fleet as JUnit, an outcome of `merge` (docs/fleet.md): a testsuite per member, a testcase per tenant
// verdict, platform check and straggler figure, one "result" testcase for a member without results.
// Formats one FleetResult; computes nothing.
#pragma once

#include "harness/results/fleet.h"

#include <string>

namespace ib {

std::string fleet_junit_xml(const FleetResult& fleet);

}  // namespace ib
