// selftest.json (harness/vet/selftest.cpp computes the report). Formats; computes nothing.
#pragma once

#include "harness/results/platform_reports.h"

#include <nlohmann/json.hpp>

namespace ib {

nlohmann::ordered_json selftest_to_json(const SelftestReport& report);

}  // namespace ib
