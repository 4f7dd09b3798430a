#include "reports/fleet_writer.h"

#include "harness/core/text.h"
#include "reports/html_writer.h"
#include "reports/json_writer.h"
#include "reports/prometheus_writer.h"

#include <pugixml.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

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

ojson check_json(const CheckResult& c) {
  return {{"id", c.id},       {"title", c.title},         {"status", to_string(c.status)},
          {"evidence", c.evidence}, {"threshold", c.threshold}, {"source", c.source}};
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

// ---- Markdown ----

namespace {

const char* exit_words(int code) {
  return code == 0 ? "all good" : code == 1 ? "a member failed or is missing" : code == 5 ? "only inconclusive" : "?";
}

void members_table(std::ostringstream& os, const FleetResult& f) {
  os << "\n## Members\n\n| member | status | GPU | group | exit | detail |\n|---|---|---|---|---|---|\n";
  for (const auto& m : f.members)
    os << "| " << markdown_cell(member_name(m), 400) << (m.expected ? "" : " (not expected)") << " | " << to_string(m.status) << " | "
       << markdown_cell(m.device ? m.device->model + (m.device->uuid.empty() ? "" : " " + m.device->uuid) : "-", 400) << " | "
       << markdown_cell(m.group.empty() ? "-" : m.group, 400) << " | " << (m.exit_code ? std::to_string(*m.exit_code) : "-") << " | "
       << markdown_cell(m.detail, 400) << " |\n";
}

void verdicts_table(std::ostringstream& os, const FleetResult& f) {
  os << "\n## Verdicts per member\n\n| member | tenant | scenario | mode | verdict | P95 slowdown [CI] | cutoff | "
        "exclusive throughput |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& m : f.members)
    for (const auto& t : m.tenants)
      os << "| " << markdown_cell(member_name(m), 400) << " | " << markdown_cell(t.tenant, 400) << " | " << markdown_cell(t.scenario, 400) << " | " << markdown_cell(t.mode, 400)
         << " | " << to_string(t.verdict) << " | " << p95_words(t.p95_slowdown) << " | " << percent(t.cutoff) << " | "
         << (t.exclusive_throughput ? significant(*t.exclusive_throughput, 4) + " " + markdown_cell(t.throughput_unit, 400) : "n/a")
         << " |\n";
}

}  // namespace

std::string fleet_markdown(const FleetResult& f) {
  const FleetSummary& s = f.summary;
  std::ostringstream os;
  os << "# interference-bench fleet\n\n**exit code " << s.exit_code << "** (" << exit_words(s.exit_code) << "): "
     << s.members << " members, " << s.ok << " ok, " << s.inconclusive << " inconclusive, " << s.failed
     << " counting against the fleet (" << s.missing << " missing, " << s.stragglers << " stragglers)";
  if (s.expected_nodes) os << "; " << s.expected_nodes << " nodes expected";
  if (s.expected_tasks) os << "; " << s.expected_tasks << " tasks expected";
  os << ".\n";
  if (!s.missing_nodes.empty() || !s.missing_tasks.empty()) {
    os << "\nMissing:";
    for (const auto& n : s.missing_nodes) os << " " << markdown_cell(n, 400);
    for (int i : s.missing_tasks) os << " task " << i;
    os << "\n";
  }
  os << "\n## Stragglers (|robust z| > " << significant(f.options.k, 3) << " within the group)\n\n";
  if (f.stragglers.empty()) os << "None.\n";
  for (const auto& st : f.stragglers)
    os << "- **" << markdown_cell(st.member, 400) << "** (" << (st.worse ? "worse" : "better, not counted") << "): " << markdown_cell(st.evidence, 400)
       << "\n";
  os << "\n## Worst GPUs\n\n| rank | member | GPU | worst robust z | worst P95 slowdown | figure |\n|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < f.worst.size(); ++i) {
    const auto& w = f.worst[i];
    os << "| " << i + 1 << " | " << markdown_cell(w.member, 400) << " | " << markdown_cell(w.model + (w.uuid.empty() ? "" : " " + w.uuid), 400) << " | "
       << formatted("%.1f", w.worst_z) << " | " << (w.worst_p95_slowdown ? signed_percent(*w.worst_p95_slowdown) : "n/a")
       << " | " << markdown_cell(w.worst_figure.empty() ? "-" : w.worst_figure, 400) << " |\n";
  }
  os << "\n## Groups\n\n";
  for (const auto& g : f.groups)
    os << "- " << markdown_cell(g.key, 400) << ": " << g.members.size() << " members"
       << (g.judged ? "" : " (fewer than " + std::to_string(kMinGroupForStragglers) + ": stragglers not judged)") << "\n";
  members_table(os, f);
  verdicts_table(os, f);
  return os.str();
}

