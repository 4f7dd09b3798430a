// merge's judging: groups, stragglers, the worst GPUs, counts and the exit code (merge.h).
#include "harness/core/clock.h"
#include "harness/core/errors.h"
#include "harness/core/exit_codes.h"
#include "harness/core/text.h"
#include "harness/fleet/merge.h"
#include "harness/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace ib {

namespace {

std::string group_key(const FleetDevice& d) {
  return d.model + " | driver " + (d.driver.empty() ? "-" : d.driver) + " | MIG " + (d.mig.empty() ? "-" : d.mig);
}

// One figure compared across a group's members.
struct FigureKey {
  FleetMetric metric;
  std::string scenario, mode, tenant;
  bool operator<(const FigureKey& o) const {
    return std::tie(metric, scenario, mode, tenant) < std::tie(o.metric, o.scenario, o.mode, o.tenant);
  }
};

struct FigureValue {
  std::size_t member;  // index into fleet.members
  double value;
  std::string unit;
};

// The group's figures: every finite exclusive throughput and P95 slowdown of its members.
std::map<FigureKey, std::vector<FigureValue>> group_figures(const FleetResult& fleet, const FleetGroup& g) {
  std::map<FigureKey, std::vector<FigureValue>> figures;
  for (std::size_t i = 0; i < fleet.members.size(); ++i) {
    const FleetMember& m = fleet.members[i];
    if (m.group != g.key) continue;
    for (const FleetTenantFigure& f : m.tenants) {
      if (f.exclusive_throughput && std::isfinite(*f.exclusive_throughput))
        figures[{FleetMetric::exclusive_throughput, f.scenario, f.mode, f.tenant}].push_back(
            {i, *f.exclusive_throughput, f.throughput_unit});
      if (f.p95_slowdown && std::isfinite(f.p95_slowdown->value))
        figures[{FleetMetric::p95_slowdown, f.scenario, f.mode, f.tenant}].push_back({i, f.p95_slowdown->value, ""});
    }
  }
  return figures;
}

// How much worse than its group a value is, as a robust z that is positive on the bad side: less
// throughput, more slowdown.
double bad_side_z(FleetMetric metric, double z) { return metric == FleetMetric::exclusive_throughput ? -z : z; }

bool differs_enough(FleetMetric metric, double value, double median, const FleetOptions& o) {
  const double change = std::fabs(value - median);
  return metric == FleetMetric::exclusive_throughput ? change > o.min_throughput_change * std::fabs(median)
                                                     : change > o.min_slowdown_change;
}

std::string figure_words(const FigureKey& k) {
  return std::string(to_string(k.metric)) + " of " + k.tenant + " (" + k.scenario + ", " + k.mode + ")";
}

std::string value_words(FleetMetric metric, double v, const std::string& unit) {
  return metric == FleetMetric::p95_slowdown ? signed_percent(v) : significant(v, 4) + (unit.empty() ? "" : " " + unit);
}

// The stragglers of one figure in one group, and each member's worst bad-side z.
void judge_figure(FleetResult& fleet, const FleetGroup& g, const FigureKey& key, const std::vector<FigureValue>& values,
                  std::map<std::size_t, std::string>& worst_figure) {
  if (static_cast<int>(values.size()) < kMinGroupForStragglers) return;
  std::vector<double> x;
  for (const FigureValue& v : values) x.push_back(v.value);
  const std::vector<double> z = robust_z_scores(x);
  const double med = median(x);
  const double mad = median_absolute_deviation(x);
  for (std::size_t i = 0; i < values.size(); ++i) {
    FleetMember& m = fleet.members[values[i].member];
    const double bad = bad_side_z(key.metric, z[i]);
    if (bad > m.worst_z) {
      m.worst_z = bad;
      worst_figure[values[i].member] = figure_words(key);
    }
    if (!(std::fabs(z[i]) > fleet.options.k) || !differs_enough(key.metric, x[i], med, fleet.options)) continue;
    FleetStraggler s;
    s.member = member_name(m);
    s.node = m.node;
    s.group = g.key;
    s.metric = key.metric;
    s.scenario = key.scenario;
    s.mode = key.mode;
    s.tenant = key.tenant;
    s.unit = values[i].unit;
    s.value = x[i];
    s.group_median = med;
    s.group_mad = mad;
    s.z = z[i];
    s.group_values = static_cast<int>(x.size());
    s.worse = bad > 0.0;
    s.evidence = figure_words(key) + " " + value_words(key.metric, x[i], s.unit) + " against the group's median " +
                 value_words(key.metric, med, s.unit) + " (MAD " + significant(mad, 3) + ", robust z " +
                 formatted("%+.1f", z[i]) + ", bound |z| > " + significant(fleet.options.k, 3) + ", " +
                 std::to_string(x.size()) + " nodes)";
    fleet.stragglers.push_back(s);
  }
}

void form_groups(FleetResult& fleet) {
  for (FleetMember& m : fleet.members) {
    if (!m.device) continue;
    m.group = group_key(*m.device);
    auto it = std::find_if(fleet.groups.begin(), fleet.groups.end(), [&](const FleetGroup& g) { return g.key == m.group; });
    if (it == fleet.groups.end()) {
      fleet.groups.push_back({m.group, m.device->model, m.device->driver, m.device->mig, {}, false});
      it = std::prev(fleet.groups.end());
    }
    it->members.push_back(member_name(m));
  }
  for (FleetGroup& g : fleet.groups) g.judged = static_cast<int>(g.members.size()) >= kMinGroupForStragglers;
}

std::optional<double> worst_p95(const FleetMember& m) {
  std::optional<double> worst;
  for (const FleetTenantFigure& f : m.tenants)
    if (f.p95_slowdown && std::isfinite(f.p95_slowdown->value) && (!worst || f.p95_slowdown->value > *worst))
      worst = f.p95_slowdown->value;
  return worst;
}

void rank_worst(FleetResult& fleet, const std::map<std::size_t, std::string>& worst_figure) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < fleet.members.size(); ++i)
    if (fleet.members[i].device) order.push_back(i);
  const auto key = [&](std::size_t i) {
    return std::make_pair(fleet.members[i].worst_z, worst_p95(fleet.members[i]).value_or(-1e300));
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) > key(b); });
  if (static_cast<int>(order.size()) > fleet.options.worst) order.resize(static_cast<std::size_t>(fleet.options.worst));
  for (std::size_t i : order) {
    const FleetMember& m = fleet.members[i];
    const auto fig = worst_figure.find(i);
    fleet.worst.push_back({member_name(m), m.node, m.device->uuid, m.device->model, m.worst_z, worst_p95(m),
                           fig == worst_figure.end() ? "" : fig->second});
  }
}

