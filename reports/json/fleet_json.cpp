#include "reports/json/fleet_json.h"

#include "reports/json/platform_json.h"
#include "reports/writer_common.h"

namespace ib {

using ojson = nlohmann::ordered_json;

namespace {

ojson optional_int(const std::optional<int>& v) { return v ? ojson(*v) : ojson(nullptr); }
ojson optional_double(const std::optional<double>& v) { return v ? json_number(*v) : ojson(nullptr); }
ojson text_or_null(const std::string& s) { return s.empty() ? ojson(nullptr) : ojson(s); }

ojson device_json(const std::optional<FleetDevice>& d) {
  if (!d) return nullptr;
  return {{"kind", to_string(d->kind)}, {"model", d->model}, {"index", optional_int(d->index)},
          {"uuid", text_or_null(d->uuid)}, {"driver", text_or_null(d->driver)}, {"mig", text_or_null(d->mig)}};
}

ojson figure_json(const FleetTenantFigure& f) {
  ojson p95 = nullptr;
  if (f.p95_slowdown)
    p95 = {{"value", json_number(f.p95_slowdown->value)},
           {"ci_low", json_number(f.p95_slowdown->ci_low)},
           {"ci_high", json_number(f.p95_slowdown->ci_high)},
           {"confidence", json_number(f.p95_slowdown->confidence)}};
  return {{"scenario", f.scenario},
          {"mode", f.mode},
          {"tenant", f.tenant},
          {"workload", f.workload},
          {"verdict", to_string(f.verdict)},
          {"verdict_reason", f.verdict_reason},
          {"p95_slowdown", p95},
          {"cutoff", json_number(f.cutoff)},
          {"exclusive_throughput", optional_double(f.exclusive_throughput)},
          {"throughput_unit", f.throughput_unit}};
}

ojson member_json(const FleetMember& m) {
  ojson tenants = ojson::array(), checks = ojson::array();
  for (const auto& f : m.tenants) tenants.push_back(figure_json(f));
  for (const auto& c : m.checks) checks.push_back(check_json(c));
  return {{"name", member_name(m)},
          {"node", text_or_null(m.node)},
          {"task_index", optional_int(m.task_index)},
          {"scheduler", text_or_null(m.scheduler)},
          {"job_id", text_or_null(m.job_id)},
          {"array_job_id", text_or_null(m.array_job_id)},
          {"status", to_string(m.status)},
          {"detail", m.detail},
          {"expected", m.expected},
          {"exit_code", optional_int(m.exit_code)},
          {"files", m.files},
          {"device", device_json(m.device)},
          {"group", text_or_null(m.group)},
          {"worst_z", json_number(m.worst_z)},
          {"tenants", tenants},
          {"checks", checks}};
}

ojson straggler_json(const FleetStraggler& s) {
  return {{"member", s.member},   {"node", s.node},
          {"group", s.group},     {"metric", to_string(s.metric)},
          {"scenario", s.scenario}, {"mode", s.mode},
          {"tenant", s.tenant},   {"unit", s.unit},
          {"value", json_number(s.value)}, {"group_median", json_number(s.group_median)},
          {"group_mad", json_number(s.group_mad)}, {"z", json_number(s.z)},
          {"group_values", s.group_values}, {"worse", s.worse},
          {"evidence", s.evidence}};
}

ojson summary_json(const FleetSummary& s) {
  return {{"members", s.members},       {"expected_nodes", s.expected_nodes}, {"expected_tasks", s.expected_tasks},
          {"ok", s.ok},                 {"inconclusive", s.inconclusive},     {"failed", s.failed},
          {"missing", s.missing},       {"stragglers", s.stragglers},         {"missing_nodes", s.missing_nodes},
          {"missing_tasks", s.missing_tasks}, {"exit_code", s.exit_code}};
}

}  // namespace

ojson fleet_to_json(const FleetResult& f) {
  ojson j;
  j["schema_version"] = f.schema_version;
  j["meta"] = {{"tool", "interference-bench"}, {"command", "merge"},  {"version", f.version},
               {"git_sha", f.git_sha},         {"argv", f.argv},      {"start_time", f.start_time},
               {"inputs", f.inputs},           {"expect_nodes_file", text_or_null(f.expect_nodes_file)},
               {"straggler_bound", {{"k", json_number(f.options.k)},
                                    {"min_throughput_change", json_number(f.options.min_throughput_change)},
                                    {"min_slowdown_change", json_number(f.options.min_slowdown_change)},
                                    {"min_group", kMinGroupForStragglers}}},
               {"worst", f.options.worst}};
  j["members"] = ojson::array();
  for (const auto& m : f.members) j["members"].push_back(member_json(m));
  j["groups"] = ojson::array();
  for (const auto& g : f.groups)
    j["groups"].push_back({{"key", g.key}, {"model", g.model}, {"driver", text_or_null(g.driver)},
                           {"mig", text_or_null(g.mig)}, {"members", g.members}, {"judged", g.judged}});
  j["stragglers"] = ojson::array();
  for (const auto& s : f.stragglers) j["stragglers"].push_back(straggler_json(s));
  j["worst"] = ojson::array();
  for (const auto& w : f.worst)
    j["worst"].push_back({{"member", w.member}, {"node", w.node}, {"uuid", text_or_null(w.uuid)}, {"model", w.model},
                          {"worst_z", json_number(w.worst_z)}, {"worst_p95_slowdown", optional_double(w.worst_p95_slowdown)},
                          {"worst_figure", w.worst_figure}});
  j["summary"] = summary_json(f.summary);
  return j;
}

}  // namespace ib
