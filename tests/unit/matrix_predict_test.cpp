// matrix --predict's model (harness/vet/matrix_predict.h): the curves, the inversion, the interpolation, the
// predicted cells, the sampled pairs and the error, on hand-computed values (docs/methodology.md).
#include "harness/core/errors.h"
#include "harness/vet/matrix_predict.h"
#include "reports/markdown/matrix_markdown.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ib {
namespace {

constexpr double kTol = 1e-12;

std::vector<CurvePoint> points(std::vector<std::pair<double, double>> xy) {
  std::vector<CurvePoint> out;
  for (const auto& [l, s] : xy) out.push_back({l, s});
  return out;
}

void expect_points(const std::vector<CurvePoint>& got, const std::vector<std::pair<double, double>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].level, want[i].first, kTol) << i;
    EXPECT_NEAR(got[i].slowdown, want[i].second, kTol) << i;
  }
}

TEST(MatrixPredict, CurvePointsStartAtZeroAndSkipUnmeasuredLevels) {
  expect_points(curve_points({0.3, 0.6, 1.0}, {0.1, std::nullopt, 0.5}), {{0, 0}, {0.3, 0.1}, {1.0, 0.5}});
  expect_points(curve_points({0.3, 0.6}, {std::nullopt, std::nullopt}), {{0, 0}});
  expect_points(curve_points({0.3, 0.6}, {std::nan(""), 0.2}), {{0, 0}, {0.6, 0.2}});  // too few samples for a P95
}

TEST(MatrixPredict, MonotoneCurveRaisesADip) {
  expect_points(monotone_curve(points({{0, 0}, {0.3, 0.2}, {0.6, 0.1}, {1.0, 0.5}})),
                {{0, 0}, {0.3, 0.2}, {0.6, 0.2}, {1.0, 0.5}});
  // A negative first measurement (noise) is raised to the implied (0, 0).
  expect_points(monotone_curve(points({{0, 0}, {0.3, -0.02}, {0.6, 0.3}})), {{0, 0}, {0.3, 0}, {0.6, 0.3}});
}

TEST(MatrixPredict, ReadCurveInterpolatesAndClampsBeyondTheTop) {
  const auto c = points({{0, 0}, {0.3, 0.15}, {0.6, 0.45}, {1.0, 1.0}});
  EXPECT_NEAR(read_curve(c, 0.45).value, 0.30, kTol);   // halfway between 0.15 and 0.45
  EXPECT_NEAR(read_curve(c, 0.8).value, 0.725, kTol);   // 0.45 + 0.5 x 0.55
  EXPECT_NEAR(read_curve(c, 0.3).value, 0.15, kTol);
  EXPECT_NEAR(read_curve(c, 0.0).value, 0.0, kTol);
  EXPECT_FALSE(read_curve(c, 1.0).clamped);
  const CurveReading beyond = read_curve(c, 1.2);
  EXPECT_NEAR(beyond.value, 1.0, kTol);
  EXPECT_TRUE(beyond.clamped);
}

TEST(MatrixPredict, InvertCurveFindsTheLevelOfASlowdown) {
  const auto c = points({{0, 0}, {0.3, 0.2}, {0.6, 0.2}, {1.0, 0.6}});
  EXPECT_NEAR(invert_curve(c, 0.1).value, 0.15, kTol);
  EXPECT_NEAR(invert_curve(c, 0.2).value, 0.3, kTol);  // a flat stretch: its lowest level
  EXPECT_NEAR(invert_curve(c, 0.4).value, 0.8, kTol);  // 0.6 + (0.2 / 0.4) x 0.4
  EXPECT_NEAR(invert_curve(c, -0.05).value, 0.0, kTol);
  EXPECT_FALSE(invert_curve(c, 0.6).clamped);
  EXPECT_NEAR(invert_curve(c, 0.6).value, 1.0, kTol);
  const CurveReading beyond = invert_curve(c, 0.7);
  EXPECT_NEAR(beyond.value, 1.0, kTol);
  EXPECT_TRUE(beyond.clamped);
  // Read back: the inverse of a strictly rising curve is exact.
  const auto rising = points({{0, 0}, {0.3, 0.1}, {0.6, 0.4}, {1.0, 1.0}});
  for (double s : {0.05, 0.1, 0.25, 0.7, 1.0}) EXPECT_NEAR(read_curve(rising, invert_curve(rising, s).value).value, s, kTol);
}

