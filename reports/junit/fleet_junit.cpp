#include "reports/junit/fleet_junit.h"

#include "harness/core/text.h"
#include "reports/junit/junit_common.h"
#include "reports/writer_common.h"

namespace ib {

namespace {

struct CaseCounts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
};

void add_member_case(pugi::xml_node suite, CaseCounts& n, const std::string& classname, const std::string& name,
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
    add_member_case(suite, n, cls, "result", ok ? "" : inconclusive ? "skipped" : "failure",
                    std::string(to_string(m.status)) + ": " + m.detail, "status: " + std::string(to_string(m.status)) + "\n" + m.detail);
  }
  for (const auto& t : m.tenants)
    add_member_case(suite, n, cls + "." + t.scenario + "." + t.mode, t.tenant + " (" + t.workload + ")", verdict_case_kind(t.verdict),
                    std::string(to_string(t.verdict)) + ": p95_slowdown " + p95_words(t.p95_slowdown) + " against cutoff " +
                        percent(t.cutoff) + ": " + t.verdict_reason,
                    "verdict: " + std::string(to_string(t.verdict)) + "\nreason: " + t.verdict_reason + "\n");
  for (const auto& c : m.checks)
    add_member_case(suite, n, cls + ".checks", c.id + " (" + c.title + ")",
                    c.status == CheckOutcome::fail ? "failure" : c.status == CheckOutcome::unknown ? "skipped" : "",
                    std::string(to_string(c.status)) + ": " + c.evidence,
                    "evidence: " + c.evidence + "\nthreshold: " + c.threshold + "\nsource: " + c.source + "\n");
  for (const auto& s : f.stragglers)
    if (s.member == member_name(m))
      add_member_case(suite, n, cls + ".stragglers", std::string(to_string(s.metric)) + " " + s.tenant + " (" + s.scenario + ", " + s.mode + ")",
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
  return junit_xml_text(doc);
}

}  // namespace ib
