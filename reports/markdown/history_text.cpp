#include "reports/markdown/history_text.h"

#include "harness/core/text.h"

#include <sstream>

namespace ib {

namespace {

std::string pct(const std::optional<double>& v) { return v ? signed_percent(*v) : std::string("n/a"); }

std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

}  // namespace

std::string history_text(const std::vector<HistoryTenantRecord>& records) {
  std::ostringstream os;
  for (const HistoryTenantRecord& r : records) {
    os << r.run.start_time << "  run " << r.run.id << "  " << short_sha(r.run.git_sha) << "  " << printable(r.key.scenario, 80) << "/"
       << r.key.mode << "  " << printable(r.key.tenant, 80) << " (" << r.key.workload << ")  p95 " << pct(r.p95_slowdown) << " ["
       << pct(r.p95_ci_low) << ", " << pct(r.p95_ci_high) << "]  median " << pct(r.median_slowdown) << "  "
       << to_string(r.verdict) << "\n";
  }
  return os.str();
}

}  // namespace ib
