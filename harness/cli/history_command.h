// `--history DB` on run (harness/history/history.h records the run after results.json is written) and the
// `history` command that prints the trend. Exit codes (docs/design.md section 8): a history database that
// cannot be used never costs the run its results (results.json is written first) and never hides the
// run's own verdict code: one line naming the file on stderr, and the run exits with its own code, or
// 3 (cannot run what was asked) when that code was 0.
#pragma once

#include "harness/results/results.h"

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace ib {

struct HistoryCommand {
  CLI::App* sub = nullptr;
  std::string db;
  std::optional<std::string> scenario, tenant;
  int last = 0;
  bool json = false;
};

// `history DB [--scenario S] [--tenant T] [--last N] [--json]`.
void add_history_command(CLI::App& app, HistoryCommand& command);

// Prints the trend: 0; a missing file or one that is not a history database: 2; one that cannot be
// read now (locked): 3.
int history_command(const HistoryCommand& command);

// Records a finished run in `db` (after results.json is written) and returns the exit code the run
// ends with: `run_exit_code`, or exit_code_after_history_failure with one line on stderr.
int record_run_history(const std::string& db, const Results& results, const std::string& results_file, int run_exit_code);

}  // namespace ib
