#include "reports/html/fleet_html.h"

#include "harness/core/text.h"
#include "reports/html/html_common.h"
#include "reports/writer_common.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ib {

namespace {

// One P95 slowdown with its interval on a fixed axis from -20% to +100%, the cutoff as a red line.
// Positions only: every figure drawn is one the merge computed.
std::string interval_svg(const Estimate& e, double cutoff) {
  const double lo = -0.2, hi = 1.0, w = 240.0;
  const auto x = [&](double v) { return std::clamp((v - lo) / (hi - lo), 0.0, 1.0) * w; };
  std::ostringstream os;
  os << "<svg width=\"" << w << "\" height=\"14\" role=\"img\"><line x1=\"" << x(0.0) << "\" y1=\"0\" x2=\"" << x(0.0)
     << "\" y2=\"14\" stroke=\"#999\"/><line x1=\"" << x(cutoff) << "\" y1=\"0\" x2=\"" << x(cutoff)
     << "\" y2=\"14\" stroke=\"#c00\"/>";
  if (std::isfinite(e.ci_low) && std::isfinite(e.ci_high))
    os << "<line x1=\"" << x(e.ci_low) << "\" y1=\"7\" x2=\"" << x(e.ci_high) << "\" y2=\"7\" stroke=\"#036\" stroke-width=\"3\"/>";
  if (std::isfinite(e.value)) os << "<circle cx=\"" << x(e.value) << "\" cy=\"7\" r=\"3\" fill=\"#000\"/>";
  os << "</svg>";
  return os.str();
}

std::string td(const std::string& s) { return "<td>" + html_escape(s) + "</td>"; }

void html_members(std::ostringstream& os, const FleetResult& f) {
  os << "<h2>Members</h2><table><tr><th>member</th><th>status</th><th>GPU</th><th>group</th><th>exit</th><th>detail</th></tr>\n";
  for (const auto& m : f.members)
    os << "<tr class=\"" << to_string(m.status) << "\">" << td(member_name(m)) << td(to_string(m.status))
       << td(m.device ? m.device->model + " " + m.device->uuid : "-") << td(m.group) << td(m.exit_code ? std::to_string(*m.exit_code) : "-")
       << td(m.detail) << "</tr>\n";
  os << "</table>\n";
}

void html_intervals(std::ostringstream& os, const FleetResult& f) {
  os << "<h2>P95 slowdown per member</h2><p>Axis −20% to +100%; grey: 0, red: the cutoff; the bar is the interval, "
        "the dot the estimate.</p><table><tr><th>member</th><th>tenant</th><th>scenario / mode</th><th>verdict</th>"
        "<th>P95 slowdown [CI]</th><th></th></tr>\n";
  for (const auto& m : f.members)
    for (const auto& t : m.tenants) {
      if (!t.p95_slowdown) continue;
      os << "<tr>" << td(member_name(m)) << td(t.tenant) << td(t.scenario + " / " + t.mode) << td(to_string(t.verdict))
         << td(p95_words(t.p95_slowdown)) << "<td>" << interval_svg(*t.p95_slowdown, t.cutoff) << "</td></tr>\n";
    }
  os << "</table>\n";
}

}  // namespace

std::string fleet_html(const FleetResult& f) {
  std::ostringstream os;
  os << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>interference-bench fleet</title><style>"
        "body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
        "tr.ok td:nth-child(2){color:#060}tr.inconclusive td:nth-child(2){color:#960}"
        "td:nth-child(2){color:#c00}</style></head><body>\n<h1>interference-bench fleet</h1>\n<p>"
     << html_escape("exit code " + std::to_string(f.summary.exit_code) + " (" + fleet_exit_words(f.summary.exit_code) + "): " +
                    std::to_string(f.summary.members) + " members, " + std::to_string(f.summary.ok) + " ok, " +
                    std::to_string(f.summary.inconclusive) + " inconclusive, " + std::to_string(f.summary.failed) +
                    " counting against the fleet")
     << "</p>\n<h2>Worst GPUs</h2><table><tr><th>rank</th><th>member</th><th>GPU</th><th>worst robust z</th>"
        "<th>worst P95 slowdown</th><th>figure</th></tr>\n";
  for (std::size_t i = 0; i < f.worst.size(); ++i) {
    const auto& w = f.worst[i];
    os << "<tr>" << td(std::to_string(i + 1)) << td(w.member) << td(w.model + " " + w.uuid) << td(formatted("%.1f", w.worst_z))
       << td(w.worst_p95_slowdown ? signed_percent(*w.worst_p95_slowdown) : "n/a") << td(w.worst_figure) << "</tr>\n";
  }
  os << "</table>\n<h2>Stragglers</h2><ul>\n";
  for (const auto& s : f.stragglers)
    os << "<li>" << html_escape(s.member + (s.worse ? " (worse): " : " (better, not counted): ") + s.evidence) << "</li>\n";
  if (f.stragglers.empty()) os << "<li>none</li>\n";
  os << "</ul>\n";
  html_members(os, f);
  html_intervals(os, f);
  os << "</body></html>\n";
  return os.str();
}

}  // namespace ib
