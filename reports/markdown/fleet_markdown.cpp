#include "reports/markdown/fleet_markdown.h"

#include "harness/core/text.h"
#include "reports/writer_common.h"

#include <sstream>

namespace ib {

namespace {

void members_table(std::ostringstream& os, const FleetResult& f) {
  os << "\n## Members\n\n| member | status | GPU | group | exit | detail |\n|---|---|---|---|---|---|\n";
  for (const auto& m : f.members)
    os << "| " << markdown_cell(member_name(m), 400) << (m.expected ? "" : " (not expected)") << " | " << to_string(m.status) << " | "
       << markdown_cell(m.device ? m.device->model + (m.device->uuid.empty() ? "" : " " + m.device->uuid) : "-", 400) << " | "
       << markdown_cell(m.group.empty() ? "-" : m.group, 400) << " | " << (m.exit_code ? std::to_string(*m.exit_code) : "-") << " | "
       << markdown_cell(m.detail, 400) << " |\n";
}

void verdicts_table(std::ostringstream& os, const FleetResult& f) {
  os << "\n## Verdicts per member\n\n| member | tenant | scenario | mode | verdict | P95 slowdown [CI] | cutoff | "
        "exclusive throughput |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& m : f.members)
    for (const auto& t : m.tenants)
      os << "| " << markdown_cell(member_name(m), 400) << " | " << markdown_cell(t.tenant, 400) << " | " << markdown_cell(t.scenario, 400) << " | " << markdown_cell(t.mode, 400)
         << " | " << to_string(t.verdict) << " | " << p95_words(t.p95_slowdown) << " | " << percent(t.cutoff) << " | "
         << (t.exclusive_throughput ? significant(*t.exclusive_throughput, 4) + " " + markdown_cell(t.throughput_unit, 400) : "n/a")
         << " |\n";
}

}  // namespace

std::string fleet_markdown(const FleetResult& f) {
  const FleetSummary& s = f.summary;
  std::ostringstream os;
  os << "# interference-bench fleet\n\n**exit code " << s.exit_code << "** (" << fleet_exit_words(s.exit_code) << "): "
     << s.members << " members, " << s.ok << " ok, " << s.inconclusive << " inconclusive, " << s.failed
     << " counting against the fleet (" << s.missing << " missing, " << s.stragglers << " stragglers)";
  if (s.expected_nodes) os << "; " << s.expected_nodes << " nodes expected";
  if (s.expected_tasks) os << "; " << s.expected_tasks << " tasks expected";
  os << ".\n";
  if (!s.missing_nodes.empty() || !s.missing_tasks.empty()) {
    os << "\nMissing:";
    for (const auto& n : s.missing_nodes) os << " " << markdown_cell(n, 400);
    for (int i : s.missing_tasks) os << " task " << i;
    os << "\n";
  }
  os << "\n## Stragglers (|robust z| > " << significant(f.options.k, 3) << " within the group)\n\n";
  if (f.stragglers.empty()) os << "None.\n";
  for (const auto& st : f.stragglers)
    os << "- **" << markdown_cell(st.member, 400) << "** (" << (st.worse ? "worse" : "better, not counted") << "): " << markdown_cell(st.evidence, 400)
       << "\n";
  os << "\n## Worst GPUs\n\n| rank | member | GPU | worst robust z | worst P95 slowdown | figure |\n|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < f.worst.size(); ++i) {
    const auto& w = f.worst[i];
    os << "| " << i + 1 << " | " << markdown_cell(w.member, 400) << " | " << markdown_cell(w.model + (w.uuid.empty() ? "" : " " + w.uuid), 400) << " | "
       << formatted("%.1f", w.worst_z) << " | " << (w.worst_p95_slowdown ? signed_percent(*w.worst_p95_slowdown) : "n/a")
       << " | " << markdown_cell(w.worst_figure.empty() ? "-" : w.worst_figure, 400) << " |\n";
  }
  os << "\n## Groups\n\n";
  for (const auto& g : f.groups)
    os << "- " << markdown_cell(g.key, 400) << ": " << g.members.size() << " members"
       << (g.judged ? "" : " (fewer than " + std::to_string(kMinGroupForStragglers) + ": stragglers not judged)") << "\n";
  members_table(os, f);
  verdicts_table(os, f);
  return os.str();
}

}  // namespace ib
