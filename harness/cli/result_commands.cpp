// Commands over saved results (result_commands.h): their options, and the calls to what does the work (the
// comparison analysis/compare.h, its history baseline history/history_baseline.h, the writers of reports/).
#include "harness/cli/result_commands.h"

#include "harness/analysis/compare.h"
#include "harness/analysis/matrix_compare.h"
#include "harness/cli/validators.h"
#include "harness/core/errors.h"
#include "harness/core/exit_codes.h"
#include "harness/core/files.h"
#include "harness/core/output_paths.h"
#include "harness/core/text.h"
#include "harness/history/history_baseline.h"
#include "harness/results/matrix_reader.h"
#include "harness/results/results_reader.h"
#include "reports/html/matrix_html.h"
#include "reports/html/results_html.h"
#include "reports/json/comparison_json.h"
#include "reports/json/matrix_comparison_json.h"
#include "reports/junit/results_junit.h"
#include "reports/markdown/comparison_markdown.h"
#include "reports/markdown/matrix_comparison_markdown.h"
#include "reports/prometheus/results_prometheus.h"

#include <iostream>
#include <utility>

namespace ib {

namespace {

// compare resamples the raw samples: a --no-raw file has none to give.
void require_raw_samples(const ResultsDocument& doc, const std::string& file) {
  if (!doc.raw_samples)
    throw InputError(file + ": meta.raw_samples: false; compare needs the raw samples (a run without --no-raw)");
}

// compare of two matrix.json files (either one being a matrix.json decides; the other must be one too): the
// cells that moved beyond --max-regression, the pairs that stopped or started sharing, the packing.
int compare_matrices_command(const CompareCommand& c) {
  if (!c.history.empty())
    throw InputError("compare --against-history: " + c.files.back() + " is a matrix.json; compare two matrices as BASE NEW");
  MatrixComparison cmp = compare_matrices(read_matrix_file(c.files.front()), read_matrix_file(c.files.back()), c.max_regression);
  cmp.base_file = c.files.front();
  cmp.next_file = c.files.back();
  if (c.json) std::cout << matrix_comparison_to_json(cmp).dump(1) << "\n";
  else std::cout << matrix_comparison_markdown(cmp);
  for (const auto& x : cmp.cells)
    if (x.verdict == ChangeClass::worse)
      std::cerr << "interference-bench: compare: worse: " << printable(x.victim) << " beside " << printable(x.aggressor) << ": "
                << x.reason << "\n";
  for (const auto& s : cmp.stopped_sharing)
    std::cerr << "interference-bench: compare: stopped sharing: " << printable(s.a) << " + " << printable(s.b) << ": "
              << printable(s.reason, 300) << "\n";
  if (cmp.cells.empty()) std::cerr << "interference-bench: compare: no cell of " << cmp.base_file << " is in " << cmp.next_file << "\n";
  return cmp.exit_code;
}

bool any_matrix_file(const std::vector<std::string>& files) {
  for (const std::string& f : files)
    if (is_matrix_file(f)) return true;
  return false;
}

}  // namespace

void add_compare_command(CLI::App& app, CompareCommand& c) {
  c.command = app.add_subcommand("compare", "Compare two saved results.json files (or one with its history) tenant by tenant, or two "
                                              "matrix.json files cell by cell: better, same, worse or inconclusive (runs nothing; exit 1 when "
                                              "a tenant or cell is worse or a pair stopped sharing, 5 inconclusive)");
  c.command->add_option("files", c.files, "BASE NEW: the earlier results.json (or matrix.json) and the one to judge (NEW "
                                          "alone with --against-history)")
      ->required()
      ->expected(1, 2);
  c.command->add_option("--against-history", c.history,
                        "Compare NEW with the last --window runs of its tenants recorded in this history database")->check(non_empty());
  c.command->add_option("--window", c.window, "Recorded runs to compare with (default 7)")->check(CLI::Range(1, 1000));
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

int compare_command(CompareCommand c) {
  const bool history = !c.history.empty();
  if (c.files.size() != (history ? 1u : 2u))
    throw InputError(history ? "compare --against-history: give NEW only (BASE is the history)"
                             : "compare: give BASE and NEW (or NEW with --against-history DB)");
  if (any_matrix_file(c.files)) return compare_matrices_command(c);
  c.next = c.files.back();
  const ResultsDocument next = read_results_file(c.next);
  require_raw_samples(next, c.next);
  ResultsDocument base;
  if (history) {
    HistoryBaseline from_history = history_baseline(c.history, c.window, c.next, next.results);
    for (const std::string& why : from_history.skipped)
      std::cerr << "interference-bench: compare: skipped a recorded run: " << printable(why, 300) << "\n";
    base.results = std::move(from_history.base);
    c.base = c.history + " (the last " + std::to_string(c.window) + " recorded runs)";
  } else {
    c.base = c.files.front();
    base = read_results_file(c.base);
    require_raw_samples(base, c.base);
  }
  const CompareOptions o{c.max_regression, c.seed, c.resamples};
  Comparison cmp = compare_results(base.results, next.results, o);
  cmp.base_file = c.base;
  cmp.next_file = c.next;
  if (history && base.results.runs.empty()) {
    std::cerr << "interference-bench: compare: " << c.history << " holds no usable run of " << c.next
              << "'s tenants yet: nothing to judge against\n";
    cmp.exit_code = kExitInconclusive;
  }
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
  c.command = app.add_subcommand("report", "Render outputs again from a saved results.json, or a matrix.json's heatmap "
                                             "page (runs nothing)");
  c.command->add_option("results", c.results, "A results.json (or a matrix.json, with --html)")->required();
  c.command->add_option("--junit", c.junit, "Write JUnit XML here (one testcase per tenant verdict)")->check(non_empty());
  c.command->add_option("--prometheus", c.prometheus, "Write Prometheus text (node-exporter textfile collector) here")->check(non_empty());
  c.command->add_option("--html", c.html, "Write the HTML report (charts, no network) to this file")->check(non_empty());
  c.command->add_flag("--force", c.force, "Replace output files that exist already");
}

void check_html_available(const std::string& option) {
  if (!html_report_available()) throw CannotRunError(option + ": " + html_report_unavailable_reason());
}

namespace {

// report of a matrix.json: its heatmap page again (matrix.html, self-contained: no Chart.js needed).
int report_matrix(const ReportCommand& c) {
  if (!c.junit.empty() || !c.prometheus.empty())
    throw InputError("report: " + c.results + " is a matrix.json: it renders --html only (--junit and --prometheus are for a results.json)");
  OutputPlan plan;
  plan.force = c.force;
  plan.inputs = {{"RESULTS", c.results}};
  plan.outputs.push_back({"--html", c.html});
  check_output_paths(plan);
  write_file_atomic(c.html, matrix_html(read_matrix_file(c.results)));
  return 0;
}

}  // namespace

int report_command(const ReportCommand& c) {
  if (c.junit.empty() && c.prometheus.empty() && c.html.empty())
    throw InputError("report: nothing to write: give --html FILE, --junit FILE or --prometheus FILE");
  if (is_matrix_file(c.results)) return report_matrix(c);
  if (!c.html.empty()) check_html_available("report --html");
  // report has no folder of its own: an existing output file is replaced only with --force.
  OutputPlan plan;
  plan.force = c.force;
  plan.inputs = {{"RESULTS", c.results}};
  for (const auto& [option, path] : {std::pair<const char*, const std::string&>{"--html", c.html},
                                     {"--junit", c.junit}, {"--prometheus", c.prometheus}})
    if (!path.empty()) plan.outputs.push_back({option, path});
  check_output_paths(plan);
  const ResultsDocument doc = read_results_file(c.results);
  // All rendered first, then replaced together: a failure leaves every earlier output as it was.
  std::vector<std::pair<std::string, std::string>> files;
  if (!c.html.empty()) files.push_back({c.html, html_report(doc.results)});
  if (!c.junit.empty()) files.push_back({c.junit, junit_xml(doc.results)});
  if (!c.prometheus.empty()) files.push_back({c.prometheus, prometheus_text(doc.results)});
  write_files_atomic(files);
  return 0;
}

std::optional<int> run_result_command(const CompareCommand& compare, const ReportCommand& report) {
  if (compare.command && *compare.command) return compare_command(compare);
  if (report.command && *report.command) return report_command(report);
  return std::nullopt;
}

}  // namespace ib