// ---- JUnit ----

namespace {

struct CaseCounts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
};

void add_case(pugi::xml_node suite, CaseCounts& n, const std::string& classname, const std::string& name,
              const char* kind, const std::string& message, const std::string& text) {
  pugi::xml_node tc = suite.append_child("testcase");
  tc.append_attribute("classname") = classname.c_str();
  tc.append_attribute("name") = name.c_str();
  ++n.tests;
  const std::string k = kind;
  if (!k.empty()) {
    pugi::xml_node e = tc.append_child(kind);
    e.append_attribute("message") = message.c_str();
    if (k != "skipped") e.append_attribute("type") = kind;
    n.failures += k == "failure";
    n.errors += k == "error";
    n.skipped += k == "skipped";
  }
  tc.append_child("system-out").text() = text.c_str();
}

const char* verdict_case_kind(Verdict v) {
  switch (v) {
    case Verdict::fail: return "failure";
    case Verdict::error: return "error";
    case Verdict::inconclusive:
    case Verdict::waived: return "skipped";
    default: return "";
  }
}

void member_cases(pugi::xml_node suite, CaseCounts& n, const FleetMember& m, const FleetResult& f) {
  const std::string cls = "interference-bench.fleet." + member_name(m);
  if (m.tenants.empty() && m.checks.empty()) {
    const bool ok = m.status == MemberStatus::ok, inconclusive = m.status == MemberStatus::inconclusive;
    add_case(suite, n, cls, "result", ok ? "" : inconclusive ? "skipped" : "failure",
             std::string(to_string(m.status)) + ": " + m.detail, "status: " + std::string(to_string(m.status)) + "\n" + m.detail);
  }
  for (const auto& t : m.tenants)
    add_case(suite, n, cls + "." + t.scenario + "." + t.mode, t.tenant + " (" + t.workload + ")", verdict_case_kind(t.verdict),
             std::string(to_string(t.verdict)) + ": p95_slowdown " + p95_words(t.p95_slowdown) + " against cutoff " +
                 percent(t.cutoff) + ": " + t.verdict_reason,
             "verdict: " + std::string(to_string(t.verdict)) + "\nreason: " + t.verdict_reason + "\n");
  for (const auto& c : m.checks)
    add_case(suite, n, cls + ".checks", c.id + " (" + c.title + ")",
             c.status == CheckOutcome::fail ? "failure" : c.status == CheckOutcome::unknown ? "skipped" : "",
             std::string(to_string(c.status)) + ": " + c.evidence,
             "evidence: " + c.evidence + "\nthreshold: " + c.threshold + "\nsource: " + c.source + "\n");
  for (const auto& s : f.stragglers)
    if (s.member == member_name(m))
      add_case(suite, n, cls + ".stragglers", std::string(to_string(s.metric)) + " " + s.tenant + " (" + s.scenario + ", " + s.mode + ")",
               s.worse ? "failure" : "", "straggler: " + s.evidence, s.evidence + "\n");
}

}  // namespace

std::string fleet_junit_xml(const FleetResult& f) {
  pugi::xml_document doc;
  pugi::xml_node decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  pugi::xml_node suites = doc.append_child("testsuites");
  suites.append_attribute("name") = "interference-bench fleet";
  for (const auto& m : f.members) {
    pugi::xml_node suite = suites.append_child("testsuite");
    suite.append_attribute("name") = member_name(m).c_str();
    suite.append_attribute("hostname") = m.node.c_str();
    suite.append_attribute("timestamp") = f.start_time.c_str();
    CaseCounts n;
    member_cases(suite, n, m, f);
    suite.append_attribute("tests") = n.tests;
    suite.append_attribute("failures") = n.failures;
    suite.append_attribute("errors") = n.errors;
    suite.append_attribute("skipped") = n.skipped;
  }
  std::ostringstream os;
  doc.save(os, "  ", pugi::format_default, pugi::encoding_utf8);
  return os.str();
}

// ---- Prometheus ----

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

// ---- HTML ----

