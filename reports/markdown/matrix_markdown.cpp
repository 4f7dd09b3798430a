#include "reports/markdown/matrix_markdown.h"

#include "harness/core/text.h"
#include "reports/writer_common.h"

#include <sstream>

namespace ib {

std::string matrix_cell_words(const MatrixCell& c) {
  if (c.source == CellSource::predicted)
    return (c.p95_slowdown ? signed_percent(c.p95_slowdown->value) : std::string("n/a")) + " (predicted) " + verdict_name(c.verdict);
  if (!c.p95_slowdown) return verdict_name(c.verdict) + std::string(": ") + printable(c.verdict_reason, 60);
  return p95_words(c.p95_slowdown) + " " + verdict_name(c.verdict);
}

namespace {

std::string names(const MatrixResult& r, const std::vector<std::size_t>& ws) {
  std::string s;
  for (std::size_t w : ws) s += (s.empty() ? "" : " + ") + r.workloads[w].name;
  return s;
}

void heatmap_table(std::ostringstream& os, const MatrixResult& r) {
  const std::size_t n = r.workloads.size();
  os << "\n## P95 slowdown of each victim (row) beside each aggressor (column)\n\n| victim \\ aggressor |";
  for (const auto& w : r.workloads) os << " " << markdown_cell(w.name, 60) << " |";
  os << "\n|---|";
  for (std::size_t i = 0; i < n; ++i) os << "---|";
  os << "\n";
  for (std::size_t v = 0; v < n; ++v) {
    os << "| **" << markdown_cell(r.workloads[v].name, 60) << "** |";
    for (std::size_t a = 0; a < n; ++a) os << " " << markdown_cell(matrix_cell_words(r.cell(v, a)), 120) << " |";
    os << "\n";
  }
  os << "\nThe diagonal is a workload beside a copy of itself. A cell passes when its interval's upper bound is at "
        "most the cutoff (" << signed_percent(r.cutoff) << "), fails when its lower bound is above it, else is "
        "inconclusive; a pair may share when both of its directions pass.\n";
}

void packing_section(std::ostringstream& os, const MatrixResult& r) {
  os << "\n## May share\n\n";
  if (r.may_share.empty()) os << "No two workloads may share (both directions passing the cutoff).\n";
  for (const auto& [a, b] : r.may_share)
    os << "- " << markdown_cell(r.workloads[a].name, 80) << " + " << markdown_cell(r.workloads[b].name, 80) << "\n";
  if (!r.self_sharing.empty()) os << "\nBeside a copy of itself: " << markdown_cell(names(r, r.self_sharing), 300) << ".\n";
  if (!r.packing) return;
  const MatrixPacking& p = *r.packing;
  os << "\n## Packing\n\n**" << p.devices.size() << (p.devices.size() == 1 ? " device" : " devices") << " instead of " << p.exclusive_devices << "** (" << p.saved
     << " saved), only pairs that may share sharing one:\n\n";
  for (std::size_t d = 0; d < p.devices.size(); ++d)
    os << "- device " << d + 1 << ": " << markdown_cell(names(r, p.devices[d]), 300) << "\n";
  if (p.exclusive_price_per_hour && p.packed_price_per_hour)
    os << "\nPrice per hour: " << significant(*p.packed_price_per_hour, 4) << " packed against "
       << significant(*p.exclusive_price_per_hour, 4) << " with a device each.\n";
  if (!p.costs.empty()) {
    os << "\nSeed 000's rule per shared workload (an hour of its exclusive work: P_exclusive; shared: P_shared x (1 + "
          "median slowdown)):\n\n| workload | exclusive | shared | cheaper |\n|---|---|---|---|\n";
    for (const auto& c : p.costs)
      os << "| " << markdown_cell(r.workloads[c.workload].name, 80) << " | " << significant(c.exclusive_cost_per_hour_of_work, 4)
         << " | " << significant(c.shared_cost_per_hour_of_work, 4) << " | " << (c.shared_cheaper ? "shared" : "exclusive") << " |\n";
  }
}

// --predict's model as it was measured: each workload's curve and pressure, then the sampled cells beside the
// model's figures and the error over them (docs/methodology.md "Predicted co-location").
void prediction_section(std::ostringstream& os, const MatrixResult& r) {
  const MatrixPrediction& p = *r.prediction;
  const auto figure = [](const std::optional<double>& v) { return v ? signed_percent(*v) : std::string("-"); };
  os << "\n## Prediction\n\nEach workload's P95 slowdown beside " << p.bubble_workload << " at each level of its core share"
        " (its curve), and its pressure: the reporter (" << markdown_cell(p.reporter, 80) << ") beside it, read on the"
        " reporter's own curve as a level.\n\n| workload |";
  for (double l : p.levels) os << " at " << significant(l, 2) << " |";
  os << " pressure |\n|---|";
  for (std::size_t l = 0; l <= p.levels.size(); ++l) os << "---|";
  const auto row = [&](const std::string& name, const SensitivityCurve& c, const std::string& pressure) {
    os << "\n| " << markdown_cell(name, 80) << " |";
    for (std::size_t l = 0; l < p.levels.size(); ++l) os << " " << (l < c.slowdowns.size() ? figure(c.slowdowns[l]) : "-") << " |";
    os << " " << markdown_cell(pressure, 120) << " |";
  };
  row("reporter", p.reporter_curve, "-");
  for (std::size_t i = 0; i < p.workloads.size() && i < r.workloads.size(); ++i) {
    const PredictedWorkload& w = p.workloads[i];
    row(r.workloads[i].name, w.curve,
        w.pressure ? significant(*w.pressure, 2) + (w.pressure_clamped ? " (beyond the top level)" : "") : w.reason);
  }
  os << "\n";
  if (p.checks.empty()) {
    os << "\nNo sampled cell was measured: the prediction's error is unknown.\n";
    return;
  }
  os << "\nThe sampled pairs, measured (their cells above are the measurements):\n\n| victim | aggressor | predicted |"
        " measured | error (points) |\n|---|---|---|---|---|\n";
  for (const PredictionCheck& c : p.checks)
    os << "| " << markdown_cell(r.workloads[c.victim].name, 60) << " | " << markdown_cell(r.workloads[c.aggressor].name, 60)
       << " | " << signed_percent(c.predicted) << " | " << signed_percent(c.measured) << " | " << formatted("%+.1f", c.error_points) << " |\n";
  if (!p.error) return;
  const PredictionError& e = *p.error;
  os << "\n**Error: " << formatted("%.1f", e.mean_abs_error_points) << " points** mean absolute over " << e.cells << " cells";
  if (e.ci_low_points && e.ci_high_points)
    os << " [" << formatted("%.1f", *e.ci_low_points) << ", " << formatted("%.1f", *e.ci_high_points) << "] ("
       << significant(100.0 * e.confidence, 3) << "%, Student's t)";
  os << "; mean signed " << formatted("%+.1f", e.mean_error_points) << ", largest " << formatted("%.1f", e.max_abs_error_points) << ".\n";
}

void runs_table(std::ostringstream& os, const MatrixResult& r) {
  os << "\n## Runs\n\n| pair | outcome | seconds | exit | reason |\n|---|---|---|---|---|\n";
  for (const auto& p : r.pairs)
    os << "| " << markdown_cell(r.workloads[p.a].name + " + " + r.workloads[p.b].name, 160) << " | " << to_string(p.run.outcome)
       << " | " << significant(p.run.seconds, 3) << " | " << (p.run.exit_code ? std::to_string(*p.run.exit_code) : "-") << " | "
       << markdown_cell(p.run.reason.empty() ? "-" : p.run.reason, 200) << " |\n";
}

}  // namespace

std::string matrix_markdown(const MatrixResult& r) {
  std::ostringstream os;
  os << "# interference-bench matrix — " << r.workloads.size() << " workloads, mode " << markdown_cell(r.mode, 40)
     << ", backend " << r.backend << "\n";
  if (r.interrupted) os << "\nInterrupted: the cells below are those it finished (exit code 130).\n";
  if (r.prediction)
    os << "\nPredicted cells (--predict) come from " << r.prediction->runs << " profiling runs instead of the full matrix's "
       << r.prediction->full_matrix_runs << "; they are marked (predicted) and never measured.\n";
  heatmap_table(os, r);
  packing_section(os, r);
  if (r.prediction) prediction_section(os, r);
  if (!r.pairs.empty() && (r.pairs.front().run.outcome != MatrixRunOutcome::pending || !r.prediction)) runs_table(os, r);
  return os.str();
}

}  // namespace ib