MatrixResult host_matrix(std::size_t n) {
  MatrixResult r;
  r.backend = "host";
  r.cutoff = 0.40;
  for (std::size_t i = 0; i < n; ++i) r.workloads.push_back({"w" + std::to_string(i), "host-compute", {}});
  return r;
}

TEST(MatrixPredict, PlanCountsRunsAndRefusesCuda) {
  const MatrixResult r = host_matrix(5);
  const MatrixPrediction p = plan_prediction(r);
  EXPECT_EQ(p.levels, (std::vector<double>{0.3, 0.6, 1.0}));
  EXPECT_EQ(p.workloads.size(), 5u);
  EXPECT_EQ(p.runs, 3u + 15u + 5u);  // the reporter's ladder, five ladders, five pressures
  EXPECT_EQ(p.full_matrix_runs, 15u);
  EXPECT_EQ(p.bubble_workload, "host-bubble");
  PlatformOptions o;
  o.matrix.predict_sample = 3;
  EXPECT_EQ(prediction_run_count(o, 5), 26u);
  o.matrix.predict_sample = 100;
  EXPECT_EQ(prediction_run_count(o, 5), 23u + 15u);  // at most every pair
  MatrixResult cuda = host_matrix(2);
  cuda.backend = "cuda";
  try {
    plan_prediction(cuda);
    FAIL() << "cuda planned";
  } catch (const CannotRunError& e) {
    EXPECT_NE(std::string(e.what()).find("calibrated pressure workload"), std::string::npos) << e.what();
  }
}

// A world whose answer is known: victim i's slowdown is s_i x level (s = 0, 0.5, 1, 2), the reporter's is the
// level itself, and aggressor j presses at p_j (0, 0.45, 0.8, 1.0), so the reporter beside j slows by p_j and
// the model must give s_i x p_j exactly; a fifth aggressor presses beyond the ladder (1.3: clamped at 1.0).
TEST(MatrixPredict, PredictedCellsOfAKnownLinearWorld) {
  MatrixResult r = host_matrix(5);
  r.prediction = plan_prediction(r);
  MatrixPrediction& p = *r.prediction;
  const std::vector<double> sensitivity = {0.0, 0.5, 1.0, 2.0, 1.0};
  const std::vector<double> pressure = {0.0, 0.45, 0.8, 1.0, 1.3};
  for (double l : p.levels) p.reporter_curve.slowdowns.push_back(l);
  for (std::size_t i = 0; i < 5; ++i) {
    for (double l : p.levels) p.workloads[i].curve.slowdowns.push_back(sensitivity[i] * l);
    p.workloads[i].reporter_slowdown = pressure[i];
  }
  fill_pressures(p);
  predict_cells(r);
  ASSERT_EQ(r.cells.size(), 25u);
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 4; ++j) {
      const MatrixCell& c = r.cell(i, j);
      ASSERT_TRUE(c.p95_slowdown) << i << "," << j;
      EXPECT_NEAR(c.p95_slowdown->value, sensitivity[i] * pressure[j], 1e-12) << i << "," << j;
      EXPECT_EQ(c.source, CellSource::predicted);
      EXPECT_EQ(c.verdict, sensitivity[i] * pressure[j] <= 0.40 ? Verdict::pass : Verdict::fail) << i << "," << j;
      EXPECT_EQ(c.victim, i);
      EXPECT_EQ(c.aggressor, j);
    }
  EXPECT_TRUE(p.workloads[4].pressure_clamped);
  EXPECT_NEAR(*p.workloads[4].pressure, 1.0, kTol);
  EXPECT_NEAR(r.cell(3, 4).p95_slowdown->value, 2.0, kTol);
  EXPECT_NE(r.cell(3, 4).verdict_reason.find("lower bound"), std::string::npos);
  EXPECT_EQ(r.cell(3, 3).p95_slowdown->ci_low, r.cell(3, 3).p95_slowdown->value);
}

