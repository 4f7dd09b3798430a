// Plain structs of `matrix` (docs/design.md section 14): which of a set of workloads may share a device.
// harness/vet/matrix_command.cpp and matrix.cpp compute every field; reports/<format>/matrix_<format>.h format
// them (matrix.json, matrix.md, matrix.html). The prediction's part (--predict) is matrix_prediction.h.
#pragma once

#include "harness/core/names.h"
#include "harness/results/matrix_prediction.h"
#include "harness/stats/metrics.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ib {

constexpr const char* kMatrixSchemaVersion = "1.0";

// One workload of the matrix: a tenant as every run of it is given it (workload, params, placement, or a
// user's command), under a name unique in the matrix.
struct MatrixWorkload {
  std::string name;       // the scenario tenant's name, or the --workloads item as written ("host-compute:n=128")
  std::string workload;   // the registry's name ("command" for a user's program)
  nlohmann::json tenant;  // the tenant object of the runs (its "name" and "role" set by each run)
};

// What became of one run of the matrix (a pair, or --predict's profiles).
// pending: not yet tried (only in the files written while the matrix runs); failed: a workload failed (exit
// 4) or the run wrote no results; cannot_run: the run refused (exit 3) with the reason it gave.
enum class MatrixRunOutcome { pending, measured, failed, cannot_run, skipped_budget, interrupted };
template <>
struct EnumWords<MatrixRunOutcome> {
  static constexpr std::array<const char*, 6> words = {"pending",     "measured",       "failed",
                                                       "cannot_run", "skipped_budget", "interrupted"};
};

// One child run of the matrix: its folder, exit code and wall time.
struct MatrixRun {
  MatrixRunOutcome outcome = MatrixRunOutcome::pending;
  std::string reason;              // why not measured ("" when measured)
  std::optional<int> exit_code;
  std::string results_file;        // its results.json ("" before it ran)
  double seconds = 0.0;            // wall time
};

// One unordered pair {a, b} (a <= b; a == b: a workload beside a copy of itself), measured by one run whose
// two tenants are a and b: each is the other's aggressor.
struct MatrixPair {
  std::size_t a = 0, b = 0;
  MatrixRun run;
};

// Where a cell's figure comes from: a pair's run, or --predict's model (never judged as if measured).
enum class CellSource { measured, predicted };
template <>
struct EnumWords<CellSource> {
  static constexpr std::array<const char*, 2> words = {"measured", "predicted"};
};

// Victim row `victim` beside aggressor column `aggressor`: the victim's P95 slowdown against its exclusive
// phase of the same run, its interval and verdict (docs/design.md section 4). Empty figures when its pair
// was not measured (verdict error with the reason).
struct MatrixCell {
  std::size_t victim = 0, aggressor = 0;
  CellSource source = CellSource::measured;
  std::optional<Estimate> p95_slowdown;   // predicted: value only (ci_low == ci_high == value)
  std::optional<double> median_slowdown;  // median(C)/median(E) - 1 (the cost rule's time ratio)
  Verdict verdict = Verdict::error;       // predicted: from the value against the cutoff (pass / fail), never inconclusive
  std::string verdict_reason;
};

// The fewest devices that hold every workload when only pairs that may share share one (a maximum matching
// of the may-share graph): each device's workloads, by index.
struct MatrixPacking {
  std::vector<std::vector<std::size_t>> devices;
  std::size_t exclusive_devices = 0;      // one per workload
  std::size_t saved = 0;                  // exclusive_devices - devices.size()
  // With --price-exclusive and --price-shared (per device-hour): each shared workload's cost per unit of work
  // by seed 000's rule (T_shared x P_shared vs T_exclusive x P_exclusive, T from its median slowdown).
  struct WorkloadCost {
    std::size_t workload = 0;
    double exclusive_cost_per_hour_of_work = 0.0;  // P_exclusive x 1 (an hour of its exclusive work)
    double shared_cost_per_hour_of_work = 0.0;     // P_shared x (1 + median slowdown)
    bool shared_cheaper = false;
  };
  std::vector<WorkloadCost> costs;        // workloads on shared devices, when priced
  std::optional<double> exclusive_price_per_hour, packed_price_per_hour;  // all devices, when priced
};

struct MatrixResult {
  std::string schema_version = kMatrixSchemaVersion;
  std::vector<std::string> argv;
  std::string version, git_sha, start_time, host;
  std::string backend;
  std::string mode;                       // the sharing mode every pair runs under
  int device = 0;
  double cutoff = 0.40;
  std::optional<double> phase_s;          // --duration of each run (none: the runs' default)
  std::optional<int> rounds;              // --rounds (none: until decided)
  double budget_s = 0.0;
  std::optional<double> price_exclusive, price_shared;  // per device-hour
  std::vector<MatrixWorkload> workloads;
  std::vector<MatrixPair> pairs;          // every unordered pair with the diagonal, in row order
  std::vector<MatrixCell> cells;          // N x N, row-major: cells[victim * N + aggressor]
  // Pairs {a, b} (a < b) whose two directions both pass the cutoff; a workload whose diagonal passes may
  // share with a copy of itself (listed in self_sharing).
  std::vector<std::pair<std::size_t, std::size_t>> may_share;
  std::vector<std::size_t> self_sharing;
  std::optional<MatrixPacking> packing;   // when every pair was decided or judged
  std::optional<MatrixPrediction> prediction;  // --predict
  bool interrupted = false;
  int exit_code = 0;

  const MatrixCell& cell(std::size_t victim, std::size_t aggressor) const { return cells[victim * workloads.size() + aggressor]; }
  MatrixCell& cell(std::size_t victim, std::size_t aggressor) { return cells[victim * workloads.size() + aggressor]; }
};

}  // namespace ib
