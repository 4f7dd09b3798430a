// Two saved matrices compared cell by cell (`interference-bench compare BASE/matrix.json NEW/matrix.json`): each
// cell's P95 slowdown change with an interval from the two cells' intervals, classified against the largest
// tolerated regression by compare's rule (classify_change), the pairs that stopped or started sharing, the
// packing's device count. Pure functions over the result structs; definitions in docs/methodology.md,
// "Comparing two matrices".
#pragma once

#include "harness/results/matrix.h"
#include "harness/results/matrix_comparison.h"

namespace ib {

// NEW - BASE of two estimates known by their 95% intervals, with an interval for the difference by MOVER (the
// method of variance estimates recovery, Newcombe / Zou & Donner): each side's distance from its value to the
// bound that moves the difference the same way, combined in quadrature, so that an asymmetric interval keeps
// its shape: low = d - sqrt((n - n_low)^2 + (b_high - b)^2), high = d + sqrt((n_high - n)^2 + (b - b_low)^2).
// The two runs are independent, so their errors add as variances. NaN bounds when either has none.
Estimate interval_difference(const Estimate& base, const Estimate& next);

// Every cell of BASE whose victim and aggressor NEW also has (by workload name), in BASE's order; a cell without
// a figure on one side, or predicted on one side (a prediction has no interval), is inconclusive. Pairs that
// may share in one and not the other, and the exit code (matrix_comparison.h). Matrices of different modes or
// backends match no cell.
MatrixComparison compare_matrices(const MatrixResult& base, const MatrixResult& next, double max_regression);

}  // namespace ib
