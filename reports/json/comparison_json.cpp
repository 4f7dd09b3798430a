#include "reports/json/comparison_json.h"

#include "reports/writer_common.h"

namespace ib {

using ojson = nlohmann::ordered_json;

namespace {

ojson identity_json(const TenantIdentity& id) {
  return {{"scenario", id.scenario},
          {"mode", id.mode},
          {"tenant", id.tenant},
          {"workload", id.workload},
          {"params", ojson::parse(id.params)}};
}

ojson metric_json(const MetricChange& m) {
  return {{"base", json_number(m.base)},
          {"new", json_number(m.next)},
          {"change", json_number(m.change.value)},
          {"ci_low", json_number(m.change.ci_low)},
          {"ci_high", json_number(m.change.ci_high)},
          {"confidence", m.change.confidence},
          {"change_kind", m.metric == ComparedMetric::throughput ? "new / base - 1" : "new - base (slowdown points)"},
          {"resolution", json_number(m.resolution)},
          {"base_resolution", json_number(m.base_resolution)},
          {"new_resolution", json_number(m.next_resolution)},
          {"verdict", to_string(m.verdict)},
          {"reason", m.reason}};
}

}  // namespace

ojson comparison_to_json(const Comparison& c) {
  ojson tenants = ojson::array();
  for (const auto& t : c.tenants) {
    ojson j = identity_json(t.id);
    j["basis"] = t.basis;
    j["n"] = {{"base", {{"exclusive", t.base_exclusive_n}, {"colocated", t.base_colocated_n}}},
              {"new", {{"exclusive", t.next_exclusive_n}, {"colocated", t.next_colocated_n}}}};
    ojson metrics = ojson::object();
    for (const auto& m : t.metrics) metrics[to_string(m.metric)] = metric_json(m);
    j["metrics"] = metrics;
    j["verdict"] = to_string(t.verdict);
    j["reason"] = t.reason;
    tenants.push_back(std::move(j));
  }
  ojson only_base = ojson::array(), only_next = ojson::array();
  for (const auto& id : c.only_in_base) only_base.push_back(identity_json(id));
  for (const auto& id : c.only_in_next) only_next.push_back(identity_json(id));
  return {{"kind", "comparison"},
          {"base", c.base_file},
          {"new", c.next_file},
          {"max_regression", c.max_regression},
          {"bootstrap", {{"seed", c.seed}, {"resamples", c.resamples}, {"confidence", 0.95}}},
          {"tenants", tenants},
          {"only_in_base", only_base},
          {"only_in_new", only_next},
          {"summary",
           {{"better", c.better}, {"same", c.same}, {"worse", c.worse}, {"inconclusive", c.inconclusive},
            {"exit_code", c.exit_code}}}};
}

}  // namespace ib