TEST(MatrixPredict, AWorkloadWithoutCurveOrPressureGivesErrorCells) {
  MatrixResult r = host_matrix(2);
  r.prediction = plan_prediction(r);
  MatrixPrediction& p = *r.prediction;
  p.reporter_curve.slowdowns = {0.3, 0.6, 1.0};
  p.workloads[0].curve.slowdowns = {0.1, 0.2, 0.4};
  p.workloads[0].reporter_slowdown = 0.3;
  p.workloads[1].curve.slowdowns = {std::nullopt, std::nullopt, std::nullopt};  // its ladder failed
  p.workloads[1].reporter_slowdown = 0.6;
  fill_pressures(p);
  predict_cells(r);
  EXPECT_NEAR(*p.workloads[1].pressure, 0.6, kTol);  // a pressure without a curve
  EXPECT_NE(p.workloads[1].reason.find("no level"), std::string::npos);
  EXPECT_EQ(r.cell(1, 0).verdict, Verdict::error);
  EXPECT_FALSE(r.cell(1, 0).p95_slowdown);
  EXPECT_NE(r.cell(1, 0).verdict_reason.find("w1"), std::string::npos);
  ASSERT_TRUE(r.cell(0, 1).p95_slowdown);  // its column is still predicted
  EXPECT_NEAR(r.cell(0, 1).p95_slowdown->value, 0.2, kTol);
  p.workloads[0].reporter_slowdown.reset();
  fill_pressures(p);
  EXPECT_FALSE(p.workloads[0].pressure);
  EXPECT_NE(p.workloads[0].reason.find("reporter"), std::string::npos);
}

// The reporter's curve is made non-decreasing before it is inverted: with a dip (0.3, 0.3), (0.6, 0.2), (1, 1)
// a slowdown of 0.5 lies between (0.6, 0.3) and (1, 1) of the raised curve: 0.6 + 0.4 x 0.2 / 0.7 (the raw
// curve would give 0.6 + 0.4 x 0.3 / 0.8 = 0.75).
TEST(MatrixPredict, PressureIsReadOnTheReportersMonotoneCurve) {
  MatrixResult r = host_matrix(1);
  r.prediction = plan_prediction(r);
  MatrixPrediction& p = *r.prediction;
  p.reporter_curve.slowdowns = {0.3, 0.2, 1.0};
  p.workloads[0].curve.slowdowns = {0.1, 0.2, 0.3};
  p.workloads[0].reporter_slowdown = 0.5;
  fill_pressures(p);
  ASSERT_TRUE(p.workloads[0].pressure);
  EXPECT_NEAR(*p.workloads[0].pressure, 0.6 + 0.4 * 0.2 / 0.7, kTol);
  EXPECT_FALSE(p.workloads[0].pressure_clamped);
  EXPECT_TRUE(p.workloads[0].reason.empty()) << p.workloads[0].reason;
}

TEST(MatrixPredict, SamplePairsSpreadOverThePredictedRange) {
  MatrixResult r = host_matrix(3);
  r.cells.assign(9, MatrixCell{});
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      Estimate e{};
      e.value = 0.1 * i + 0.01 * j;  // pair {a <= b}'s larger cell: 0.1 b + 0.01 a
      r.cell(i, j).p95_slowdown = e;
    }
  using P = std::vector<std::pair<std::size_t, std::size_t>>;
  // Ordered: {0,0} 0, {0,1} .10, {1,1} .11, {0,2} .20, {1,2} .21, {2,2} .22; ranks 0, round(2.5) = 3, 5.
  EXPECT_EQ(choose_sample_pairs(r, 3), (P{{0, 0}, {0, 2}, {2, 2}}));
  EXPECT_EQ(choose_sample_pairs(r, 1), (P{{1, 1}}));
  EXPECT_EQ(choose_sample_pairs(r, 6).size(), 6u);
  EXPECT_EQ(choose_sample_pairs(r, 60).size(), 6u);
  EXPECT_TRUE(choose_sample_pairs(r, 0).empty());
  r.cell(2, 0).p95_slowdown.reset();  // {0, 2} has an unpredicted direction: never sampled
  EXPECT_EQ(choose_sample_pairs(r, 3), (P{{0, 0}, {1, 1}, {2, 2}}));  // 5 left: ranks 0, 2, 4
}

