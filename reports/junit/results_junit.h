// JUnit XML of a run's verdicts (docs/design.md section 8), for CI systems: one testcase per tenant verdict
// (aggregates[]: the verdicts that count). fail -> <failure> with the metric, its value and CI, the
// cutoff and the reason; error -> <error>; inconclusive and waived -> <skipped> with the reason; pass and
// baseline pass. Written with pugixml (it escapes). Formats; computes nothing.
#pragma once

#include "harness/results/results.h"
#include "reports/results_writer.h"

#include <string>

namespace ib {

std::string junit_xml(const Results& results);

class JunitResultsFile : public ResultsFile {
 public:
  using ResultsFile::ResultsFile;

 protected:
  std::string text(const Results& results) const override { return junit_xml(results); }
};

}  // namespace ib
