#include "reports/junit/results_junit.h"

#include "harness/core/text.h"
#include "reports/junit/junit_common.h"

#include <pugixml.hpp>

#include <cmath>
#include <sstream>

namespace ib {

namespace {

// The cutoff of the run an aggregate belongs to (the runs of one scenario and mode share it).
double cutoff_of(const Results& r, const TenantAggregate& a) {
  for (const auto& run : r.runs)
    if (run.scenario == a.scenario && run.mode == a.mode) return run.cutoff;
  return kDefaultCutoff;
}

std::string number_text(double v) { return std::isfinite(v) ? formatted("%.6g", v) : std::string("n/a"); }

// A collective tenant's figures per repetition (docs/design.md section 13): one "collective:" line each.
void collective_evidence(std::ostringstream& os, const Results& r, const TenantAggregate& a) {
  for (const auto& run : r.runs) {
    if (run.scenario != a.scenario || run.mode != a.mode) continue;
    for (const auto& t : run.tenants) {
      if (t.name != a.tenant || !t.metrics || !t.metrics->collective) continue;
      const TenantMetrics::Collective& c = *t.metrics->collective;
      os << "collective (repetition " << run.repetition << "): " << c.ranks << " ranks, blast radius " << c.blast_radius
         << " (threshold " << number_text(c.blast_threshold) << "), longest stall " << number_text(c.longest_stall_s)
         << " s of a " << number_text(c.timeout_s) << " s timeout (margin " << number_text(c.stall_margin) << ")";
      if (const auto& f = t.colocated.rank_figures)
        os << ", straggler rank " << f->straggler_rank << " (last to arrive in " << number_text(f->straggler_share)
           << " of samples)";
      os << "\n";
    }
  }
  if (const auto& m = a.amplification)
    os << "amplification: " << (m->value ? number_text(*m->value) : std::string("n/a")) << " (P95 slowdown "
       << number_text(m->collective_slowdown) << " as a collective, " << number_text(m->single_rank_slowdown)
       << " for its shared rank alone in " << m->reference_scenario << ")\n";
}

// The evidence of a tenant verdict, one "key: value" line per fact: metric, value, ci95, threshold, reason.
std::string evidence(const Results& r, const TenantAggregate& a, double cutoff) {
  std::ostringstream os;
  os << "metric: p95_slowdown\n";
  if (a.metrics) {
    const Estimate& e = a.metrics->p95_slowdown;
    os << "value: " << number_text(e.value) << "\n"
       << "ci: [" << number_text(e.ci_low) << ", " << number_text(e.ci_high) << "]\n"
       << "basis: " << a.metrics->basis << "\n"
       << "confidence: " << number_text(e.confidence) << "\n"
       << "n: exclusive " << a.metrics->n_exclusive << ", colocated " << a.metrics->n_colocated << "\n";
    if (a.decision)
      os << "stopped: " << (a.decision->decided ? "decided" : to_string(a.decision->stopped_by)) << " after "
         << a.decision->rounds << " rounds, " << number_text(a.decision->seconds) << " s (look " << a.decision->look << " of "
         << a.decision->looks_planned << ")\n"
         << "resolves: +/-" << number_text(a.decision->resolution) << " (half-width of the interval)\n";
  } else {
    os << "value: n/a\n";
  }
  os << "threshold: " << number_text(cutoff) << " (the whole CI above it fails, across it is inconclusive)\n"
     << "repetitions: " << a.repetitions << " (" << a.repetitions_measured << " measured)\n"
     << "reason: " << a.verdict_reason << "\n";
  collective_evidence(os, r, a);
  for (const auto& w : a.warnings) os << "warning: " << w.text << "\n";
  return os.str();
}

std::string failure_message(const TenantAggregate& a, double cutoff) {
  std::string m = "p95_slowdown ";
  m += a.metrics ? number_text(a.metrics->p95_slowdown.value) + " [" + number_text(a.metrics->p95_slowdown.ci_low) +
                       ", " + number_text(a.metrics->p95_slowdown.ci_high) + "]"
                 : std::string("n/a");
  return m + " against cutoff " + number_text(cutoff) + ": " + a.verdict_reason;
}

// One tenant verdict: fail -> failure, error -> error, inconclusive and waived -> skipped, else passed.
void add_testcase(pugi::xml_node suite, const Results& r, const TenantAggregate& a) {
  const double cutoff = cutoff_of(r, a);
  const char* kind = "";
  std::string message;
  switch (a.verdict) {
    case Verdict::pass:
    case Verdict::baseline: break;
    case Verdict::fail:
      kind = "failure";
      message = failure_message(a, cutoff);
      break;
    case Verdict::error:
      kind = "error";
      message = a.verdict_reason;
      break;
    case Verdict::inconclusive:
    case Verdict::waived:
      kind = "skipped";
      message = std::string(verdict_name(a.verdict)) + ": " + a.verdict_reason;
      break;
  }
  std::string text = "verdict: " + std::string(verdict_name(a.verdict)) + "\n" + evidence(r, a, cutoff);
  if (a.advice) {  // a user's program: the advice with each rule's evidence
    text += std::string("\nadvice: ") + to_string(a.advice->choice) + " — " + a.advice->reason + "\n";
    for (const auto& rule : a.advice->rules)
      text += "  " + rule.id + ": " + std::string(to_string(rule.holds)) + " (" + rule.evidence + "; " + rule.source + ")\n";
  }
  add_junit_case(suite, "interference-bench." + a.scenario + "." + a.mode, a.tenant + " (" + a.workload + ")", kind,
                 message, text);
}

}  // namespace

std::string junit_xml(const Results& r) {
  pugi::xml_document doc;
  pugi::xml_node suite = new_junit_suite(doc, "interference-bench" + (r.meta.suite.empty() ? "" : " " + r.meta.suite));
  suite.append_attribute("tests") = static_cast<unsigned long long>(r.aggregates.size());
  suite.append_attribute("failures") = r.summary.failed;
  suite.append_attribute("errors") = r.summary.errors;
  suite.append_attribute("skipped") = r.summary.inconclusive + r.summary.waived;
  suite.append_attribute("timestamp") = r.meta.start_time.c_str();
  suite.append_attribute("hostname") = r.meta.host.c_str();
  pugi::xml_node props = suite.append_child("properties");
  const std::pair<const char*, std::string> facts[] = {{"version", r.meta.version}, {"git_sha", r.meta.git_sha},
                                                       {"backend", r.meta.backend},
                                                       {"exit_code", std::to_string(r.summary.exit_code)}};
  for (const auto& [name, value] : facts) {
    pugi::xml_node p = props.append_child("property");
    p.append_attribute("name") = name;
    p.append_attribute("value") = value.c_str();
  }
  for (const auto& a : r.aggregates) add_testcase(suite, r, a);
  return junit_xml_text(doc);
}

}  // namespace ib