namespace {

// One P95 slowdown with its interval on a fixed axis from -20% to +100%, the cutoff as a red line.
// Positions only: every figure drawn is one the merge computed.
std::string interval_svg(const Estimate& e, double cutoff) {
  const double lo = -0.2, hi = 1.0, w = 240.0;
  const auto x = [&](double v) { return std::clamp((v - lo) / (hi - lo), 0.0, 1.0) * w; };
  std::ostringstream os;
  os << "<svg width=\"" << w << "\" height=\"14\" role=\"img\"><line x1=\"" << x(0.0) << "\" y1=\"0\" x2=\"" << x(0.0)
     << "\" y2=\"14\" stroke=\"#999\"/><line x1=\"" << x(cutoff) << "\" y1=\"0\" x2=\"" << x(cutoff)
     << "\" y2=\"14\" stroke=\"#c00\"/>";
  if (std::isfinite(e.ci_low) && std::isfinite(e.ci_high))
    os << "<line x1=\"" << x(e.ci_low) << "\" y1=\"7\" x2=\"" << x(e.ci_high) << "\" y2=\"7\" stroke=\"#036\" stroke-width=\"3\"/>";
  if (std::isfinite(e.value)) os << "<circle cx=\"" << x(e.value) << "\" cy=\"7\" r=\"3\" fill=\"#000\"/>";
  os << "</svg>";
  return os.str();
}

std::string td(const std::string& s) { return "<td>" + html_escape(s) + "</td>"; }

void html_members(std::ostringstream& os, const FleetResult& f) {
  os << "<h2>Members</h2><table><tr><th>member</th><th>status</th><th>GPU</th><th>group</th><th>exit</th><th>detail</th></tr>\n";
  for (const auto& m : f.members)
    os << "<tr class=\"" << to_string(m.status) << "\">" << td(member_name(m)) << td(to_string(m.status))
       << td(m.device ? m.device->model + " " + m.device->uuid : "-") << td(m.group) << td(m.exit_code ? std::to_string(*m.exit_code) : "-")
       << td(m.detail) << "</tr>\n";
  os << "</table>\n";
}

void html_intervals(std::ostringstream& os, const FleetResult& f) {
  os << "<h2>P95 slowdown per member</h2><p>Axis −20% to +100%; grey: 0, red: the cutoff; the bar is the interval, "
        "the dot the estimate.</p><table><tr><th>member</th><th>tenant</th><th>scenario / mode</th><th>verdict</th>"
        "<th>P95 slowdown [CI]</th><th></th></tr>\n";
  for (const auto& m : f.members)
    for (const auto& t : m.tenants) {
      if (!t.p95_slowdown) continue;
      os << "<tr>" << td(member_name(m)) << td(t.tenant) << td(t.scenario + " / " + t.mode) << td(to_string(t.verdict))
         << td(p95_words(t.p95_slowdown)) << "<td>" << interval_svg(*t.p95_slowdown, t.cutoff) << "</td></tr>\n";
    }
  os << "</table>\n";
}

}  // namespace

std::string fleet_html(const FleetResult& f) {
  std::ostringstream os;
  os << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>interference-bench fleet</title><style>"
        "body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
        "tr.ok td:nth-child(2){color:#060}tr.inconclusive td:nth-child(2){color:#960}"
        "td:nth-child(2){color:#c00}</style></head><body>\n<h1>interference-bench fleet</h1>\n<p>"
     << html_escape("exit code " + std::to_string(f.summary.exit_code) + " (" + exit_words(f.summary.exit_code) + "): " +
                    std::to_string(f.summary.members) + " members, " + std::to_string(f.summary.ok) + " ok, " +
                    std::to_string(f.summary.inconclusive) + " inconclusive, " + std::to_string(f.summary.failed) +
                    " counting against the fleet")
     << "</p>\n<h2>Worst GPUs</h2><table><tr><th>rank</th><th>member</th><th>GPU</th><th>worst robust z</th>"
        "<th>worst P95 slowdown</th><th>figure</th></tr>\n";
  for (std::size_t i = 0; i < f.worst.size(); ++i) {
    const auto& w = f.worst[i];
    os << "<tr>" << td(std::to_string(i + 1)) << td(w.member) << td(w.model + " " + w.uuid) << td(formatted("%.1f", w.worst_z))
       << td(w.worst_p95_slowdown ? signed_percent(*w.worst_p95_slowdown) : "n/a") << td(w.worst_figure) << "</tr>\n";
  }
  os << "</table>\n<h2>Stragglers</h2><ul>\n";
  for (const auto& s : f.stragglers)
    os << "<li>" << html_escape(s.member + (s.worse ? " (worse): " : " (better, not counted): ") + s.evidence) << "</li>\n";
  if (f.stragglers.empty()) os << "<li>none</li>\n";
  os << "</ul>\n";
  html_members(os, f);
  html_intervals(os, f);
  os << "</body></html>\n";
  return os.str();
}

}  // namespace ib
