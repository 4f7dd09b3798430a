// mig-parted.yaml: mig-sweep's recommended layout as a mig-parted config (version v1, mig-configs,
// device-filter, devices, mig-enabled, mig-devices), named kMigPartedConfigName (writer_common.h). Formats
// one MigSweepResult; computes nothing.
#pragma once

#include "harness/results/mig_sweep.h"

#include <string>

namespace ib {

// Only with a recommendation.
std::string mig_parted_yaml(const MigSweepResult& result);

}  // namespace ib
