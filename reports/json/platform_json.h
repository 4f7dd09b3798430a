// The platform commands' JSON documents (harness/results/platform_reports.h): probe's checklist (`probe
// --json`), vet.json and sustain.json. They format what harness/vet/ computed and compute nothing.
#pragma once

#include "harness/results/platform_reports.h"

#include <nlohmann/json.hpp>

namespace ib {

// One check of a checklist, as vet.json, probe --json and fleet.json write it.
nlohmann::ordered_json check_json(const CheckResult& c);

nlohmann::ordered_json probe_to_json(const ProbeReport& report);
nlohmann::ordered_json vet_to_json(const VetReport& report);          // vet.json
nlohmann::ordered_json sustain_to_json(const SustainReport& report);  // sustain.json

}  // namespace ib
