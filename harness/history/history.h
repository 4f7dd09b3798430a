// The history database (`--history DB`): one SQLite file (SQLiteCpp) that nightly runs append to, one
// transaction per run, and that `history` and `compare --against-history` read back. Schema versioned
// by PRAGMA user_version (kHistorySchemaVersion), migrated forward on open; WAL journal mode and a
// busy timeout, so that two jobs on one node can append at the same time. It records what the run's
// results already say (the aggregates and each repetition's figures), never computes.
//
// A database that cannot be used (not a database, locked past the busy timeout, unwritable) throws
// HistoryError naming the file; a run writes results.json before it touches the database, so its
// results never depend on it (harness/cli/history_command.h says which exit code follows).
#pragma once

#include "harness/results/matrix.h"
#include "harness/results/platform_reports.h"
#include "harness/results/results.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ib {

// Version 1: runs and one row per tenant aggregate (no params key, no repetitions, no checks).
// Version 2: + runs.command/suite/backend/verdict, tenants.params_key/repetitions/cutoff/reason,
// the repetitions and checks tables.
// Version 3: + runs.matrix_devices/matrix_workloads (a matrix's packing; its cells are tenant rows).
constexpr int kHistorySchemaVersion = 3;

enum class HistoryProblem { not_a_database, locked, newer_schema, other };

class HistoryError : public std::runtime_error {
 public:
  HistoryError(const std::string& path, HistoryProblem problem, const std::string& message)
      : std::runtime_error(path + ": " + message), path_(path), problem_(problem) {}
  const std::string& path() const { return path_; }
  HistoryProblem problem() const { return problem_; }

 private:
  std::string path_;
  HistoryProblem problem_;
};

struct HistoryOptions {
  int busy_timeout_ms = 60000;  // how long a writer waits for another one's transaction
  // When set, counts the attempts of each write transaction (a retry after a busy answer is one more):
  // the contention test reads it.
  std::atomic<int>* write_attempts = nullptr;
};

// One row of `runs`: one invocation of run, vet, sustain or matrix.
struct HistoryRun {
  std::int64_t id = 0;
  std::string command = "run";  // run | vet | sustain | matrix
  std::string start_time;       // meta.start_time (ISO 8601 UTC)
  std::string host, version, git_sha, suite, backend;
  std::string results_file;     // the results.json (vet.json, sustain.json) the row was taken from
  std::optional<int> exit_code;
  std::string verdict;          // vet/sustain: the document's verdict word; "" for run
  // matrix: the devices its packing uses (none without a packing) and its workloads (one device each alone).
  std::optional<int> matrix_devices, matrix_workloads;
};

// One repetition of a tenant, as the run's results have it.
struct HistoryRepetition {
  int repetition = 1;
  RunStatus run_status = RunStatus::ok;
  WorkerStatus colocated_status = WorkerStatus::not_run;
  Verdict verdict = Verdict::error;
  std::optional<double> throughput_exclusive, throughput_colocated;
  std::string throughput_unit;
};

// What identifies "the same tenant" from night to night.
struct HistoryKey {
  std::string scenario, mode, tenant, workload, params_key;
};

// One tenant aggregate of one run (results.aggregates[]) and its repetitions.
struct HistoryTenantRecord {
  HistoryRun run;
  HistoryKey key;
  int repetitions = 0, repetitions_measured = 0;
  std::optional<double> cutoff;
  std::optional<double> p95_slowdown, p95_ci_low, p95_ci_high, median_slowdown;
  Verdict verdict = Verdict::error;
  std::string verdict_reason;
  std::vector<HistoryRepetition> per_repetition;
};

// One check of vet or sustain.
struct HistoryCheck {
  std::string id, title;
  CheckOutcome status = CheckOutcome::unknown;
  std::string evidence, threshold;
};

// A tenant's params as the history keys them: compact JSON with sorted keys.
std::string history_params_key(const nlohmann::json& params);

// Appends a finished run (its aggregates and repetitions) in one transaction; creates or migrates the
// file. Returns the new run's id. Throws HistoryError.
std::int64_t record_run(const std::string& db, const Results& results, const std::string& results_file,
                        const HistoryOptions& options = {});

// Appends a vet or sustain invocation (`run.command`) and its checks in one transaction.
std::int64_t record_checks(const std::string& db, const HistoryRun& run, const std::vector<HistoryCheck>& checks,
                           const HistoryOptions& options = {});

// Appends a matrix (matrix.json, `matrix_file`) in one transaction: a runs row (command "matrix", the packing's
// device count and the workloads), and one tenants row per cell: scenario "matrix", the matrix's mode, tenant
// "VICTIM beside AGGRESSOR" (the workloads' names), the victim's workload and params, the cell's P95 slowdown
// with its interval, median slowdown, verdict and reason (a predicted cell's reason begins "predicted: "), the
// matrix's cutoff; repetitions 1 (the pair's one run), measured when the cell has a figure, and no per-repetition
// rows. `history DB --scenario matrix` lists them.
std::int64_t record_matrix(const std::string& db, const MatrixResult& matrix, const std::string& matrix_file,
                           const HistoryOptions& options = {});

// What `history` lists: the tenant records of the last `last_runs` runs (0: all) that have a tenant
// matching the filters, oldest first.
struct HistoryFilter {
  std::optional<std::string> scenario, tenant;
  int last_runs = 0;
};
std::vector<HistoryTenantRecord> history_trend(const std::string& db, const HistoryFilter& filter,
                                               const HistoryOptions& options = {});

// What `compare --against-history DB --window N` compares with: the last `last_n` runs' records of
// exactly this (scenario, mode, tenant, workload, params), oldest first; interrupted runs (exit 130),
// matrices' cells and the run of `exclude_results_file` (the results being compared, when run --history has already
// recorded them) left out.
struct HistoryWindow {
  HistoryKey key;
  int last_n = 7;
  std::string exclude_results_file;  // as recorded: run --history records the absolute path
};
std::vector<HistoryTenantRecord> history_window(const std::string& db, const HistoryWindow& window,
                                                const HistoryOptions& options = {});

// The checks of one recorded vet/sustain run.
std::vector<HistoryCheck> history_checks(const std::string& db, std::int64_t run_id, const HistoryOptions& options = {});

// The exit code of a command whose history could not be recorded (its results are written): its own,
// so that the database never hides a verdict, or 3 (cannot do what was asked) when that was 0.
int exit_code_after_history_failure(int own_exit_code);

// False in a build without SQLiteCpp (harness/history/history_unavailable.cpp): every function above then
// throws HistoryError saying so; the commands refuse --history before they measure (require_history).
bool history_available();

// Throws CannotRunError (exit 3) naming `option` when !history_available().
void require_history(const std::string& option);

// PRAGMA user_version of the file (0 for an empty one). Throws HistoryError.
int history_schema_version(const std::string& db);

}  // namespace ib
