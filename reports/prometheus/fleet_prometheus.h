// The fleet as Prometheus text, an outcome of `merge` (docs/fleet.md), with labels that join with
// dcgm-exporter's (Hostname, gpu, UUID, modelName, DCGM_FI_DRIVER_VERSION). Formats one FleetResult; computes
// nothing.
#pragma once

#include "harness/results/fleet.h"

#include <string>

namespace ib {

std::string fleet_prometheus_text(const FleetResult& fleet);

}  // namespace ib
