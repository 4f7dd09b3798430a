// matrix.json, the outcome of `matrix` (docs/design.md section 14), in the schema reports/matrix.schema.json.
// Formats one MatrixResult; computes nothing.
#pragma once

#include "harness/results/matrix.h"

#include <nlohmann/json.hpp>

namespace ib {

nlohmann::ordered_json matrix_to_json(const MatrixResult& result);
// One child run of the matrix (a pair's, or --predict's): outcome, reason, exit code, results file, seconds.
nlohmann::ordered_json matrix_run_to_json(const MatrixRun& run);

}  // namespace ib
