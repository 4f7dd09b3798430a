// Plain structs of `matrix --predict` (docs/design.md section 14, docs/methodology.md): each workload's
// sensitivity curve against a calibrated pressure ladder and its pressure on the same scale, the cells
// predicted from the two, and the prediction's error on a measured sample of pairs.
// harness/vet/matrix_predict.cpp computes them; the writers of matrix.h format them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ib {

struct MatrixPrediction {
  std::size_t runs = 0;             // runs the prediction took (ladder, profiles, pressures), against
  std::size_t full_matrix_runs = 0; // the full matrix's N(N+1)/2
};

}  // namespace ib
