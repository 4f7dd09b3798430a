#include "harness/vet/matrix_runs.h"

#include "harness/core/errors.h"
#include "harness/core/exit_codes.h"
#include "harness/core/files.h"
#include "harness/core/text.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

namespace ib {

namespace {

using json = nlohmann::json;

}  // namespace

json matrix_timing(const PlatformOptions& o) {
  json t = json::object();
  if (o.matrix.warmup_s) t["warmup_s"] = *o.matrix.warmup_s;
  if (o.phase_s) t["duration_s"] = *o.phase_s;
  return t;
}

MatrixChildRun run_matrix_child(const PlatformOptions& o, const json& scenario, const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/scenario.json";
  write_file_atomic(file, scenario.dump(2) + "\n");
  MatrixChildRun c;
  const auto t0 = std::chrono::steady_clock::now();
  // The run's own watchdog ends a hung worker; this limit only bounds a run that never stops deciding.
  const ChildRun run = run_self(o, child_run_args(o, o.matrix.mode, file), dir + "/run", o.sweep_budget_s + 600.0);
  c.run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.run.exit_code = run.exit_code;
  c.run.results_file = dir + "/run/results.json";
  if (run.exit_code == kExitBadInput) throw InputError("matrix: " + scenario.value("description", "") + ": " + child_last_line(run.output));
  if (run.exit_code == kExitInterrupted) {
    c.run.outcome = MatrixRunOutcome::interrupted;
    c.run.reason = "interrupted";
  } else if (run.exit_code == kExitCannotRun) {
    c.run.outcome = MatrixRunOutcome::cannot_run;
    c.run.reason = child_last_line(run.output);
  } else if (!run.results) {
    c.run.outcome = MatrixRunOutcome::failed;
    c.run.reason = "its run wrote no results: " + child_last_line(run.output);
  } else {
    c.run.outcome = run.exit_code == kExitWorkloadFailed ? MatrixRunOutcome::failed : MatrixRunOutcome::measured;
    if (c.run.outcome == MatrixRunOutcome::failed) c.run.reason = "a workload failed (exit 4): see " + c.run.results_file;
    c.results = run.results;
  }
  return c;
}

MatrixCell measured_cell(const ResultsDocument& doc, const std::string& tenant, std::size_t victim, std::size_t aggressor) {
  MatrixCell c;
  c.victim = victim;
  c.aggressor = aggressor;
  c.source = CellSource::measured;
  for (const TenantAggregate& a : doc.results.aggregates) {
    if (a.tenant != tenant) continue;
    c.verdict = a.verdict;
    c.verdict_reason = a.verdict_reason;
    // A phase left without clean blocks has metrics whose figures are not numbers: no estimate, the reason says why.
    if (a.metrics && std::isfinite(a.metrics->p95_slowdown.value)) {
      c.p95_slowdown = a.metrics->p95_slowdown;
      c.median_slowdown = a.metrics->median_slowdown;
    }
    return c;
  }
  c.verdict = Verdict::error;
  c.verdict_reason = "its run has no result for tenant " + tenant;
  return c;
}

bool matrix_run_skipped(const PlatformOptions& o, const std::vector<const MatrixRun*>& done,
                        std::chrono::steady_clock::time_point t0, bool& interrupted, MatrixRun& run) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double sum = 0.0;
  int n = 0;
  for (const MatrixRun* d : done)
    if (d->outcome == MatrixRunOutcome::measured || d->outcome == MatrixRunOutcome::failed) {
      sum += d->seconds;
      ++n;
    }
  if (interrupted || (o.stop && o.stop())) {
    interrupted = true;
    run.outcome = MatrixRunOutcome::interrupted;
    run.reason = "the matrix was interrupted before this run";
  } else if (n > 0 && elapsed + sum / n > o.sweep_budget_s) {
    run.outcome = MatrixRunOutcome::skipped_budget;
    run.reason = "--budget " + significant(o.sweep_budget_s, 4) + " s: " + significant(elapsed, 3) +
                 " s spent, and a run takes about as long as those before it";
  } else {
    return false;
  }
  return true;
}

}  // namespace ib
