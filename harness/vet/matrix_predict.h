// `matrix --predict` (docs/design.md section 14; the model in docs/methodology.md "Predicted co-location"), after
// Bubble-Up (MICRO'11) and Prophet (ASPLOS'17): each workload profiled against a calibrated pressure ladder
// (host-bubble at k levels) gives its sensitivity curve; the fixed reporter beside it gives its pressure on the
// ladder's scale; a pair is read from the two. Pure functions here (matrix_predict.cpp), the runs that feed them
// in matrix_predict_command.cpp (run_prediction).
#pragma once

#include "harness/results/matrix.h"
#include "harness/vet/platform.h"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ib {

// The host ladder: host-bubble's levels (its core share), its period, and the reporter: a CPU-bound product of
// about 13 ms a sample, longer than the bubble's period and the scheduler's slice, so it feels a share of its
// core rather than where in a period its samples fall (scenarios/host/one-core-pair.json's tenant).
constexpr double kLadderLevels[] = {0.3, 0.6, 1.0};
constexpr double kBubblePeriodMs = 10.0;
constexpr const char* kHostReporter = "host-compute:n=128:reps=8";

// A point of a curve: a ladder level and the P95 slowdown there (a fraction).
struct CurvePoint {
  double level = 0.0;
  double slowdown = 0.0;
};

// (0, 0) and each measured level's point, levels ascending (`levels` is); unmeasured levels (none, or a NaN: a run
// too short for a P95) are left out.
std::vector<CurvePoint> curve_points(const std::vector<double>& levels, const std::vector<std::optional<double>>& slowdowns);

// The curve made non-decreasing: each point's slowdown raised to the largest before it (a noisy dip is not
// taken to mean that more pressure slows a workload less).
std::vector<CurvePoint> monotone_curve(std::vector<CurvePoint> points);

// A value read from a curve, and whether the level lay beyond the curve's top point (then the top's value).
struct CurveReading {
  double value = 0.0;
  bool clamped = false;
};

// Linear interpolation between the points around `level` (points as curve_points gives them, at least (0, 0));
// below 0: the first point's value; beyond the top level: the top's value, clamped.
CurveReading read_curve(const std::vector<CurvePoint>& points, double level);

// The level at which a non-decreasing curve reaches `slowdown`: 0 at or below its start; on a flat stretch the
// stretch's lowest level; between points linear; above the top point's slowdown: the top level, clamped.
CurveReading invert_curve(const std::vector<CurvePoint>& monotone_points, double slowdown);

// The prediction's plan for `r`'s workloads: the ladder, the bubble, the reporter, a PredictedWorkload each,
// full_matrix_runs. Throws CannotRunError for a backend without a calibrated pressure workload (cuda).
MatrixPrediction plan_prediction(const MatrixResult& r);

// Each workload's pressure from its reporter_slowdown and the reporter's curve (monotone_curve, invert_curve);
// its reason when it has no curve point, no reporter slowdown, or the reporter has no curve.
void fill_pressures(MatrixPrediction& p);

// r.cells (N x N) from r.prediction: victim i beside aggressor j is i's curve read at j's pressure, source
// predicted, its interval the value itself, pass when it is at most r.cutoff else fail; an error cell with the
// reason when i has no curve or j no pressure.
void predict_cells(MatrixResult& r);

// `count` pairs {a, b} (a <= b) to measure, chosen deterministically and spread over the predicted range: the
// pairs whose two cells are predicted, ordered by the larger of the two (then by index), taken at evenly spaced
// ranks (the lowest and the highest among them); all of them when count is at least their number.
std::vector<std::pair<std::size_t, std::size_t>> choose_sample_pairs(const MatrixResult& r, std::size_t count);

// The prediction's error over `checks`: mean absolute error in points with a Student's t interval (n - 1
// degrees of freedom) over the cells' absolute errors at `confidence`, its low end not below 0; none without checks.
std::optional<PredictionError> prediction_error(const std::vector<PredictionCheck>& checks, double confidence = 0.95);

// How many runs --predict takes for n workloads: the ladder's k for the reporter, n k profiles, n pressures,
// and o.matrix.predict_sample sampled pairs (at most n(n+1)/2); said before anything runs.
std::size_t prediction_run_count(const PlatformOptions& o, std::size_t n);

// The conductor (matrix_predict_command.cpp), called by matrix_command when --predict: runs the reporter's
// ladder, each workload's ladder and its pressure run, fills r.prediction and r.cells (predicted), then measures
// o.matrix.predict_sample pairs (choose_sample_pairs) into r.pairs and their cells into r.cells (measured) and
// reports the error. Stops early (keeping what finished) on a stop signal or when --budget runs out.
void run_prediction(const PlatformOptions& o, MatrixResult& r, const std::string& out_dir,
                    std::chrono::steady_clock::time_point t0);

}  // namespace ib
