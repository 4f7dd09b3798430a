#include "reports/json/matrix_json.h"

#include "reports/json/matrix_prediction_json.h"
#include "reports/writer_common.h"

namespace ib {

using ojson = nlohmann::ordered_json;

ojson matrix_run_to_json(const MatrixRun& r) {
  return {{"outcome", to_string(r.outcome)},
          {"reason", r.reason},
          {"exit_code", r.exit_code ? ojson(*r.exit_code) : ojson(nullptr)},
          {"results_file", r.results_file},
          {"seconds", json_number(r.seconds)}};
}

namespace {

ojson cell_json(const MatrixCell& c) {
  return {{"victim", c.victim},
          {"aggressor", c.aggressor},
          {"source", to_string(c.source)},
          {"p95_slowdown", optional_estimate_json(c.p95_slowdown)},
          {"median_slowdown", optional_json_number(c.median_slowdown)},
          {"verdict", verdict_name(c.verdict)},
          {"verdict_reason", c.verdict_reason}};
}

ojson packing_json(const std::optional<MatrixPacking>& p) {
  if (!p) return nullptr;
  ojson costs = ojson::array();
  for (const auto& c : p->costs)
    costs.push_back({{"workload", c.workload},
                     {"exclusive_cost_per_hour_of_work", json_number(c.exclusive_cost_per_hour_of_work)},
                     {"shared_cost_per_hour_of_work", json_number(c.shared_cost_per_hour_of_work)},
                     {"shared_cheaper", c.shared_cheaper}});
  return {{"devices", p->devices},
          {"exclusive_devices", p->exclusive_devices},
          {"saved", p->saved},
          {"costs", costs},
          {"exclusive_price_per_hour", optional_json_number(p->exclusive_price_per_hour)},
          {"packed_price_per_hour", optional_json_number(p->packed_price_per_hour)}};
}

}  // namespace

ojson matrix_to_json(const MatrixResult& r) {
  ojson workloads = ojson::array(), pairs = ojson::array(), cells = ojson::array(), share = ojson::array();
  for (const auto& w : r.workloads) workloads.push_back({{"name", w.name}, {"workload", w.workload}, {"tenant", w.tenant}});
  for (const auto& p : r.pairs) pairs.push_back({{"a", p.a}, {"b", p.b}, {"run", matrix_run_to_json(p.run)}});
  for (const auto& c : r.cells) cells.push_back(cell_json(c));
  for (const auto& [a, b] : r.may_share) share.push_back({a, b});
  return {{"schema_version", r.schema_version},
          {"meta", {{"tool", "interference-bench"}, {"command", "matrix"}, {"version", r.version},
                    {"git_sha", r.git_sha}, {"argv", r.argv}, {"start_time", r.start_time}, {"host", r.host}}},
          {"backend", r.backend},
          {"mode", r.mode},
          {"device", r.device},
          {"cutoff", json_number(r.cutoff)},
          {"phase_s", optional_json_number(r.phase_s)},
          {"rounds", r.rounds ? ojson(*r.rounds) : ojson(nullptr)},
          {"budget_s", json_number(r.budget_s)},
          {"price_exclusive", optional_json_number(r.price_exclusive)},
          {"price_shared", optional_json_number(r.price_shared)},
          {"workloads", workloads},
          {"pairs", pairs},
          {"cells", cells},
          {"may_share", share},
          {"self_sharing", r.self_sharing},
          {"packing", packing_json(r.packing)},
          {"prediction", r.prediction ? matrix_prediction_to_json(*r.prediction) : ojson(nullptr)},
          {"interrupted", r.interrupted},
          {"exit_code", r.exit_code}};
}

}  // namespace ib
