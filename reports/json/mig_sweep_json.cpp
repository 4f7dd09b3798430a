#include "reports/json/mig_sweep_json.h"

#include "reports/writer_common.h"

#include <fmt/format.h>

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

}  // namespace ib
