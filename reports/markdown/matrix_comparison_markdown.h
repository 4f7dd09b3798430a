// `compare BASE/matrix.json NEW/matrix.json`: the comparison of two matrices as Markdown
// (harness/results/matrix_comparison.h). Formats; computes nothing.
#pragma once

#include "harness/results/matrix_comparison.h"

#include <string>

namespace ib {

std::string matrix_comparison_markdown(const MatrixComparison& c);

}  // namespace ib
