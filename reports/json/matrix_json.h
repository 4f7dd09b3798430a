// matrix.json, the outcome of `matrix` (docs/design.md section 14), in the schema reports/matrix.schema.json.
// Formats one MatrixResult; computes nothing.
#pragma once

#include "harness/results/matrix.h"

#include <nlohmann/json.hpp>

namespace ib {

nlohmann::ordered_json matrix_to_json(const MatrixResult& result);

}  // namespace ib
