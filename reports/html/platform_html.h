// vet --html FILE: the checklist with its evidence, threshold and source, the verdict and the cost advice,
// as one page (a table: no script, nothing fetched). Formats what harness/vet/ computed; computes nothing.
#pragma once

#include "harness/results/platform_reports.h"

#include <string>

namespace ib {

std::string vet_html_report(const VetReport& report);

}  // namespace ib
