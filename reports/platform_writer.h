// The documents of the platform commands (harness/results/platform_reports.h): probe's checklist
// (Markdown, or JSON with --json), vet.json and vet.md, sustain.json and its terminal text. They format
// what harness/vet/ computed and compute nothing.
#pragma once

#include "harness/results/platform_reports.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ib {

// The checklist as a Markdown table under a "## title" heading.
std::string checks_markdown(const std::string& title, const std::vector<CheckResult>& checks);

nlohmann::ordered_json probe_to_json(const ProbeReport& report);
std::string probe_markdown(const ProbeReport& report);

nlohmann::ordered_json vet_to_json(const VetReport& report);   // vet.json
std::string vet_markdown(const VetReport& report);             // vet.md and the terminal

nlohmann::ordered_json sustain_to_json(const SustainReport& report);  // sustain.json
std::string sustain_markdown(const SustainReport& report);            // the terminal

}  // namespace ib
