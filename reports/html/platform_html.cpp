#include "reports/html/platform_html.h"

#include "harness/core/text.h"
#include "reports/html/html_common.h"

#include <sstream>

namespace ib {

namespace {

void check_rows(std::ostringstream& os, const std::vector<CheckResult>& checks) {
  os << "<table><tr><th>check</th><th>status</th><th>evidence</th><th>threshold</th><th>source</th></tr>\n";
  for (const CheckResult& c : checks) {
    const std::string status = to_string(c.status);
    os << "<tr><td>" << html_escape(c.title) << " <span class=\"note\">" << html_escape(c.id) << "</span></td><td class=\""
       << status << "\">" << status << "</td><td>" << html_escape(c.evidence) << "</td><td>" << html_escape(c.threshold)
       << "</td><td>" << html_escape(c.source) << "</td></tr>\n";
  }
  os << "</table>\n";
}

}  // namespace

std::string vet_html_report(const VetReport& r) {
  std::ostringstream os;
  const std::string verdict = to_string(r.verdict);
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        "<title>interference-bench vet "
     << html_escape(r.start_time) << "</title>\n<style>" << kHtmlReportStyle << "</style></head>\n<body>\n<h1>interference-bench vet — GPU "
     << r.device << ": <span class=\"" << verdict << "\">" << verdict << "</span></h1>\n<p>" << html_escape(r.start_time)
     << ", backend " << html_escape(r.backend) << ", budget " << html_escape(significant(r.budget_s)) << " s"
     << (r.baseline.empty() ? std::string() : ", baseline " + html_escape(r.baseline)) << ". Measuring steps: "
     << html_escape(r.stability_results) << ", " << html_escape(r.sustain_results) << ".</p>\n";
  check_rows(os, r.checks);
  if (r.cost)
    os << "<p>Cost per unit of " << html_escape(r.cost->unit) << " (" << html_escape(r.cost->workload)
       << "): recommend <b>" << to_string(r.cost->recommendation) << "</b> — " << html_escape(r.cost->reason) << "</p>\n";
  os << "</body></html>\n";
  return os.str();
}

}  // namespace ib
