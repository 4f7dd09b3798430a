// `compare BASE/matrix.json NEW/matrix.json --json`: the comparison of two matrices
// (harness/results/matrix_comparison.h). Formats; computes nothing.
#pragma once

#include "harness/results/matrix_comparison.h"

#include <nlohmann/json.hpp>

namespace ib {

nlohmann::ordered_json matrix_comparison_to_json(const MatrixComparison& c);

}  // namespace ib
