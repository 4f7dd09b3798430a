// JUnit XML of a run's verdicts (docs/design.md section 8), for CI systems: one testcase per tenant verdict
// (aggregates[]: the verdicts that count). fail -> <failure> with the metric, its value and CI, the
// cutoff and the reason; error -> <error>; inconclusive and waived -> <skipped> with the reason; pass and
// baseline pass. Written with pugixml (it escapes). Formats; computes nothing.
#pragma once

#include "harness/results/platform_reports.h"
#include "harness/results/results.h"
#include "reports/results_writer.h"

#include <string>

namespace ib {

std::string junit_xml(const Results& results);

// A checklist (vet) as JUnit: one testcase per check; fail -> <failure> with the check, its evidence and
// threshold; unknown -> <skipped> with the evidence; pass and warn pass (warn says so in system-out).
std::string checks_junit_xml(const std::string& suite, const std::vector<CheckResult>& checks);
// sustain's verdict as one testcase "sustained_load": fail -> <failure>, inconclusive -> <skipped>
// (sustain itself exits 1 on it), pass and warn pass; the evidence in every case.
std::string sustain_junit_xml(const SustainReport& report);

class JunitResultsFile : public ResultsFile {
 public:
  using ResultsFile::ResultsFile;

 protected:
  std::string text(const Results& results) const override { return junit_xml(results); }
};

}  // namespace ib
