#include "harness/vet/matrix_predict.h"

#include "harness/core/errors.h"
#include "harness/stats/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>

namespace ib {

std::vector<CurvePoint> curve_points(const std::vector<double>& levels, const std::vector<std::optional<double>>& slowdowns) {
  std::vector<CurvePoint> points{{0.0, 0.0}};
  for (std::size_t i = 0; i < levels.size() && i < slowdowns.size(); ++i)
    if (slowdowns[i] && std::isfinite(*slowdowns[i])) points.push_back({levels[i], *slowdowns[i]});
  return points;
}

std::vector<CurvePoint> monotone_curve(std::vector<CurvePoint> points) {
  for (std::size_t i = 1; i < points.size(); ++i) points[i].slowdown = std::max(points[i].slowdown, points[i - 1].slowdown);
  return points;
}

CurveReading read_curve(const std::vector<CurvePoint>& points, double level) {
  if (points.empty()) return {0.0, true};
  if (level <= points.front().level) return {points.front().slowdown, false};
  if (level > points.back().level) return {points.back().slowdown, true};
  for (std::size_t i = 1; i < points.size(); ++i) {
    const CurvePoint& a = points[i - 1];
    const CurvePoint& b = points[i];
    if (level <= b.level) {
      const double t = (level - a.level) / (b.level - a.level);
      return {a.slowdown + t * (b.slowdown - a.slowdown), false};
    }
  }
  return {points.back().slowdown, false};
}

CurveReading invert_curve(const std::vector<CurvePoint>& monotone_points, double slowdown) {
  if (monotone_points.empty()) return {0.0, true};
  if (slowdown <= monotone_points.front().slowdown) return {monotone_points.front().level, false};
  if (slowdown > monotone_points.back().slowdown) return {monotone_points.back().level, true};
  for (std::size_t i = 1; i < monotone_points.size(); ++i) {
    const CurvePoint& a = monotone_points[i - 1];
    const CurvePoint& b = monotone_points[i];
    if (slowdown <= b.slowdown) {  // a.slowdown < slowdown here, so b is not flat against a
      const double t = (slowdown - a.slowdown) / (b.slowdown - a.slowdown);
      return {a.level + t * (b.level - a.level), false};
    }
  }
  return {monotone_points.back().level, false};
}

MatrixPrediction plan_prediction(const MatrixResult& r) {
  if (r.backend != "host")
    throw CannotRunError("matrix --predict needs a calibrated pressure workload for the " + r.backend +
                         " backend and only the host's exists (host-bubble); measure every pair instead (without --predict)");
  MatrixPrediction p;
  p.levels.assign(std::begin(kLadderLevels), std::end(kLadderLevels));
  p.bubble_workload = "host-bubble";
  p.bubble_params = {{"period_ms", kBubblePeriodMs}, {"mib", 0}};
  p.reporter = kHostReporter;
  p.reporter_tenant = {{"workload", "host-compute"}, {"params", {{"n", 128}, {"reps", 8}}}};
  const std::size_t n = r.workloads.size();
  p.workloads.resize(n);
  p.full_matrix_runs = n * (n + 1) / 2;
  p.runs = p.levels.size() * (n + 1) + n;
  return p;
}

void fill_pressures(MatrixPrediction& p) {
  const auto reporter = monotone_curve(curve_points(p.levels, p.reporter_curve.slowdowns));
  for (PredictedWorkload& w : p.workloads) {
    w.pressure.reset();
    w.pressure_clamped = false;
    w.reason.clear();
    if (curve_points(p.levels, w.curve.slowdowns).size() < 2) w.reason = "no level of its ladder was measured";
    if (reporter.size() < 2) {
      w.reason = "the reporter's ladder was not measured";
    } else if (!w.reporter_slowdown || !std::isfinite(*w.reporter_slowdown)) {
      if (w.reason.empty()) w.reason = "its run beside the reporter gave no figure";
    } else {
      const CurveReading level = invert_curve(reporter, *w.reporter_slowdown);
      w.pressure = level.value;
      w.pressure_clamped = level.clamped;
    }
  }
}

void predict_cells(MatrixResult& r) {
  const MatrixPrediction& p = *r.prediction;
  const std::size_t n = r.workloads.size();
  r.cells.assign(n * n, MatrixCell{});
  for (std::size_t i = 0; i < n; ++i) {
    const auto curve = curve_points(p.levels, p.workloads[i].curve.slowdowns);
    for (std::size_t j = 0; j < n; ++j) {
      MatrixCell& c = r.cell(i, j);
      c.victim = i;
      c.aggressor = j;
      c.source = CellSource::predicted;
      const PredictedWorkload& aggressor = p.workloads[j];
      if (curve.size() < 2 || !aggressor.pressure) {
        c.verdict = Verdict::error;
        c.verdict_reason = curve.size() < 2 ? r.workloads[i].name + ": " + p.workloads[i].reason
                                            : r.workloads[j].name + ": " + aggressor.reason;
        continue;
      }
      const CurveReading s = read_curve(curve, *aggressor.pressure);
      Estimate e{};
      e.value = e.ci_low = e.ci_high = s.value;
      e.resamples = 0;
      c.p95_slowdown = e;
      c.verdict = s.value <= r.cutoff ? Verdict::pass : Verdict::fail;
      c.verdict_reason = "predicted";
      if (aggressor.pressure_clamped)
        c.verdict_reason += ": the aggressor's pressure is beyond the ladder's top level, so this is a lower bound";
    }
  }
}

std::vector<std::pair<std::size_t, std::size_t>> choose_sample_pairs(const MatrixResult& r, std::size_t count) {
  struct Candidate {
    double key;
    std::size_t a, b;
  };
  std::vector<Candidate> candidates;
  const std::size_t n = r.workloads.size();
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a; b < n; ++b) {
      const auto& ab = r.cell(a, b).p95_slowdown;
      const auto& ba = r.cell(b, a).p95_slowdown;
      if (ab && ba) candidates.push_back({std::max(ab->value, ba->value), a, b});
    }
  // Stable: equal keys keep row order (a, then b).
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) { return x.key < y.key; });
  std::vector<std::size_t> ranks;
  const std::size_t m = candidates.size();
  if (count >= m) {
    ranks.resize(m);
    std::iota(ranks.begin(), ranks.end(), 0);
  } else if (count == 1) {
    ranks.push_back((m - 1) / 2);
  } else {
    // Evenly spaced ranks from 0 to m - 1; the step is at least 1 (count < m), so no rank repeats.
    for (std::size_t q = 0; q < count; ++q)
      ranks.push_back(static_cast<std::size_t>(std::llround(static_cast<double>(q) * (m - 1) / (count - 1))));
  }
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t k : ranks) pairs.emplace_back(candidates[k].a, candidates[k].b);
  return pairs;
}

