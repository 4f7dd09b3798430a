#include "reports/mig_sweep_writer.h"

#include "harness/core/text.h"
#include "reports/html_writer.h"
#include "reports/json_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

namespace ib {

using ojson = nlohmann::ordered_json;

namespace {

ojson tenant_json(const SweepTenant& t) {
  ojson p95 = nullptr;
  if (t.p95_slowdown)
    p95 = {{"value", json_number(t.p95_slowdown->value)},
           {"ci_low", json_number(t.p95_slowdown->ci_low)},
           {"ci_high", json_number(t.p95_slowdown->ci_high)}};
  return {{"tenant", t.tenant},  {"workload", t.workload}, {"profile", t.profile}, {"verdict", to_string(t.verdict)},
          {"verdict_reason", t.verdict_reason}, {"p95_slowdown", p95}, {"cutoff", json_number(t.cutoff)}};
}

ojson power_json(const std::optional<SweepPower>& p) {
  if (!p) return nullptr;
  return {{"readings", p->readings},
          {"median_w", optional_json_number(p->median_w)},
          {"max_w", optional_json_number(p->max_w)},
          {"limit_w", optional_json_number(p->limit_w)},
          {"power_capped_fraction", optional_json_number(p->power_capped_fraction)}};
}

ojson layout_json(const SweepLayout& l) {
  ojson tenants = ojson::array();
  for (const auto& t : l.tenants) tenants.push_back(tenant_json(t));
  return {{"sharing", to_string(l.sharing)},
          {"name", l.name},
          {"profiles", l.profiles},
          {"outcome", to_string(l.outcome)},
          {"reason", l.reason},
          {"exit_code", l.exit_code ? ojson(*l.exit_code) : ojson(nullptr)},
          {"results_file", l.results_file},
          {"seconds", json_number(l.seconds)},
          {"passing", l.passing},
          {"stp", l.stp ? json_number(*l.stp) : ojson(nullptr)},
          {"throttled_fraction", optional_json_number(l.throttled_fraction)},
          {"power", power_json(l.power)},
          {"price", optional_json_number(l.price)},
          {"stp_per_price", optional_json_number(l.stp_per_price)},
          {"tenants", tenants}};
}

ojson yardstick_json(const SweepYardstick& y) {
  return {{"source", to_string(y.source)},
          {"profile", y.profile},
          {"whole_gpu_largest", y.whole_gpu_largest},
          {"uuid", y.uuid},
          {"baseline_file", y.baseline_file},
          {"outcome", to_string(y.outcome)},
          {"reason", y.reason},
          {"exit_code", y.exit_code ? ojson(*y.exit_code) : ojson(nullptr)},
          {"seconds", json_number(y.seconds)}};
}

// One sentence: what every layout's slowdowns and STP are against.
std::string yardstick_words(const SweepYardstick& y) {
  if (y.source == YardstickSource::baseline)
    return "Every layout's slowdowns and STP are against one yardstick: the exclusive phases of the --baseline file " +
           y.baseline_file + ".";
  const std::string on = "each tenant alone once on one " + y.profile + " instance" + (y.uuid.empty() ? "" : " (" + y.uuid + ")");
  if (y.outcome != LayoutOutcome::measured && y.outcome != LayoutOutcome::pending)
    return "No common yardstick (" + (y.profile.empty() ? std::string("no instance for it") : on) + "): " +
           std::string(to_string(y.outcome)) + (y.reason.empty() ? "" : ", " + y.reason) +
           ". The layouts are not run against their own largest instances, which would not be comparable; give one with "
           "--baseline.";
  return "Every layout's slowdowns and STP are against one yardstick: " + on +
         (y.whole_gpu_largest ? ", the GPU's largest" : " (" + y.reason + ")") +
         (y.baseline_file.empty() ? "" : ", read by each layout's run as its --baseline " + y.baseline_file) + ".";
}

// The recommended layout's profiles counted, in the order they first appear.
std::vector<std::pair<std::string, int>> profile_counts(const std::vector<std::string>& profiles) {
  std::vector<std::pair<std::string, int>> out;
  for (const std::string& p : profiles) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == p; });
    if (it == out.end()) out.push_back({p, 1});
    else ++it->second;
  }
  return out;
}

