#include "reports/markdown/comparison_markdown.h"

#include "harness/core/text.h"
#include "reports/writer_common.h"

#include <cmath>
#include <sstream>

namespace ib {

namespace {

bool is_slowdown(ComparedMetric m) { return m != ComparedMetric::throughput; }

// Slowdown changes in points, throughput changes in percent.
std::string amount(ComparedMetric m, double v) {
  if (!std::isfinite(v)) return "n/a";
  return formatted("%+.1f", v * 100.0) + (is_slowdown(m) ? "" : "%");
}

std::string change_cell(const MetricChange& m) {
  return amount(m.metric, m.change.value) + " [" + amount(m.metric, m.change.ci_low) + ", " +
         amount(m.metric, m.change.ci_high) + "] " + to_string(m.verdict);
}

std::string figure(ComparedMetric m, double v) {
  if (!std::isfinite(v)) return "n/a";
  return is_slowdown(m) ? signed_percent(v) : significant(v);
}

std::string where(const TenantIdentity& id) {
  return id.scenario + " (" + id.mode + "), " + id.tenant + " [" + id.workload + " " + id.params + "]";
}

void tenant_rows(std::ostringstream& os, const Comparison& c) {
  os << "| scenario | mode | tenant | n E/C base, new | p95_slowdown base → new | p95 change (points) [95% CI] | resolves +/- "
        "(points) | median change (points) [95% CI] | throughput change [95% CI] | verdict |\n";
  os << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& t : c.tenants) {
    os << "| " << t.id.scenario << " | " << t.id.mode << " | " << t.id.tenant << " | " << t.base_exclusive_n << "/"
       << t.base_colocated_n << ", " << t.next_exclusive_n << "/" << t.next_colocated_n << " | ";
    if (t.metrics.size() == 3) {
      const MetricChange& p95 = t.metrics[0];
      os << figure(p95.metric, p95.base) << " → " << figure(p95.metric, p95.next) << " | " << change_cell(p95) << " | "
         << (std::isfinite(p95.resolution) ? formatted("%.1f", p95.resolution * 100.0) : std::string("n/a"));
      for (std::size_t k = 1; k < t.metrics.size(); ++k) os << " | " << change_cell(t.metrics[k]);
    } else {
      os << "n/a | n/a | n/a | n/a | n/a";
    }
    os << " | **" << to_string(t.verdict) << "** |\n";
  }
}

}  // namespace

std::string comparison_markdown(const Comparison& c) {
  std::ostringstream os;
  os << "## interference-bench compare\n\n";
  os << "BASE " << c.base_file << ", NEW " << c.next_file << ". A change is a regression beyond "
     << formatted("%.1f", c.max_regression * 100.0) << " slowdown points (or " << formatted("%.1f", c.max_regression * 100.0)
     << "% less colocated throughput); worse when the whole 95% CI lies beyond it (bootstrap seed " << c.seed << ", "
     << c.resamples << " resamples; each file's rounds resampled with their exclusive and colocated blocks together). "
        "\"resolves\" is the half-width of the P95 change's interval: the smallest change this pair of runs can tell.\n\n";
  tenant_rows(os, c);
  os << "\n";
  for (const auto& t : c.tenants)
    if (t.verdict != ChangeClass::same) os << "- " << where(t.id) << ": " << to_string(t.verdict) << " — " << t.reason << "\n";
  for (const auto& id : c.only_in_base) os << "- only in BASE: " << where(id) << "\n";
  for (const auto& id : c.only_in_next) os << "- only in NEW: " << where(id) << "\n";
  os << "\n**" << c.better << " better, " << c.same << " same, " << c.worse << " worse, " << c.inconclusive
     << " inconclusive** (" << c.only_in_base.size() << " only in BASE, " << c.only_in_next.size()
     << " only in NEW) — exit code " << c.exit_code << "\n";
  return os.str();
}

}  // namespace ib
