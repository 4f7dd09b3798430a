// selftest.md and the terminal's selftest table (harness/vet/selftest.cpp computes the report). Formats;
// computes nothing.
#pragma once

#include "harness/results/platform_reports.h"

#include <string>

namespace ib {

std::string selftest_markdown(const SelftestReport& report);

}  // namespace ib
