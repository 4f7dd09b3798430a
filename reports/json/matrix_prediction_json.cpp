#include "reports/json/matrix_prediction_json.h"

namespace ib {

nlohmann::ordered_json matrix_prediction_to_json(const MatrixPrediction& p) {
  return {{"runs", p.runs}, {"full_matrix_runs", p.full_matrix_runs}};
}

}  // namespace ib
