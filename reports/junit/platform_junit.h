// The platform commands' JUnit documents (docs/design.md section 8), for CI systems: vet's checklist and
// sustain's verdict. Formats what harness/vet/ computed; computes nothing.
#pragma once

#include "harness/results/platform_reports.h"

#include <string>
#include <vector>

namespace ib {

// A checklist (vet) as JUnit: one testcase per check; fail -> <failure> with the check, its evidence and
// threshold; unknown -> <skipped> with the evidence; pass and warn pass (warn says so in system-out).
std::string checks_junit_xml(const std::string& suite, const std::vector<CheckResult>& checks);
// sustain's verdict as one testcase "sustained_load": fail -> <failure>, inconclusive -> <skipped>
// (sustain itself exits 1 on it), pass and warn pass; the evidence in every case.
std::string sustain_junit_xml(const SustainReport& report);

}  // namespace ib
