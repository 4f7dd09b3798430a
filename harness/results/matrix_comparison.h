// The comparison of two saved matrices (`interference-bench compare BASE/matrix.json NEW/matrix.json`): plain
// structs that harness/analysis/matrix_compare.cpp computes and reports/json/matrix_comparison_json and
// reports/markdown/matrix_comparison_markdown format. Definitions: docs/methodology.md, "Comparing two matrices".
#pragma once

#include "harness/core/numbers.h"
#include "harness/results/comparison.h"
#include "harness/stats/metrics.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ib {

// One cell found in both matrices (victim and aggressor matched by workload name): the P95 slowdown of each
// with its interval, and the change NEW - BASE (slowdown points) with an interval from the two, classified
// against --max-regression as compare classifies a tenant's change (classify_change).
struct MatrixCellChange {
  std::string victim, aggressor;
  std::optional<Estimate> base, next;   // none: the cell was not measured in that file
  Verdict base_verdict = Verdict::error, next_verdict = Verdict::error;
  Estimate change{kNaN, kNaN, kNaN};    // NaN: no figure on one side
  ChangeClass verdict = ChangeClass::inconclusive;
  std::string reason;
};

// A pair {a, b} (a == b: a workload beside a copy of itself) that may share in one matrix and not in the other.
// decided: NEW's answer is decided (a stopped pair has a direction that now fails; a started one passes both
// ways); an undecided stop (a direction now inconclusive or not measured) is inconclusive, not worse.
struct MatrixSharingChange {
  std::string a, b;
  bool decided = false;
  std::string reason;
};

struct MatrixComparison {
  std::string base_file, next_file;
  double max_regression = 0.05;
  std::string base_mode, next_mode;
  std::vector<MatrixCellChange> cells;           // every cell of BASE whose two workloads NEW has, in BASE's order
  std::vector<std::string> only_in_base, only_in_next;  // workloads by name
  std::vector<MatrixSharingChange> stopped_sharing, started_sharing;
  // The packing's devices and the workloads it holds, in each (none: that matrix has no packing).
  std::optional<std::size_t> base_devices, next_devices;
  std::size_t base_workloads = 0, next_workloads = 0;
  int better = 0, same = 0, worse = 0, inconclusive = 0;
  // 1: a cell worse or a pair stopped sharing on a decided answer; else 5: a cell or stop inconclusive, or no
  // cell matched; else 0.
  int exit_code = 0;
};

}  // namespace ib
