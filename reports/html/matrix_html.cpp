#include "reports/html/matrix_html.h"

#include "harness/core/text.h"
#include "reports/html/html_common.h"
#include "reports/markdown/matrix_markdown.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ib {

namespace {

// A cell's class: its verdict, and "predicted" for --predict's cells (hatched by the stylesheet).
std::string cell_class(const MatrixCell& c) {
  std::string cls = "cell v-" + std::string(verdict_name(c.verdict));
  if (c.source == CellSource::predicted) cls += " predicted";
  return cls;
}

// The value scale as shading: the verdict's hue, lighter near no slowdown and darker towards twice the cutoff
// (lightness 80% down to 42%, no darker beyond), with white text where the shade is dark. A cell without a
// figure keeps its class's grey.
std::string cell_style(const MatrixCell& c, double cutoff) {
  if (!c.p95_slowdown || !std::isfinite(c.p95_slowdown->value)) return "";
  int hue = 0, saturation = 0;
  switch (c.verdict) {
    case Verdict::pass: hue = 120, saturation = 42; break;
    case Verdict::fail: hue = 0, saturation = 65; break;
    case Verdict::inconclusive: hue = 42, saturation = 85; break;
    default: return "";
  }
  const double scale = cutoff > 0.0 ? std::clamp(c.p95_slowdown->value / (2.0 * cutoff), 0.0, 1.0) : 1.0;
  const double lightness = 80.0 - 38.0 * scale;
  return " style=\"background-color:hsl(" + std::to_string(hue) + "," + std::to_string(saturation) + "%," +
         formatted("%.0f", lightness) + "%)" + (lightness < 55.0 ? ";color:#fff" : "") + "\"";
}

constexpr const char* kMatrixStyle =
    "body{font-family:sans-serif;margin:16px;background:#fff}table.heat{border-collapse:separate;border-spacing:4px}"
    "table.heat th{font-weight:normal;padding:2px 6px;max-width:140px;overflow-wrap:anywhere}table.heat th.row{text-align:right}"
    "td.cell{width:120px;min-width:120px;max-width:120px;height:56px;text-align:center;font-size:12px;color:#000;"
    "border-radius:3px;overflow-wrap:anywhere}"
    "td.v-pass{background:#7bc87b}td.v-fail{background:#e06666}td.v-inconclusive{background:#f2c14e}"
    "td.v-error,td.v-waived,td.v-baseline{background:#b7b7b7}"
    "td.predicted,.legend .predicted{background-image:repeating-linear-gradient(45deg,rgba(255,255,255,.45) 0 6px,transparent 6px 12px)}"
    "ul{line-height:1.5}.legend{font-size:13px;margin:8px 0}.legend span.sw{display:inline-block;width:12px;height:12px;"
    "border-radius:2px;vertical-align:middle;margin:0 4px 0 12px}.legend span.scale{display:inline-block;width:120px;"
    "height:8px;vertical-align:middle;margin:0 6px;background:linear-gradient(90deg,hsl(0,0%,80%),hsl(0,0%,42%))}"
    ".devices{display:flex;flex-wrap:wrap;gap:8px}.device{border:2px solid #555;border-radius:4px;padding:4px 8px;"
    "font-size:13px}.device b{display:block}";

void legend(std::ostringstream& os, const MatrixResult& r) {
  os << "<div class=\"legend\">Verdict:<span class=\"sw\" style=\"background:#7bc87b\"></span>passes the cutoff ("
     << html_escape(signed_percent(r.cutoff)) << ")<span class=\"sw\" style=\"background:#e06666\"></span>fails"
     << "<span class=\"sw\" style=\"background:#f2c14e\"></span>inconclusive<span class=\"sw\" style=\"background:#b7b7b7\">"
        "</span>not measured<span class=\"sw predicted\" style=\"background-color:#7bc87b\"></span>predicted (--predict)</div>\n"
     << "<div class=\"legend\">Shade: P95 slowdown 0<span class=\"scale\"></span>"
     << html_escape(signed_percent(2.0 * r.cutoff)) << " (twice the cutoff) and beyond: the darker, the slower.</div>\n";
}

void heatmap(std::ostringstream& os, const MatrixResult& r) {
  const std::size_t n = r.workloads.size();
  os << "<h2>P95 slowdown: victim (row) beside aggressor (column)</h2>\n";
  legend(os, r);
  os << "<table class=\"heat\" data-cells=\"" << n * n << "\"><tr><th>victim \\ aggressor</th>";
  for (const auto& w : r.workloads) os << "<th>" << html_escape(w.name) << "</th>";
  os << "</tr>\n";
  for (std::size_t v = 0; v < n; ++v) {
    os << "<tr><th class=\"row\">" << html_escape(r.workloads[v].name) << "</th>";
    for (std::size_t a = 0; a < n; ++a) {
      const MatrixCell& c = r.cell(v, a);
      os << "<td class=\"" << cell_class(c) << "\"" << cell_style(c, r.cutoff) << " title=\""
         << html_escape(r.workloads[v].name + " beside " + r.workloads[a].name + ": " + c.verdict_reason) << "\">"
         << html_escape(matrix_cell_words(c)) << "</td>";
    }
    os << "</tr>\n";
  }
  os << "</table>\n<p>Each cell: the victim's P95 slowdown beside the aggressor with its 95% interval; it passes when the "
        "interval's upper bound is at most the cutoff, fails when its lower bound is above it. The diagonal is a "
        "workload beside a copy of itself; a pair may share when both of its directions pass.</p>\n";
}

std::string workload_names(const MatrixResult& r, const std::vector<std::size_t>& ws) {
  std::string s;
  for (std::size_t w : ws) s += (s.empty() ? "" : " + ") + r.workloads[w].name;
  return s;
}

void sharing(std::ostringstream& os, const MatrixResult& r) {
  os << "<h2>May share</h2><ul>";
  if (r.may_share.empty()) os << "<li>No two workloads may share.</li>";
  for (const auto& [a, b] : r.may_share)
    os << "<li>" << html_escape(r.workloads[a].name + " + " + r.workloads[b].name) << "</li>";
  if (!r.self_sharing.empty()) os << "<li>Beside a copy of itself: " << html_escape(workload_names(r, r.self_sharing)) << "</li>";
  os << "</ul>\n";
  if (!r.packing) return;
  const MatrixPacking& p = *r.packing;
  os << "<h2>Packing: " << p.devices.size() << " devices instead of " << p.exclusive_devices << " (" << p.saved
     << " saved)</h2><div class=\"devices\">";
  for (std::size_t d = 0; d < p.devices.size(); ++d)
    os << "<div class=\"device\"><b>device " << d + 1 << "</b>" << html_escape(workload_names(r, p.devices[d])) << "</div>";
  os << "</div>\n";
  if (p.exclusive_price_per_hour && p.packed_price_per_hour)
    os << "<p>Price per hour: " << html_escape(significant(*p.packed_price_per_hour, 4)) << " packed against "
       << html_escape(significant(*p.exclusive_price_per_hour, 4)) << " with a device each.</p>\n";
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
  if (r.prediction)
    os << "<p>Hatched cells are predicted (--predict: " << r.prediction->runs << " runs instead of the full matrix's "
       << r.prediction->full_matrix_runs << "), never measured.</p>\n";
  heatmap(os, r);
  sharing(os, r);
  os << "</body></html>\n";
  return os.str();
}

}  // namespace ib
