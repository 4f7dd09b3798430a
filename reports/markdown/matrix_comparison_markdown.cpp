#include "reports/markdown/matrix_comparison_markdown.h"

#include "harness/core/text.h"
#include "reports/writer_common.h"

#include <cmath>
#include <sstream>

namespace ib {

namespace {

std::string change_points(double v) { return std::isfinite(v) ? formatted("%+.1f", v * 100.0) : std::string("n/a"); }

std::string cell_figure(const std::optional<Estimate>& e) {
  if (!e) return "n/a";
  return signed_percent(e->value) + " [" + signed_percent(e->ci_low) + ", " + signed_percent(e->ci_high) + "]";
}

std::string packing_words(const std::optional<std::size_t>& d, std::size_t workloads) {
  return (d ? std::to_string(*d) + " devices" : std::string("no packing")) + " for " + std::to_string(workloads) + " workloads";
}

void cell_change_rows(std::ostringstream& os, const MatrixComparison& c) {
  os << "| victim | aggressor | BASE p95 [95% CI] | NEW p95 [95% CI] | change (points) [95% CI] | verdict |\n"
        "|---|---|---|---|---|---|\n";
  for (const auto& x : c.cells)
    os << "| " << markdown_cell(x.victim, 60) << " | " << markdown_cell(x.aggressor, 60) << " | " << cell_figure(x.base) << " "
       << verdict_name(x.base_verdict) << " | " << cell_figure(x.next) << " " << verdict_name(x.next_verdict) << " | "
       << change_points(x.change.value) << " [" << change_points(x.change.ci_low) << ", " << change_points(x.change.ci_high) << "] | **"
       << to_string(x.verdict) << "** |\n";
}

void sharing_lines(std::ostringstream& os, const char* what, const std::vector<MatrixSharingChange>& pairs) {
  for (const auto& s : pairs)
    os << "- " << what << ": " << markdown_cell(s.a == s.b ? s.a + " beside a copy of itself" : s.a + " + " + s.b, 200)
       << (s.decided ? "" : " (undecided)") << " — NEW: " << markdown_cell(s.reason, 300) << "\n";
}

}  // namespace

std::string matrix_comparison_markdown(const MatrixComparison& c) {
  std::ostringstream os;
  os << "## interference-bench compare (matrices)\n\nBASE " << c.base_file << ", NEW " << c.next_file
     << ". Each cell's P95 slowdown change, NEW - BASE in points, with a 95% interval from the two cells' intervals; a "
        "change is a regression beyond " << formatted("%.1f", c.max_regression * 100.0)
     << " points, worse when the whole interval lies beyond it.\n\n";
  if (c.base_mode != c.next_mode)
    os << "The matrices ran under different modes (" << markdown_cell(c.base_mode, 40) << ", " << markdown_cell(c.next_mode, 40)
       << "): no cell is compared.\n\n";
  cell_change_rows(os, c);
  os << "\n";
  for (const auto& x : c.cells)
    if (x.verdict != ChangeClass::same)
      os << "- " << markdown_cell(x.victim + " beside " + x.aggressor, 200) << ": " << to_string(x.verdict) << " — "
         << markdown_cell(x.reason, 300) << "\n";
  sharing_lines(os, "stopped sharing", c.stopped_sharing);
  sharing_lines(os, "started sharing", c.started_sharing);
  for (const auto& w : c.only_in_base) os << "- only in BASE: " << markdown_cell(w, 200) << "\n";
  for (const auto& w : c.only_in_next) os << "- only in NEW: " << markdown_cell(w, 200) << "\n";
  os << "\nPacking: " << packing_words(c.base_devices, c.base_workloads) << " in BASE, " << packing_words(c.next_devices, c.next_workloads)
     << " in NEW.\n\n**" << c.better << " better, " << c.same << " same, " << c.worse << " worse, " << c.inconclusive
     << " inconclusive; " << c.stopped_sharing.size() << " pairs stopped sharing, " << c.started_sharing.size()
     << " started** — exit code " << c.exit_code << "\n";
  return os.str();
}

}  // namespace ib
