// The HTML report (`--html FILE` on run, `report RESULTS --html FILE`): one self-contained file that
// fetches nothing. Chart.js is inlined (reports/html/chartjs.h); the results are embedded as a JSON data
// block and drawn by the page's script. Formatting only: the page shows the fields the harness computed
// (statistics, P95, CI, cutoff, verdicts, telemetry) and its script only sorts the raw sample times of
// each phase for the CDF and places points on axes. All text from the results is escaped (in the HTML
// and in the data block), and the script writes text with textContent only.
#pragma once

#include "harness/results/results.h"
#include "reports/results_writer.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ib {

// Whether this build can write the report (Chart.js was found at configure time), and if not, why.
bool html_report_available();
std::string html_report_unavailable_reason();

// The data block the page's script draws from: per run and tenant the phases' raw samples, P95s,
// telemetry series and the blocks; the aggregates with their CI and cutoff.
nlohmann::ordered_json html_report_data(const Results& results);

// The whole page.
std::string html_report(const Results& results);

// The report as a results file, rewritten after every repetition like the others (see ResultsFile).
class HtmlReportFile : public ResultsFile {
 public:
  using ResultsFile::ResultsFile;

 protected:
  std::string text(const Results& results) const override { return html_report(results); }
};

}  // namespace ib
