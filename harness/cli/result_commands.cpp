#include "harness/cli/result_commands.h"

#include "harness/analysis/compare.h"
#include "harness/cli/validators.h"
#include "harness/core/errors.h"
#include "harness/core/files.h"
#include "harness/core/text.h"
#include "reports/compare_writer.h"
#include "reports/html_writer.h"
#include "reports/junit_writer.h"
#include "reports/prometheus_writer.h"
#include "reports/results_reader.h"

#include <iostream>

namespace ib {

namespace {

// compare resamples the raw samples: a --no-raw file has none to give.
void require_raw_samples(const ResultsDocument& doc, const std::string& file) {
  if (!doc.raw_samples)
    throw InputError(file + ": meta.raw_samples: false; compare needs the raw samples (a run without --no-raw)");
}

}  // namespace

void add_compare_command(CLI::App& app, CompareCommand& c) {
  c.command = app.add_subcommand("compare", "Compare two saved results.json files tenant by tenant (runs nothing)");
  c.command->add_option("base", c.base, "The earlier results.json (BASE)")->required();
  c.command->add_option("new", c.next, "The results.json to judge (NEW)")->required();
  c.command
      ->add_option("--max-regression", c.max_regression,
                   "Largest tolerated change: slowdown points (0.05 = 5 points) or fraction of colocated throughput "
                   "(default 0.05)")
      ->check(number_in(0.0, 100.0));
  c.command->add_flag("--json", c.json, "Print the comparison as JSON instead of Markdown");
  c.command->add_option("--seed", c.seed, "Bootstrap seed (default 1)")->check(unsigned_integer());
  c.command->add_option("--resamples", c.resamples, "Bootstrap resamples for the CIs (default 1000)")
      ->check(CLI::Range(0, 100000));
}

int compare_command(const CompareCommand& c) {
  const ResultsDocument base = read_results_file(c.base);
  const ResultsDocument next = read_results_file(c.next);
  require_raw_samples(base, c.base);
  require_raw_samples(next, c.next);
  const CompareOptions o{c.max_regression, c.seed, c.resamples};
  Comparison cmp = compare_results(base.results, next.results, o);
  cmp.base_file = c.base;
  cmp.next_file = c.next;
  if (c.json) std::cout << comparison_to_json(cmp).dump(1) << "\n";
  else std::cout << comparison_markdown(cmp);
  for (const auto& t : cmp.tenants)
    if (t.verdict == ChangeClass::worse)
      std::cerr << "interference-bench: compare: worse: " << printable(t.id.scenario) << " (" << t.id.mode << "), tenant "
                << printable(t.id.tenant) << ": " << t.reason << "\n";
  if (cmp.tenants.empty()) std::cerr << "interference-bench: compare: no tenant of " << c.base << " is in " << c.next << "\n";
  return cmp.exit_code;
}

void add_report_command(CLI::App& app, ReportCommand& c) {
  c.command = app.add_subcommand("report", "Render outputs again from a saved results.json (runs nothing)");
  c.command->add_option("results", c.results, "A results.json")->required();
  c.command->add_option("--junit", c.junit, "Write JUnit XML here (one testcase per tenant verdict)");
  c.command->add_option("--prometheus", c.prometheus, "Write Prometheus text (node-exporter textfile collector) here");
  c.command->add_option("--html", c.html, "Write the HTML report (charts, no network) to this file");
}

void check_html_available(const std::string& option) {
  if (!html_report_available()) throw CannotRunError(option + ": " + html_report_unavailable_reason());
}

int report_command(const ReportCommand& c) {
  if (c.junit.empty() && c.prometheus.empty() && c.html.empty())
    throw InputError("report: nothing to write: give --html FILE, --junit FILE or --prometheus FILE");
  if (!c.html.empty()) check_html_available("report --html");
  const ResultsDocument doc = read_results_file(c.results);
  if (!c.html.empty()) write_file_atomic(c.html, html_report(doc.results));
  if (!c.junit.empty()) write_file_atomic(c.junit, junit_xml(doc.results));
  if (!c.prometheus.empty()) write_file_atomic(c.prometheus, prometheus_text(doc.results));
  return 0;
}

std::optional<int> run_result_command(const CompareCommand& compare, const ReportCommand& report) {
  if (compare.command && *compare.command) return compare_command(compare);
  if (report.command && *report.command) return report_command(report);
  return std::nullopt;
}

}  // namespace ib
