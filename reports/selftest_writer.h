// selftest.json and selftest.md (harness/vet/selftest.cpp computes the report).
#pragma once

#include "harness/results/platform_reports.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ib {

nlohmann::ordered_json selftest_to_json(const SelftestReport& report);
std::string selftest_markdown(const SelftestReport& report);

}  // namespace ib
