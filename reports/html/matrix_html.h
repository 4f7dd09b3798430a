// matrix.html (docs/matrix.md): the heatmap, victim rows by aggressor columns, each cell coloured by its
// verdict (and shaded by its P95 slowdown), predicted cells hatched; the pairs that may share and the packing.
// One self-contained page, no script, no network. Formats one MatrixResult; computes nothing.
#pragma once

#include "harness/results/matrix.h"

#include <string>

namespace ib {

std::string matrix_html(const MatrixResult& result);

}  // namespace ib