std::string power_words(const std::optional<SweepPower>& p) {
  if (!p || !p->median_w) return "n/a";
  std::string w = significant(*p->median_w, 3) + " W (max " + significant(*p->max_w, 3) + ")";
  if (p->limit_w) w += " of " + significant(*p->limit_w, 3) + " W";
  if (p->power_capped_fraction) w += ", power-capped " + percent(*p->power_capped_fraction);
  return w;
}

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
    os << (l.throttled_fraction ? percent(*l.throttled_fraction) : "n/a") << " | " << markdown_cell(power_words(l.power), 300) << " | "
       << markdown_cell(tenants.empty() ? "-" : tenants, 300) << " | " << markdown_cell(l.reason.empty() ? "-" : l.reason, 300) << " |\n";
  }
}

void apply_section(std::ostringstream& os, const MigSweepResult& r) {
  const auto& rec = *r.recommendation;
  std::string gres;
  for (const auto& [profile, n] : profile_counts(rec.profiles)) gres += (gres.empty() ? "" : ",") + ("gpu:" + profile + ":" + std::to_string(n));
  os << "\n## Applying it\n\n`mig-parted.yaml` holds the layout as the config `" << kMigPartedConfigName
     << "` (interference-bench never changes MIG itself):\n\n```sh\nnvidia-mig-parted apply -f mig-parted.yaml -c "
     << kMigPartedConfigName << "\n# or with the GPU operator: add the config to the MIG manager's ConfigMap, then\n"
     << "kubectl label node " << (r.host.empty() ? "NODE" : r.host) << " nvidia.com/mig.config=" << kMigPartedConfigName
     << " --overwrite\n```\n\nSlurm (slurm.conf; `AutoDetect=nvml` in gres.conf finds the instances, and `slurmd -G` "
        "shows the type names it gives them):\n\n```\nNodeName="
     << (r.host.empty() ? "NODE" : r.host) << " Gres=" << gres << "\n```\n";
}

}  // namespace

ojson mig_sweep_to_json(const MigSweepResult& r) {
  ojson layouts = ojson::array(), references = ojson::array(), prices = ojson::object();
  for (const auto& l : r.layouts) layouts.push_back(layout_json(l));
  for (const auto& l : r.references) references.push_back(layout_json(l));
  for (const auto& [profile, price] : r.prices) prices[profile] = json_number(price);
  ojson rec = nullptr;
  if (r.recommendation)
    rec = {{"layout", r.recommendation->layout},         {"profiles", r.recommendation->profiles},
           {"reason", r.recommendation->reason},         {"distinguishable", r.recommendation->distinguishable},
           {"runner_up", r.recommendation->runner_up},   {"mig_parted_config", kMigPartedConfigName}};
  return {{"schema_version", r.schema_version},
          {"meta", {{"tool", "interference-bench"}, {"command", "mig-sweep"}, {"version", r.version},
                    {"git_sha", r.git_sha}, {"argv", r.argv}, {"start_time", r.start_time}, {"host", r.host}}},
          {"scenario_file", r.scenario_file},
          {"backend", r.backend},
          {"device", {{"index", r.device}, {"name", r.gpu_name}, {"uuid", r.gpu_uuid},
                      {"pci_device_id", r.pci_device_id ? ojson(fmt::format("0x{:08X}", *r.pci_device_id)) : ojson(nullptr)}}},
          {"layouts_source", r.layouts_source},
          {"budget_s", json_number(r.budget_s)},
          {"preexisting_instances", r.preexisting},
          {"prices_file", r.prices_file},
          {"prices", prices},
          {"yardstick", yardstick_json(r.yardstick)},
          {"references", references},
          {"layouts", layouts},
          {"recommendation", rec},
          {"interrupted", r.interrupted},
          {"exit_code", r.exit_code}};
}

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
  os << "\n" << markdown_cell(yardstick_words(r.yardstick), 300) << "\n";
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

