#include "reports/prometheus/fleet_prometheus.h"

#include "reports/prometheus/prometheus_common.h"

#include <sstream>

namespace ib {

namespace {

// dcgm-exporter's labels for a member's GPU, so a query can join the two (`on (Hostname, gpu)`).
PrometheusLabels dcgm_labels(const FleetMember& m) {
  const FleetDevice d = m.device.value_or(FleetDevice{});
  return {{"Hostname", m.node},
          {"gpu", d.index ? std::to_string(*d.index) : ""},
          {"UUID", d.uuid},
          {"modelName", m.device ? d.model : ""},
          {"DCGM_FI_DRIVER_VERSION", d.driver}};
}

PrometheusLabels with(PrometheusLabels labels, const PrometheusLabels& more) {
  labels.insert(labels.end(), more.begin(), more.end());
  return labels;
}

}  // namespace

std::string fleet_prometheus_text(const FleetResult& f) {
  std::ostringstream os;
  PrometheusFamily status(os, "interference_bench_fleet_member_status",
                          "1 for the member's status (merge): ok, inconclusive, straggler, failed, missing, ...");
  for (const auto& m : f.members)
    status.sample(with(dcgm_labels(m), {{"member", member_name(m)}, {"status", to_string(m.status)}}), 1.0);
  PrometheusFamily p95(os, "interference_bench_fleet_p95_slowdown", "P95 slowdown of a tenant on the member's GPU");
  PrometheusFamily ci_high(os, "interference_bench_fleet_p95_slowdown_ci_high", "upper end of its interval");
  PrometheusFamily thr(os, "interference_bench_fleet_exclusive_throughput", "median exclusive throughput of a tenant");
  for (const auto& m : f.members)
    for (const auto& t : m.tenants) {
      const PrometheusLabels l = with(dcgm_labels(m), {{"member", member_name(m)}, {"scenario", t.scenario},
                                                       {"mode", t.mode}, {"tenant", t.tenant}});
      if (t.p95_slowdown) p95.sample(l, t.p95_slowdown->value);
      if (t.p95_slowdown) ci_high.sample(l, t.p95_slowdown->ci_high);
      if (t.exclusive_throughput) thr.sample(with(l, {{"unit", t.throughput_unit}}), *t.exclusive_throughput);
    }
  PrometheusFamily straggler(os, "interference_bench_fleet_straggler_z",
                             "robust z of a straggler figure within its group (|z| > k)");
  for (const auto& s : f.stragglers)
    for (const auto& m : f.members)
      if (member_name(m) == s.member)
        straggler.sample(with(dcgm_labels(m), {{"member", s.member}, {"metric", to_string(s.metric)}, {"scenario", s.scenario},
                                               {"mode", s.mode}, {"tenant", s.tenant}}),
                         s.z);
  PrometheusFamily members(os, "interference_bench_fleet_members", "members of the fleet by status class");
  members.sample({{"class", "ok"}}, f.summary.ok);
  members.sample({{"class", "inconclusive"}}, f.summary.inconclusive);
  members.sample({{"class", "failed"}}, f.summary.failed);
  members.sample({{"class", "missing"}}, f.summary.missing);
  PrometheusFamily code(os, "interference_bench_fleet_exit_code", "what merge exited with: 0, 1 or 5");
  code.sample({}, f.summary.exit_code);
  return os.str();
}

}  // namespace ib
