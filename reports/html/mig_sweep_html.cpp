#include "reports/html/mig_sweep_html.h"

#include "harness/core/text.h"
#include "reports/html/html_common.h"
#include "reports/writer_common.h"

#include <algorithm>
#include <sstream>

namespace ib {

namespace {

// One entry's rows: its figures once (spanning its tenants' rows), then a row per tenant.
void html_entry_rows(std::ostringstream& os, const SweepLayout& l) {
  const std::size_t rows = std::max<std::size_t>(1, l.tenants.size());
  const std::string span = "<td rowspan=\"" + std::to_string(rows) + "\">";
  for (std::size_t i = 0; i < rows; ++i) {
    os << "<tr>";
    if (i == 0)
      os << span << html_escape(l.name) << "</td>" << span
         << html_escape(std::string(to_string(l.outcome)) + (l.reason.empty() ? "" : ": " + l.reason)) << "</td>" << span
         << l.passing << "</td>" << span << html_escape(l.stp ? significant(*l.stp, 3) : "n/a") << "</td>" << span
         << html_escape(l.stp_per_price ? significant(*l.stp_per_price, 3) : "n/a") << "</td>" << span
         << html_escape(sweep_power_words(l.power)) << "</td>";
    if (i < l.tenants.size()) {
      const auto& t = l.tenants[i];
      os << "<td>" << html_escape(t.tenant) << "</td><td>" << html_escape(t.profile) << "</td><td>" << to_string(t.verdict)
         << "</td><td>" << html_escape(p95_words(t.p95_slowdown)) << "</td>";
    } else {
      os << "<td colspan=\"4\"></td>";
    }
    os << "</tr>\n";
  }
}

}  // namespace

std::string mig_sweep_html(const MigSweepResult& r) {
  std::ostringstream os;
  os << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>interference-bench mig-sweep</title><style>"
        "body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
        "</style></head><body><h1>"
     << html_escape("interference-bench mig-sweep — GPU " + std::to_string(r.device) + " (" + r.gpu_name + ")") << "</h1><p>"
     << html_escape(r.recommendation ? "Recommended layout: " + r.recommendation->layout + " — " + r.recommendation->reason
                                     : std::string("No layout was measured."))
     << "</p>\n<p>" << html_escape(sweep_yardstick_words(r.yardstick)) << "</p>\n";
  const char* header = "<table><tr><th>entry</th><th>outcome</th><th>passing</th><th>STP</th><th>STP per price</th>"
                       "<th>power (colocated)</th><th>tenant</th><th>instance</th><th>verdict</th><th>P95 slowdown [CI]</th></tr>\n";
  if (!r.references.empty()) {
    os << "<h2>References: every tenant on the largest instance</h2>" << header;
    for (const auto& l : r.references) html_entry_rows(os, l);
    os << "</table>\n";
  }
  os << "<h2>Layouts</h2>" << header;
  for (const auto& l : r.layouts) html_entry_rows(os, l);
  os << "</table></body></html>\n";
  return os.str();
}

}  // namespace ib
