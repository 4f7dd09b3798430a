#include "reports/json/matrix_comparison_json.h"

#include "reports/writer_common.h"

namespace ib {

using ojson = nlohmann::ordered_json;

namespace {

ojson cell_change_json(const MatrixCellChange& c) {
  return {{"victim", c.victim},
          {"aggressor", c.aggressor},
          {"base", optional_estimate_json(c.base)},
          {"new", optional_estimate_json(c.next)},
          {"base_verdict", verdict_name(c.base_verdict)},
          {"new_verdict", verdict_name(c.next_verdict)},
          {"change", json_number(c.change.value)},
          {"ci_low", json_number(c.change.ci_low)},
          {"ci_high", json_number(c.change.ci_high)},
          {"change_kind", "new - base (P95 slowdown points)"},
          {"verdict", to_string(c.verdict)},
          {"reason", c.reason}};
}

ojson sharing_json(const std::vector<MatrixSharingChange>& pairs) {
  ojson out = ojson::array();
  for (const auto& s : pairs) out.push_back({{"a", s.a}, {"b", s.b}, {"decided", s.decided}, {"reason", s.reason}});
  return out;
}

ojson optional_device_count(const std::optional<std::size_t>& v) { return v ? ojson(*v) : ojson(nullptr); }

}  // namespace

ojson matrix_comparison_to_json(const MatrixComparison& c) {
  ojson cells = ojson::array();
  for (const auto& cell : c.cells) cells.push_back(cell_change_json(cell));
  return {{"kind", "matrix_comparison"},
          {"base", c.base_file},
          {"new", c.next_file},
          {"max_regression", c.max_regression},
          {"mode", {{"base", c.base_mode}, {"new", c.next_mode}}},
          {"cells", cells},
          {"only_in_base", c.only_in_base},
          {"only_in_new", c.only_in_next},
          {"stopped_sharing", sharing_json(c.stopped_sharing)},
          {"started_sharing", sharing_json(c.started_sharing)},
          {"packing",
           {{"base", {{"devices", optional_device_count(c.base_devices)}, {"workloads", c.base_workloads}}},
            {"new", {{"devices", optional_device_count(c.next_devices)}, {"workloads", c.next_workloads}}}}},
          {"summary",
           {{"better", c.better}, {"same", c.same}, {"worse", c.worse}, {"inconclusive", c.inconclusive},
            {"exit_code", c.exit_code}}}};
}

}  // namespace ib
