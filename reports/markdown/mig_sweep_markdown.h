// mig-sweep.md, the outcome of `mig-sweep` for people (docs/design.md section 12): the recommendation, the
// yardstick, the references and layouts, and how to apply the recommended layout (the GPU operator's
// node-label command, the Slurm gres line). Formats one MigSweepResult; computes nothing.
#pragma once

#include "harness/results/mig_sweep.h"

#include <string>

namespace ib {

std::string mig_sweep_markdown(const MigSweepResult& result);

}  // namespace ib
