// Plain structs of `matrix --predict` (docs/design.md section 14, docs/methodology.md "Predicted co-location"):
// each workload's sensitivity curve against a calibrated pressure ladder and its pressure on the same scale,
// the cells predicted from the two, and the prediction's error on a measured sample of pairs.
// harness/vet/matrix_predict.cpp computes them; the writers of matrix.h format them.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ib {

// One child run (matrix.h, complete there: matrix.h includes this file before it defines MatrixRun; a vector
// of an incomplete type may be declared, and every use of these structs comes after matrix.h).
struct MatrixRun;

// A sensitivity curve: the P95 slowdown (a fraction, 0.25 = +25%) measured beside the bubble at each level of
// the ladder (MatrixPrediction::levels, same order); none where that run gave no figure. (0, 0) is implied.
struct SensitivityCurve {
  std::vector<std::optional<double>> slowdowns;
  std::vector<MatrixRun> runs;  // the run of each level
};

// One workload of the matrix as the model sees it.
struct PredictedWorkload {
  SensitivityCurve curve;                     // as a victim of the bubble
  std::optional<double> reporter_slowdown;    // the reporter's P95 slowdown beside it (its run as an aggressor)
  std::optional<double> pressure;             // that slowdown on the ladder's level scale (the reporter's curve inverted)
  bool pressure_clamped = false;              // the reporter's slowdown beside it is beyond the top level's:
                                              // pressure = the top level, and every prediction with it a lower bound
  std::vector<MatrixRun> pressure_run;        // its run beside the reporter (one, once run)
  std::string reason;                         // why it has no curve or no pressure ("" when it has both)
};

// One cell of a measured pair: the model's figure beside the run's.
struct PredictionCheck {
  std::size_t victim = 0, aggressor = 0;
  double predicted = 0.0;   // P95 slowdown, a fraction
  double measured = 0.0;    // the cell's P95 slowdown (its point estimate)
  double error_points = 0.0;  // 100 x (predicted - measured)
};

// The prediction's error over the checked cells: the mean absolute error in percentage points with a Student's
// t interval over the cells' absolute errors (docs/methodology.md says what it assumes).
struct PredictionError {
  std::size_t cells = 0;
  double mean_abs_error_points = 0.0;
  std::optional<double> ci_low_points, ci_high_points;  // none below 2 cells; the low end never below 0
  double confidence = 0.95;
  double mean_error_points = 0.0;  // signed: > 0 when the model over-predicts on average
  double max_abs_error_points = 0.0;
};

struct MatrixPrediction {
  std::vector<double> levels;                 // the ladder: the bubble's levels, ascending, in (0, 1]
  std::string bubble_workload;                // the calibrated pressure ("host-bubble")
  nlohmann::json bubble_params;               // its params apart from "level"
  std::string reporter;                       // the fixed reporter, as a --workloads item
  nlohmann::json reporter_tenant;             // its tenant object
  SensitivityCurve reporter_curve;            // the reporter beside the bubble
  std::vector<PredictedWorkload> workloads;   // in the matrix's order
  std::vector<std::pair<std::size_t, std::size_t>> sampled_pairs;  // pairs {a, b} measured to check the model
  std::vector<MatrixRun> sample_runs;         // their runs, in the same order
  std::vector<PredictionCheck> checks;        // every measured cell of those pairs (both directions)
  std::optional<PredictionError> error;       // over `checks`, when there is one
  std::size_t runs = 0;             // runs the prediction took (ladder, profiles, pressures): k + N k + N, against
  std::size_t full_matrix_runs = 0; // the full matrix's N(N+1)/2 (the sample's runs are sample_runs)
};

}  // namespace ib
