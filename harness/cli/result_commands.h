// Commands over saved results files (they run nothing): `compare BASE NEW` and `report RESULTS`. Each
// reads its files with the one reader (harness/results/results_reader.h): a file that does not read, or of
// another schema major, is exit 2 with one line naming the file and the field.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ib {

struct CompareCommand {
  CLI::App* command = nullptr;
  std::vector<std::string> files;  // BASE NEW, or NEW alone with --against-history
  std::string history;             // --against-history DB
  int window = 7;                  // --window N: the last N recorded runs
  std::string base, next;
  double max_regression = 0.05;  // kDefaultMaxRegression
  bool json = false;
  std::uint64_t seed = 1;
  int resamples = 1000;
};
void add_compare_command(CLI::App& app, CompareCommand& c);
// The comparison on stdout (Markdown, or JSON with --json); a line on stderr per tenant that is worse.
// With --against-history, BASE is the last N runs the history database recorded of each of NEW's
// tenants, read from the results files it names, their repetitions pooled (night-to-night variation
// then enters the bootstrap at the repetition level); a file that is gone or has no raw samples is
// skipped with a note, and no usable history is exit 5 (nothing to judge against yet).
// Exit 1 when a tenant is worse, else 5 when one is inconclusive (or nothing matched), else 0.
// When either file is a matrix.json (matrix_reader.h, is_matrix_file), both are read as matrices and compared
// cell by cell (analysis/matrix_compare.h): exit 1 when a cell is worse or a pair stopped sharing on a failing
// direction, else 5 when something is inconclusive, else 0.
int compare_command(CompareCommand c);

struct ReportCommand {
  CLI::App* command = nullptr;
  std::string results;
  std::string junit, prometheus, html;
  bool force = false;  // --force: replace output files that exist
};
void add_report_command(CLI::App& app, ReportCommand& c);
// Re-renders the outputs asked for from a saved results.json; exit 0 when they were written, 3 for
// --html in a build without Chart.js. A matrix.json renders its heatmap page (matrix.html) with --html only.
int report_command(const ReportCommand& c);

// --html (on run or report): refuses (CannotRunError, exit 3) before anything runs when this build
// cannot write it.
void check_html_available(const std::string& option);

// Runs whichever of the two was given; nullopt when neither.
std::optional<int> run_result_command(const CompareCommand& compare, const ReportCommand& report);

}  // namespace ib
