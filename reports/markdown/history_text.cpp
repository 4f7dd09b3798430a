#include "reports/markdown/history_text.h"

#include "harness/core/text.h"

#include <sstream>

namespace ib {

namespace {

std::string pct(const std::optional<double>& v) { return v ? signed_percent(*v) : std::string("n/a"); }

std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

// A matrix's own line, before its cells: the packing's devices for its workloads.
void matrix_line(std::ostringstream& os, const HistoryTenantRecord& r) {
  os << r.run.start_time << "  run " << r.run.id << "  " << short_sha(r.run.git_sha) << "  matrix/" << r.key.mode
     << "  packing " << (r.run.matrix_devices ? std::to_string(*r.run.matrix_devices) : std::string("n/a")) << " devices for "
     << (r.run.matrix_workloads ? std::to_string(*r.run.matrix_workloads) : std::string("n/a")) << " workloads\n";
}

}  // namespace

std::string history_text(const std::vector<HistoryTenantRecord>& records) {
  std::ostringstream os;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const HistoryTenantRecord& r = records[i];
    if (r.run.command == "matrix" && (i == 0 || records[i - 1].run.id != r.run.id)) matrix_line(os, r);
    os << r.run.start_time << "  run " << r.run.id << "  " << short_sha(r.run.git_sha) << "  " << printable(r.key.scenario, 80) << "/"
       << r.key.mode << "  " << printable(r.key.tenant, 80) << " (" << r.key.workload << ")  p95 " << pct(r.p95_slowdown) << " ["
       << pct(r.p95_ci_low) << ", " << pct(r.p95_ci_high) << "]  median " << pct(r.median_slowdown) << "  "
       << to_string(r.verdict) << "\n";
  }
  return os.str();
}

}  // namespace ib