void count(FleetResult& fleet) {
  FleetSummary& s = fleet.summary;
  s.members = static_cast<int>(fleet.members.size());
  for (const FleetMember& m : fleet.members) {
    if (m.status == MemberStatus::ok) ++s.ok;
    else if (m.status == MemberStatus::inconclusive) ++s.inconclusive;
    else ++s.failed;
    if (m.status == MemberStatus::missing) ++s.missing;
    if (m.status == MemberStatus::straggler) ++s.stragglers;
  }
  s.exit_code = s.failed > 0 ? kExitVerdictFailed : s.inconclusive > 0 ? kExitInconclusive : kExitPass;
}

}  // namespace

void judge_fleet(FleetResult& fleet) {
  form_groups(fleet);
  std::map<std::size_t, std::string> worst_figure;
  for (const FleetGroup& g : fleet.groups) {
    if (!g.judged) continue;
    for (const auto& [key, values] : group_figures(fleet, g)) judge_figure(fleet, g, key, values, worst_figure);
  }
  for (const FleetStraggler& s : fleet.stragglers) {
    if (!s.worse) continue;
    for (FleetMember& m : fleet.members)
      if (member_name(m) == s.member && static_cast<int>(m.status) > static_cast<int>(MemberStatus::straggler)) {
        m.status = MemberStatus::straggler;
        m.detail = "straggler: " + s.evidence;
      }
  }
  rank_worst(fleet, worst_figure);
  count(fleet);
}

FleetResult merge_fleet(const MergeRequest& request) {
  FleetResult fleet;
  fleet.argv = request.argv;
  fleet.start_time = utc_now("%Y-%m-%dT%H:%M:%SZ");
  fleet.inputs = request.inputs;
  fleet.expect_nodes_file = request.expect_nodes_file;
  fleet.options = request.options;
  const std::vector<std::string> nodes =
      request.expect_nodes_file.empty() ? std::vector<std::string>{} : read_expected_nodes(request.expect_nodes_file);
  fleet.members = read_members(request.inputs);
  if (fleet.members.empty() && nodes.empty() && request.expect_tasks == 0)
    throw InputError("merge: no results.json, vet.json, sustain.json or task.json under the inputs: nothing to merge");
  add_expectations(fleet.members, nodes, request.expect_tasks, fleet.summary);
  judge_fleet(fleet);
  return fleet;
}

}  // namespace ib
