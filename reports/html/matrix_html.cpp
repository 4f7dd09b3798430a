#include "reports/html/matrix_html.h"

#include "harness/core/text.h"
#include "reports/html/html_common.h"
#include "reports/markdown/matrix_markdown.h"

#include <sstream>

namespace ib {

namespace {

// A cell's class: its verdict, and "predicted" for --predict's cells (hatched by the stylesheet).
std::string cell_class(const MatrixCell& c) {
  std::string cls = "cell v-" + std::string(verdict_name(c.verdict));
  if (c.source == CellSource::predicted) cls += " predicted";
  return cls;
}

constexpr const char* kMatrixStyle =
    "body{font-family:sans-serif;margin:16px}table.heat{border-collapse:separate;border-spacing:4px}"
    "table.heat th{font-weight:normal;padding:2px 6px}table.heat th.row{text-align:right}"
    "td.cell{width:120px;height:56px;text-align:center;font-size:12px;color:#000;border-radius:3px}"
    "td.v-pass{background:#7bc87b}td.v-fail{background:#e06666}td.v-inconclusive{background:#f2c14e}"
    "td.v-error,td.v-waived,td.v-baseline{background:#b7b7b7}"
    "td.predicted{background-image:repeating-linear-gradient(45deg,rgba(255,255,255,.45) 0 6px,transparent 6px 12px)}"
    "ul{line-height:1.5}";

void heatmap(std::ostringstream& os, const MatrixResult& r) {
  const std::size_t n = r.workloads.size();
  os << "<h2>P95 slowdown: victim (row) beside aggressor (column)</h2>\n<table class=\"heat\" data-cells=\"" << n * n
     << "\"><tr><th>victim \\ aggressor</th>";
  for (const auto& w : r.workloads) os << "<th>" << html_escape(w.name) << "</th>";
  os << "</tr>\n";
  for (std::size_t v = 0; v < n; ++v) {
    os << "<tr><th class=\"row\">" << html_escape(r.workloads[v].name) << "</th>";
    for (std::size_t a = 0; a < n; ++a) {
      const MatrixCell& c = r.cell(v, a);
      os << "<td class=\"" << cell_class(c) << "\" title=\"" << html_escape(c.verdict_reason) << "\">"
         << html_escape(matrix_cell_words(c)) << "</td>";
    }
    os << "</tr>\n";
  }
  os << "</table>\n<p>Green: passes the cutoff (" << html_escape(signed_percent(r.cutoff))
     << "); red: fails; amber: inconclusive; grey: not measured; hatched: predicted (--predict). The diagonal is a "
        "workload beside a copy of itself.</p>\n";
}

void sharing(std::ostringstream& os, const MatrixResult& r) {
  os << "<h2>May share</h2><ul>";
  if (r.may_share.empty()) os << "<li>No two workloads may share.</li>";
  for (const auto& [a, b] : r.may_share)
    os << "<li>" << html_escape(r.workloads[a].name + " + " + r.workloads[b].name) << "</li>";
  os << "</ul>\n";
  if (!r.packing) return;
  const MatrixPacking& p = *r.packing;
  os << "<h2>Packing: " << p.devices.size() << " devices instead of " << p.exclusive_devices << " (" << p.saved
     << " saved)</h2><ul>";
  for (std::size_t d = 0; d < p.devices.size(); ++d) {
    std::string names;
    for (std::size_t w : p.devices[d]) names += (names.empty() ? "" : " + ") + r.workloads[w].name;
    os << "<li>device " << d + 1 << ": " << html_escape(names) << "</li>";
  }
  os << "</ul>\n";
}

}  // namespace

std::string matrix_html(const MatrixResult& r) {
  std::ostringstream os;
  os << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>interference-bench matrix</title><style>" << kMatrixStyle
     << "</style></head><body><h1>"
     << html_escape("interference-bench matrix — " + std::to_string(r.workloads.size()) + " workloads, mode " + r.mode +
                    ", backend " + r.backend)
     << "</h1>\n";
  if (r.interrupted) os << "<p>Interrupted: the cells are those it finished.</p>\n";
  heatmap(os, r);
  sharing(os, r);
  os << "</body></html>\n";
  return os.str();
}

}  // namespace ib
