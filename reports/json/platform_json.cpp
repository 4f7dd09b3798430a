#include "reports/json/platform_json.h"

#include "reports/writer_common.h"

namespace ib {

using ojson = nlohmann::ordered_json;

ojson check_json(const CheckResult& c) {
  return {{"id", c.id},
          {"title", c.title},
          {"status", to_string(c.status)},
          {"evidence", c.evidence},
          {"threshold", c.threshold},
          {"source", c.source}};
}

namespace {

ojson checks_json(const std::vector<CheckResult>& checks) {
  ojson a = ojson::array();
  for (const auto& c : checks) a.push_back(check_json(c));
  return a;
}

template <typename T>
ojson optional_json(const std::optional<T>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}

ojson priced_json(const PricedOption& p) {
  return {{"throughput", json_number(p.throughput)},
          {"price_per_h", json_number(p.price_per_h)},
          {"cost_per_unit", json_number(p.cost_per_unit)}};
}

ojson cost_json(const CostReport& c) {
  return {{"unit", c.unit},
          {"workload", c.workload},
          {"exclusive", priced_json(c.exclusive)},
          {"shared", priced_json(c.shared)},
          {"p95_cutoff_passed", c.p95_cutoff_passed},
          {"recommendation", to_string(c.recommendation)},
          {"reason", c.reason}};
}

ojson sustain_window_json(const SustainWindow& w) {
  const TelemetryWindow& t = w.telemetry;
  return {{"t_s", w.t_s},
          {"throughput", json_number(w.throughput)},
          {"readings", t.readings},
          {"median_sm_clock_mhz", optional_json(t.median_sm_clock_mhz)},
          {"mean_power_w", optional_json(t.mean_power_w)},
          {"max_temperature_c", optional_json(t.max_temperature_c)},
          {"reasons", t.reasons ? ojson(reason_names(*t.reasons)) : ojson(nullptr)}};
}

ojson sustain_thresholds_json(const SustainThresholds& th) {
  return {{"min_clock_fraction", th.min_clock_fraction},
          {"fail_reasons", th.fail_reasons},
          {"max_reason_fraction", th.max_reason_fraction},
          {"max_throughput_drop", th.max_throughput_drop},
          {"compare_window_s", th.compare_window_s}};
}

}  // namespace

ojson probe_to_json(const ProbeReport& r) {
  return {{"schema_version", kPlatformSchemaVersion}, {"kind", "probe"},          {"device", r.device},
          {"idle_window_s", r.idle_window_s},         {"checks", checks_json(r.checks)}, {"pass", r.pass}};
}

ojson vet_to_json(const VetReport& r) {
  return {{"schema_version", kPlatformSchemaVersion},
          {"kind", "vet"},
          {"start_time", r.start_time},
          {"host", r.host},
          {"device", r.device},
          {"backend", r.backend},
          {"budget_s", r.budget_s},
          {"steps",
           {{"idle_window_s", r.steps.idle_window_s},
            {"stability_phase_s", r.steps.stability_phase_s},
            {"sustain_s", r.steps.sustain_s}}},
          {"baseline", r.baseline},
          {"verdict", to_string(r.verdict)},
          {"checks", checks_json(r.checks)},
          {"cost", r.cost ? cost_json(*r.cost) : ojson(nullptr)},
          {"stability_results", r.stability_results},
          {"sustain_results", r.sustain_results},
          {"interrupted", r.interrupted}};
}

ojson sustain_to_json(const SustainReport& r) {
  ojson j = {{"verdict", to_string(r.verdict)}, {"evidence", r.evidence}};
  if (r.measured) {
    ojson throughputs = ojson::array(), windows = ojson::array();
    for (const auto& w : r.windows) {
      throughputs.push_back(json_number(w.throughput));
      windows.push_back(sustain_window_json(w));
    }
    j["workload"] = r.workload;
    j["throughput_unit"] = r.throughput_unit;
    j["window_throughputs"] = throughputs;
    j["windows"] = windows;
    j["telemetry_readings"] = r.telemetry_readings;
    j["thresholds"] = sustain_thresholds_json(r.thresholds);
  }
  j["host"] = r.host;
  j["run"] = r.run_results;
  return j;
}

}  // namespace ib
