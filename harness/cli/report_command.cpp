#include "harness/cli/report_command.h"

#include "harness/core/errors.h"
#include "harness/core/exit_codes.h"
#include "harness/core/files.h"
#include "reports/html_writer.h"
#include "reports/results_reader.h"

#include <CLI/CLI.hpp>

#include <iostream>

namespace ib {

void add_report_command(CLI::App& app, ReportCommand& c) {
  c.sub = app.add_subcommand("report", "Render a results.json again: --html FILE (one self-contained page)");
  c.sub->add_option("results", c.results, "A results.json written by run")->required()->check(CLI::ExistingFile);
  c.sub->add_option("--html", c.html, "Write the HTML report (charts, no network) to this file");
}

void check_html_available(const std::string& option) {
  if (!html_report_available()) throw CannotRunError(option + ": " + html_report_unavailable_reason());
}

int report_command(const ReportCommand& c) {
  if (c.html.empty()) throw InputError("report: give an output, --html FILE");
  check_html_available("report --html");
  const ResultsDocument doc = read_results_file(c.results);
  write_file_atomic(c.html, html_report(doc.results));
  std::cout << "report: " << c.html << "\n";
  return kExitPass;
}

}  // namespace ib
