#include "harness/cli/history_command.h"

#include "harness/core/exit_codes.h"
#include "harness/core/text.h"
#include "harness/history/history.h"
#include "reports/history_writer.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

namespace ib {

namespace {

void print_error(const std::string& context, const HistoryError& e) {
  std::cerr << "interference-bench: " << context << printable(e.what(), 400) << "\n";
}

}  // namespace

void add_history_command(CLI::App& app, HistoryCommand& c) {
  c.sub = app.add_subcommand("history", "Print the trend stored by --history DB: one line per run per tenant");
  c.sub->add_option("db", c.db, "History database (SQLite) written by run --history")->required();
  c.sub->add_option("--scenario", c.scenario, "Only this scenario");
  c.sub->add_option("--tenant", c.tenant, "Only this tenant");
  c.sub->add_option("--last", c.last, "Only the last N runs (default: all)")->check(CLI::Range(1, 1000000));
  c.sub->add_flag("--json", c.json, "Print every field as JSON on stdout instead of one line per run and tenant");
}

int history_command(const HistoryCommand& c) {
  require_history("history");
  try {
    const auto records = history_trend(c.db, {c.scenario, c.tenant, c.last});
    if (c.json) std::cout << history_json(records).dump(2) << "\n";
    else std::cout << history_text(records);
    return kExitPass;
  } catch (const HistoryError& e) {
    print_error("history: ", e);
    return e.problem() == HistoryProblem::locked ? kExitCannotRun : kExitBadInput;
  }
}

int record_run_history(const std::string& db, const Results& results, const std::string& results_file, int run_exit_code) {
  try {
    record_run(db, results, std::filesystem::absolute(results_file).lexically_normal().string());
    return run_exit_code;
  } catch (const HistoryError& e) {
    print_error("--history: not recorded (" + results_file + " is written): ", e);
    return exit_code_after_history_failure(run_exit_code);
  }
}

}  // namespace ib
