// mig-sweep's HTML page (docs/design.md section 12): the recommendation, the yardstick, the references and
// layouts as tables (no script, nothing fetched). Formats one MigSweepResult; computes nothing.
#pragma once

#include "harness/results/mig_sweep.h"

#include <string>

namespace ib {

std::string mig_sweep_html(const MigSweepResult& result);

}  // namespace ib
