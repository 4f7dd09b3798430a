// PLACEHOLDER until the prediction lands (branch predict).
#include "harness/vet/matrix_predict.h"

#include "harness/core/errors.h"

namespace ib {

std::size_t prediction_run_count(const PlatformOptions&, std::size_t n) { return n; }

void run_prediction(const PlatformOptions&, MatrixResult&, const std::string&, std::chrono::steady_clock::time_point) {
  throw CannotRunError("matrix --predict: not built yet");
}

}  // namespace ib