// matrix.md's prediction section: the curves, the pressures, each checked cell and the error with its interval.
TEST(MatrixPredict, TheMarkdownShowsTheCurvesTheChecksAndTheError) {
  MatrixResult r = host_matrix(2);
  r.prediction = plan_prediction(r);
  MatrixPrediction& p = *r.prediction;
  p.reporter_curve.slowdowns = {0.3, 0.6, 1.0};
  p.workloads[0].curve.slowdowns = {0.25, std::nullopt, 0.75};
  p.workloads[0].reporter_slowdown = 1.5;  // beyond the reporter's top: clamped
  p.workloads[1].curve.slowdowns = {0.0, 0.0, 0.1};
  p.workloads[1].reporter_slowdown = 0.0;
  fill_pressures(p);
  predict_cells(r);
  p.checks = {{0, 1, 0.0, 0.05, -5.0}, {1, 0, 0.1, 0.02, 8.0}};
  p.error = prediction_error(p.checks);
  const std::string md = matrix_markdown(r);
  EXPECT_NE(md.find("## Prediction"), std::string::npos) << md;
  EXPECT_NE(md.find("| w0 | +25.0% | - | +75.0% | 1 (beyond the top level) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| w1 | +0.0% | +0.0% | +10.0% | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| w0 | w1 | +0.0% | +5.0% | -5.0 |"), std::string::npos) << md;
  // |errors| 5 and 8: mean 6.5, sd 2.1213, se 1.5, t(0.975, 1) = 12.7062: [0 (cut), 25.6].
  EXPECT_NE(md.find("**Error: 6.5 points** mean absolute over 2 cells [0.0, 25.6] (95%, Student's t); mean signed +1.5, "
                    "largest 8.0."), std::string::npos) << md;
  p.checks.clear();
  p.error.reset();
  EXPECT_NE(matrix_markdown(r).find("error is unknown"), std::string::npos);
}

TEST(MatrixPredict, ErrorIsTheMeanAbsoluteErrorWithAStudentInterval) {
  std::vector<PredictionCheck> checks;
  for (double e : {1.0, -2.0, 3.0, -4.0, 5.0}) checks.push_back({0, 0, 0.0, 0.0, e});
  const auto err = prediction_error(checks);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->cells, 5u);
  EXPECT_NEAR(err->mean_abs_error_points, 3.0, kTol);
  EXPECT_NEAR(err->mean_error_points, 0.6, kTol);
  EXPECT_NEAR(err->max_abs_error_points, 5.0, kTol);
  // sd of 1..5 = sqrt(2.5), se = 0.70711, t(0.975, 4) = 2.776445: 3 -/+ 1.963243.
  ASSERT_TRUE(err->ci_low_points && err->ci_high_points);
  EXPECT_NEAR(*err->ci_low_points, 1.036757, 1e-5);
  EXPECT_NEAR(*err->ci_high_points, 4.963243, 1e-5);
  // One cell: no interval; a wide one is cut at 0.
  EXPECT_FALSE(prediction_error({{0, 0, 0.0, 0.0, 2.0}})->ci_low_points);
  const auto wide = prediction_error({{0, 0, 0, 0, 0.0}, {0, 0, 0, 0, 0.0}, {0, 0, 0, 0, -10.0}});
  EXPECT_NEAR(*wide->ci_low_points, 0.0, kTol);
  EXPECT_NEAR(*wide->ci_high_points, 10.0 / 3 + 4.302653 * std::sqrt(100.0 / 3) / std::sqrt(3.0), 1e-4);
  EXPECT_FALSE(prediction_error({}));
}

}  // namespace
}  // namespace ib
