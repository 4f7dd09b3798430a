#include "reports/json/matrix_prediction_json.h"

#include "reports/json/matrix_json.h"
#include "reports/writer_common.h"

namespace ib {

using ojson = nlohmann::ordered_json;

namespace {

ojson curve_json(const SensitivityCurve& c) {
  ojson slowdowns = ojson::array(), runs = ojson::array();
  for (const auto& s : c.slowdowns) slowdowns.push_back(optional_json_number(s));
  for (const MatrixRun& r : c.runs) runs.push_back(matrix_run_to_json(r));
  return {{"p95_slowdowns", slowdowns}, {"runs", runs}};
}

ojson workload_json(const PredictedWorkload& w) {
  return {{"curve", curve_json(w.curve)},
          {"reporter_slowdown", optional_json_number(w.reporter_slowdown)},
          {"pressure", optional_json_number(w.pressure)},
          {"pressure_clamped", w.pressure_clamped},
          {"pressure_run", w.pressure_run.empty() ? ojson(nullptr) : matrix_run_to_json(w.pressure_run.front())},
          {"reason", w.reason}};
}

ojson error_json(const std::optional<PredictionError>& e) {
  if (!e) return nullptr;
  return {{"cells", e->cells},
          {"mean_abs_error_points", json_number(e->mean_abs_error_points)},
          {"ci_low_points", optional_json_number(e->ci_low_points)},
          {"ci_high_points", optional_json_number(e->ci_high_points)},
          {"confidence", json_number(e->confidence)},
          {"interval", "student_t"},
          {"mean_error_points", json_number(e->mean_error_points)},
          {"max_abs_error_points", json_number(e->max_abs_error_points)}};
}

}  // namespace

nlohmann::ordered_json matrix_prediction_to_json(const MatrixPrediction& p) {
  ojson levels = ojson::array(), workloads = ojson::array(), sampled = ojson::array(), checks = ojson::array();
  for (double l : p.levels) levels.push_back(json_number(l));
  for (const PredictedWorkload& w : p.workloads) workloads.push_back(workload_json(w));
  for (std::size_t i = 0; i < p.sampled_pairs.size(); ++i)
    sampled.push_back({{"a", p.sampled_pairs[i].first},
                       {"b", p.sampled_pairs[i].second},
                       {"run", i < p.sample_runs.size() ? matrix_run_to_json(p.sample_runs[i]) : ojson(nullptr)}});
  for (const PredictionCheck& c : p.checks)
    checks.push_back({{"victim", c.victim},
                      {"aggressor", c.aggressor},
                      {"predicted", json_number(c.predicted)},
                      {"measured", json_number(c.measured)},
                      {"error_points", json_number(c.error_points)}});
  return {{"runs", p.runs},
          {"full_matrix_runs", p.full_matrix_runs},
          {"levels", levels},
          {"bubble", {{"workload", p.bubble_workload}, {"params", p.bubble_params}}},
          {"reporter", {{"name", p.reporter}, {"tenant", p.reporter_tenant}, {"curve", curve_json(p.reporter_curve)}}},
          {"workloads", workloads},
          {"sampled_pairs", sampled},
          {"checks", checks},
          {"error", error_json(p.error)}};
}

}  // namespace ib
