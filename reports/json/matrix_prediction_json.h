// The "prediction" object of matrix.json (`matrix --predict`, docs/methodology.md). Formats one
// MatrixPrediction; computes nothing.
#pragma once

#include "harness/results/matrix_prediction.h"

#include <nlohmann/json.hpp>

namespace ib {

nlohmann::ordered_json matrix_prediction_to_json(const MatrixPrediction& prediction);

}  // namespace ib
