// The outputs of `merge` (docs/design.md section 10; docs/fleet.md), all formatted from one FleetResult:
// fleet.json (reports/fleet.schema.json), fleet.md, JUnit (a testsuite per member, a testcase per tenant
// verdict, platform check and straggler figure, one "result" testcase for a member without results),
// Prometheus text with labels that join with dcgm-exporter's (Hostname, gpu, UUID, modelName,
// DCGM_FI_DRIVER_VERSION) and one HTML page (the fleet table, the stragglers, the worst GPUs and each
// member's P95 slowdowns with their intervals against the cutoff, drawn as inline SVG: no script, nothing
// fetched). Formats; computes nothing.
#pragma once

#include "harness/results/fleet.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ib {

nlohmann::ordered_json fleet_to_json(const FleetResult& fleet);
std::string fleet_markdown(const FleetResult& fleet);
std::string fleet_junit_xml(const FleetResult& fleet);
std::string fleet_prometheus_text(const FleetResult& fleet);
std::string fleet_html(const FleetResult& fleet);

}  // namespace ib