namespace {

// One entry's rows: its figures once (spanning its tenants' rows), then a row per tenant.
void html_entry_rows(std::ostringstream& os, const SweepLayout& l) {
  const std::size_t rows = std::max<std::size_t>(1, l.tenants.size());
  const std::string span = "<td rowspan=\"" + std::to_string(rows) + "\">";
  for (std::size_t i = 0; i < rows; ++i) {
    os << "<tr>";
    if (i == 0)
      os << span << html_escape(l.name) << "</td>" << span
         << html_escape(std::string(to_string(l.outcome)) + (l.reason.empty() ? "" : ": " + l.reason)) << "</td>" << span
         << l.passing << "</td>" << span << html_escape(l.stp ? significant(*l.stp, 3) : "n/a") << "</td>" << span
         << html_escape(l.stp_per_price ? significant(*l.stp_per_price, 3) : "n/a") << "</td>" << span
         << html_escape(power_words(l.power)) << "</td>";
    if (i < l.tenants.size()) {
      const auto& t = l.tenants[i];
      os << "<td>" << html_escape(t.tenant) << "</td><td>" << html_escape(t.profile) << "</td><td>" << to_string(t.verdict)
         << "</td><td>" << html_escape(p95_words(t.p95_slowdown)) << "</td>";
    } else {
      os << "<td colspan=\"4\"></td>";
    }
    os << "</tr>\n";
  }
}

}  // namespace

std::string mig_sweep_html(const MigSweepResult& r) {
  std::ostringstream os;
  os << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>interference-bench mig-sweep</title><style>"
        "body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
        "</style></head><body><h1>"
     << html_escape("interference-bench mig-sweep — GPU " + std::to_string(r.device) + " (" + r.gpu_name + ")") << "</h1><p>"
     << html_escape(r.recommendation ? "Recommended layout: " + r.recommendation->layout + " — " + r.recommendation->reason
                                     : std::string("No layout was measured."))
     << "</p>\n<p>" << html_escape(yardstick_words(r.yardstick)) << "</p>\n";
  const char* header = "<table><tr><th>entry</th><th>outcome</th><th>passing</th><th>STP</th><th>STP per price</th>"
                       "<th>power (colocated)</th><th>tenant</th><th>instance</th><th>verdict</th><th>P95 slowdown [CI]</th></tr>\n";
  if (!r.references.empty()) {
    os << "<h2>References: every tenant on the largest instance</h2>" << header;
    for (const auto& l : r.references) html_entry_rows(os, l);
    os << "</table>\n";
  }
  os << "<h2>Layouts</h2>" << header;
  for (const auto& l : r.layouts) html_entry_rows(os, l);
  os << "</table></body></html>\n";
  return os.str();
}

std::string mig_parted_yaml(const MigSweepResult& r) {
  std::ostringstream os;
  os << "# interference-bench mig-sweep: the recommended layout for " << printable(r.scenario_file, 200) << " on GPU "
     << r.device << " (" << printable(r.gpu_name, 80) << ")\n# " << printable(r.recommendation->reason, 400)
     << "\n# Apply: nvidia-mig-parted apply -f mig-parted.yaml -c " << kMigPartedConfigName << "\n";
  // mig-parted applies a whole GPU's layout: the instances that were there when the sweep ran (and that it measured
  // beside) are not in it, and applying it replaces them.
  if (!r.preexisting.empty())
    os << "# Measured beside pre-existing instances this config leaves out (applying it replaces them): "
       << printable(joined(r.preexisting, ", "), 400) << "\n";
  os << "version: v1\nmig-configs:\n  "
     << kMigPartedConfigName << ":\n";
  if (r.pci_device_id) os << "    - device-filter: \"" << fmt::format("0x{:08X}", *r.pci_device_id) << "\"\n      devices: [" << r.device << "]\n";
  else os << "    # device-filter left out: NVML gave no PCI device id\n    - devices: [" << r.device << "]\n";
  os << "      mig-enabled: true\n      mig-devices:\n";
  for (const auto& [profile, n] : profile_counts(r.recommendation->profiles)) os << "        \"" << profile << "\": " << n << "\n";
  return os.str();
}

}  // namespace ib
