// `interference-bench report RESULTS --html FILE`: renders an existing results.json (read by the one
// reader, reports/results_reader.h) into the HTML report (reports/html_writer.h). Exit codes: 0
// written; 2 the results file does not read (one line naming the file and field) or no output asked
// for; 3 this build has no Chart.js (the report is unavailable).
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace ib {

struct ReportCommand {
  CLI::App* sub = nullptr;
  std::string results;
  std::string html;
};

void add_report_command(CLI::App& app, ReportCommand& command);

// Throws InputError (exit 2) or CannotRunError (exit 3); returns 0.
int report_command(const ReportCommand& command);

// --html on run: refuses (CannotRunError, exit 3) before anything runs when this build cannot write it.
void check_html_available(const std::string& option);

}  // namespace ib
