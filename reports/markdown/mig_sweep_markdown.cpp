#include "reports/markdown/mig_sweep_markdown.h"

#include "harness/core/text.h"
#include "reports/writer_common.h"

#include <sstream>

namespace ib {

namespace {

void entries_table(std::ostringstream& os, const std::vector<SweepLayout>& entries, bool priced) {
  os << "\n| entry | outcome | tenants passing | STP |" << (priced ? " price | STP per price |" : "")
     << " throttled | power (colocated) | tenants: P95 slowdown [CI] on their instance | reason |\n|---|---|---|---|"
     << (priced ? "---|---|" : "") << "---|---|---|---|\n";
  for (const auto& l : entries) {
    std::string tenants;
    for (const auto& t : l.tenants)
      tenants += (tenants.empty() ? "" : "; ") + t.tenant + " on " + t.profile + ": " + std::string(to_string(t.verdict)) +
                 " " + p95_words(t.p95_slowdown);
    os << "| " << markdown_cell(l.name, 300) << " | " << to_string(l.outcome) << " | " << l.passing << " | "
       << (l.stp ? significant(*l.stp, 3) : "n/a") << " | ";
    if (priced)
      os << (l.price ? significant(*l.price, 4) : "n/a") << " | " << (l.stp_per_price ? significant(*l.stp_per_price, 3) : "n/a")
         << " | ";
    os << (l.throttled_fraction ? percent(*l.throttled_fraction) : "n/a") << " | " << markdown_cell(sweep_power_words(l.power), 300) << " | "
       << markdown_cell(tenants.empty() ? "-" : tenants, 300) << " | " << markdown_cell(l.reason.empty() ? "-" : l.reason, 300) << " |\n";
  }
}

void apply_section(std::ostringstream& os, const MigSweepResult& r) {
  const auto& rec = *r.recommendation;
  std::string gres;
  for (const auto& [profile, n] : mig_profile_counts(rec.profiles)) gres += (gres.empty() ? "" : ",") + ("gpu:" + profile + ":" + std::to_string(n));
  os << "\n## Applying it\n\n`mig-parted.yaml` holds the layout as the config `" << kMigPartedConfigName
     << "` (interference-bench never changes MIG itself):\n\n```sh\nnvidia-mig-parted apply -f mig-parted.yaml -c "
     << kMigPartedConfigName << "\n# or with the GPU operator: add the config to the MIG manager's ConfigMap, then\n"
     << "kubectl label node " << (r.host.empty() ? "NODE" : r.host) << " nvidia.com/mig.config=" << kMigPartedConfigName
     << " --overwrite\n```\n\nSlurm (slurm.conf; `AutoDetect=nvml` in gres.conf finds the instances, and `slurmd -G` "
        "shows the type names it gives them):\n\n```\nNodeName="
     << (r.host.empty() ? "NODE" : r.host) << " Gres=" << gres << "\n```\n";
}

}  // namespace

std::string mig_sweep_markdown(const MigSweepResult& r) {
  std::ostringstream os;
  os << "# interference-bench mig-sweep — GPU " << r.device << " (" << markdown_cell(r.gpu_name, 300) << ")\n\n";
  if (r.recommendation)
    os << "**Recommended layout: " << markdown_cell(r.recommendation->layout, 300) << "**" << (r.recommendation->distinguishable ? "" : " (not distinguishable from the runner-up)")
       << " — " << markdown_cell(r.recommendation->reason, 300) << ".\n";
  else
    os << "**No layout was measured.**\n";
  if (r.interrupted) os << "\nInterrupted: the layouts below are those it finished (exit code 130).\n";
  if (!r.preexisting.empty()) os << "\nPre-existing instances (never touched): " << markdown_cell(joined(r.preexisting, ", "), 300) << ".\n";
  os << "\n" << markdown_cell(sweep_yardstick_words(r.yardstick), 300) << "\n";
  if (!r.references.empty()) {
    os << "\n## References: every tenant on the largest instance\n\nWhat the layouts are weighed against: the same "
          "tenants sharing one instance of the largest profile (the whole GPU's equivalent in MIG mode), time-sliced "
          "and as MPS clients; their slowdowns are against each tenant alone on that instance.\n";
    entries_table(os, r.references, !r.prices.empty());
  }
  os << "\n## Layouts\n";
  entries_table(os, r.layouts, !r.prices.empty());
  if (r.recommendation) apply_section(os, r);
  return os.str();
}

}  // namespace ib