std::optional<PredictionError> prediction_error(const std::vector<PredictionCheck>& checks, double confidence) {
  if (checks.empty()) return std::nullopt;
  PredictionError e;
  e.cells = checks.size();
  e.confidence = confidence;
  std::vector<double> abs_errors;
  double signed_sum = 0.0;
  for (const PredictionCheck& c : checks) {
    abs_errors.push_back(std::fabs(c.error_points));
    signed_sum += c.error_points;
  }
  const double n = static_cast<double>(abs_errors.size());
  e.mean_abs_error_points = std::accumulate(abs_errors.begin(), abs_errors.end(), 0.0) / n;
  e.mean_error_points = signed_sum / n;
  e.max_abs_error_points = *std::max_element(abs_errors.begin(), abs_errors.end());
  if (abs_errors.size() >= 2) {
    double ss = 0.0;
    for (double x : abs_errors) ss += (x - e.mean_abs_error_points) * (x - e.mean_abs_error_points);
    const double se = std::sqrt(ss / (n - 1.0)) / std::sqrt(n);
    const double t = student_t_quantile(0.5 + confidence / 2.0, n - 1.0);
    e.ci_low_points = std::max(0.0, e.mean_abs_error_points - t * se);
    e.ci_high_points = e.mean_abs_error_points + t * se;
  }
  return e;
}

std::size_t prediction_run_count(const PlatformOptions& o, std::size_t n) {
  const std::size_t k = std::size(kLadderLevels);
  const std::size_t sample = static_cast<std::size_t>(std::max(0, o.matrix.predict_sample));
  return k + n * k + n + std::min(sample, n * (n + 1) / 2);
}

}  // namespace ib
