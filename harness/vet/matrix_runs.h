// The child runs of `matrix` (docs/design.md section 14): each is this binary's `run` of a small scenario in
// the matrix's mode (platform.h run_self), so it has every guarantee of a run: rounds, foreign-load control,
// run-until-decided, verdicts, the watchdog. Shared by the pairs (matrix_command.cpp) and --predict's profiles
// (matrix_predict_command.cpp).
#pragma once

#include "harness/results/matrix.h"
#include "harness/results/results_reader.h"
#include "harness/vet/platform.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ib {

// What one child run gave: what became of it, and its results read back (empty when it wrote none).
struct MatrixChildRun {
  MatrixRun run;
  std::optional<ResultsDocument> results;
};

// The timing keys every run of the matrix gets in its scenario: warmup_s and duration_s from --warmup and
// --duration where given (else the runs' defaults).
nlohmann::json matrix_timing(const PlatformOptions& o);

// Runs `scenario` (written to dir/scenario.json) as `run --mode <o.matrix.mode>` with --out dir/run. A child
// that says the scenario is bad (exit 2) is the matrix's bad input: throws InputError with its last line.
MatrixChildRun run_matrix_child(const PlatformOptions& o, const nlohmann::json& scenario, const std::string& dir);

// Tenant `tenant`'s aggregate in a run's results as the cell (victim, aggressor): P95 slowdown with its
// interval, median slowdown, verdict; an error cell with the reason when the tenant has no metrics.
MatrixCell measured_cell(const ResultsDocument& doc, const std::string& tenant, std::size_t victim, std::size_t aggressor);

// Whether the next run fits what is left of --budget, judged by the mean wall time of `done` (never skips
// the first run), or a stop signal arrived; fills `run` with why it is not to run (skipped_budget,
// interrupted) and returns true then.
bool matrix_run_skipped(const PlatformOptions& o, const std::vector<const MatrixRun*>& done,
                        std::chrono::steady_clock::time_point t0, bool& interrupted, MatrixRun& run);

}  // namespace ib
