#include "reports/markdown/platform_markdown.h"

#include <sstream>

namespace ib {

std::string checks_markdown(const std::string& title, const std::vector<CheckResult>& checks) {
  std::ostringstream os;
  os << "## " << title << "\n\n| check | status | evidence | threshold | source |\n|---|---|---|---|---|\n";
  for (const auto& c : checks)
    os << "| " << c.title << " | **" << to_string(c.status) << "** | " << c.evidence << " | " << c.threshold << " | "
       << c.source << " |\n";
  return os.str();
}

std::string probe_markdown(const ProbeReport& r) {
  return checks_markdown("interference-bench probe — GPU " + std::to_string(r.device), r.checks);
}

std::string vet_markdown(const VetReport& r) {
  return checks_markdown("interference-bench vet — GPU " + std::to_string(r.device), r.checks) + "\n**" +
         to_string(r.verdict) + "**" + (r.interrupted ? " (interrupted: only the steps above ran) — exit code 130" : "") +
         "\n";
}

std::string sustain_markdown(const SustainReport& r) {
  std::ostringstream os;
  os << "## interference-bench sustain — " << r.duration_s << " s\n\n**" << to_string(r.verdict) << "**\n\n";
  for (const auto& line : r.evidence) os << "- " << line << "\n";
  return os.str();
}

}  // namespace ib
