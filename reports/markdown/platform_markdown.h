// The platform commands' documents for people (harness/results/platform_reports.h): a checklist as a
// Markdown table (probe, vet), vet.md and sustain's terminal text. They format what harness/vet/ computed
// and compute nothing.
#pragma once

#include "harness/results/platform_reports.h"

#include <string>
#include <vector>

namespace ib {

// The checklist as a Markdown table under a "## title" heading.
std::string checks_markdown(const std::string& title, const std::vector<CheckResult>& checks);

std::string probe_markdown(const ProbeReport& report);
std::string vet_markdown(const VetReport& report);          // vet.md and the terminal
std::string sustain_markdown(const SustainReport& report);  // the terminal

}  // namespace ib
