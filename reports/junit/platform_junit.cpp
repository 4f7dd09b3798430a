#include "reports/junit/platform_junit.h"

#include "harness/core/text.h"
#include "reports/junit/junit_common.h"

namespace ib {

std::string checks_junit_xml(const std::string& suite_name, const std::vector<CheckResult>& checks) {
  pugi::xml_document doc;
  pugi::xml_node suite = new_junit_suite(doc, suite_name);
  int failures = 0, skipped = 0;
  for (const auto& c : checks) {
    failures += c.status == CheckOutcome::fail;
    skipped += c.status == CheckOutcome::unknown;
  }
  set_junit_counts(suite, static_cast<int>(checks.size()), failures, skipped);
  for (const auto& c : checks) {
    const std::string text = "check: " + c.id + "\nstatus: " + to_string(c.status) + "\nevidence: " + c.evidence +
                             "\nthreshold: " + c.threshold + "\nsource: " + c.source + "\n";
    const char* kind = c.status == CheckOutcome::fail ? "failure" : c.status == CheckOutcome::unknown ? "skipped" : "";
    const std::string message = c.status == CheckOutcome::unknown ? "unknown: " + c.evidence
                                                                  : c.evidence + " (threshold: " + c.threshold + ")";
    add_junit_case(suite, "interference-bench.vet", c.id + " (" + c.title + ")", kind, message, text);
  }
  return junit_xml_text(doc);
}

std::string sustain_junit_xml(const SustainReport& r) {
  pugi::xml_document doc;
  pugi::xml_node suite = new_junit_suite(doc, "interference-bench sustain");
  const bool failed = r.verdict == LoadVerdict::fail, skipped = r.verdict == LoadVerdict::inconclusive;
  set_junit_counts(suite, 1, failed, skipped);
  std::string evidence;
  for (const auto& line : r.evidence) evidence += (evidence.empty() ? "" : "; ") + line;
  std::string text = std::string("verdict: ") + to_string(r.verdict) + "\n";
  for (const auto& line : r.evidence) text += "evidence: " + line + "\n";
  text += "threshold: median SM clock over the last half >= " + formatted("%.2f", r.thresholds.min_clock_fraction) +
          " x max; 0xE8 reasons in at most " + formatted("%.3f", r.thresholds.max_reason_fraction) +
          " of readings\nresults: " + r.run_results + "\n";
  add_junit_case(suite, "interference-bench.sustain", "sustained_load", failed ? "failure" : skipped ? "skipped" : "",
                 std::string(to_string(r.verdict)) + ": " + evidence, text);
  return junit_xml_text(doc);
}

}  // namespace ib
