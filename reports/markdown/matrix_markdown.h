// matrix.md and the summary `matrix` prints (docs/matrix.md): the heatmap as a table (victim rows, aggressor
// columns), the pairs that may share, the packing and its cost, the runs. Formats one MatrixResult;
// computes nothing.
#pragma once

#include "harness/results/matrix.h"

#include <string>

namespace ib {

std::string matrix_markdown(const MatrixResult& result);

// One cell in words: "+12% [+8%, +15%] pass", "+40% (predicted) fail", or "not measured: REASON" (cut).
std::string matrix_cell_words(const MatrixCell& cell);

}  // namespace ib
