#include "reports/json/history_json.h"

#include "reports/writer_common.h"

namespace ib {

namespace {

nlohmann::ordered_json repetition_json(const HistoryRepetition& r) {
  return {{"repetition", r.repetition},
          {"run_status", to_string(r.run_status)},
          {"colocated_status", to_string(r.colocated_status)},
          {"verdict", to_string(r.verdict)},
          {"throughput_exclusive", optional_json_number(r.throughput_exclusive)},
          {"throughput_colocated", optional_json_number(r.throughput_colocated)},
          {"throughput_unit", r.throughput_unit}};
}

nlohmann::ordered_json optional_count(const std::optional<int>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

nlohmann::ordered_json history_json(const std::vector<HistoryTenantRecord>& records) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const HistoryTenantRecord& r : records) {
    nlohmann::ordered_json reps = nlohmann::ordered_json::array();
    for (const HistoryRepetition& p : r.per_repetition) reps.push_back(repetition_json(p));
    out.push_back({{"run_id", r.run.id},
                   {"start_time", r.run.start_time},
                   {"git_sha", r.run.git_sha},
                   {"host", r.run.host},
                   {"results_file", r.run.results_file},
                   {"exit_code", r.run.exit_code ? nlohmann::ordered_json(*r.run.exit_code) : nlohmann::ordered_json(nullptr)},
                   {"scenario", r.key.scenario},
                   {"mode", r.key.mode},
                   {"tenant", r.key.tenant},
                   {"workload", r.key.workload},
                   {"params", r.key.params_key},
                   {"repetitions", r.repetitions},
                   {"cutoff", optional_json_number(r.cutoff)},
                   {"p95_slowdown", optional_json_number(r.p95_slowdown)},
                   {"p95_ci", {optional_json_number(r.p95_ci_low), optional_json_number(r.p95_ci_high)}},
                   {"median_slowdown", optional_json_number(r.median_slowdown)},
                   {"verdict", to_string(r.verdict)},
                   {"verdict_reason", r.verdict_reason},
                   {"per_repetition", reps}});
    if (r.run.command == "matrix")  // a matrix's cell: its packing, once per cell
      out.back()["packing"] = {{"devices", optional_count(r.run.matrix_devices)}, {"workloads", optional_count(r.run.matrix_workloads)}};
  }
  return out;
}

}  // namespace ib
