// Statistics as pure functions (docs/design.md section 4). One function per statistic; each is tested
// against hand-computed values in tests/unit/stats_test.cpp. Empty or too-small inputs give NaN,
// which writers print as null.
#pragma once

#include <cstdint>
#include <vector>

namespace ib {

double mean(const std::vector<double>& x);
double stddev(const std::vector<double>& x);  // sample standard deviation, n-1 denominator
double cv(const std::vector<double>& x);      // stddev / mean
double median(std::vector<double> x);
// Percentile q in [0, 100] by linear interpolation between closest ranks (numpy's default):
// h = (n-1) q/100, P = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]) over sorted x.
double percentile_sorted(const std::vector<double>& sorted, double q);
double percentile(std::vector<double> x, double q);
// The same percentile by selection (nth_element, O(n)); reorders x. For hot loops and single values.
double percentile_select(std::vector<double>& x, double q);

struct Summary {
  std::size_t n = 0;
  double mean, median, stddev, cv, min, max, p5, p50, p95, p99;
};
Summary summarize(std::vector<double> x);

// Median absolute deviation outlier flags: modified z-score M_i = 0.6745 (x_i - median) / MAD,
// flagged when |M_i| > threshold (Iglewicz and Hoaglin, 3.5). When MAD is 0 nothing is flagged.
std::vector<std::uint8_t> mad_outliers(const std::vector<double>& x, double threshold = 3.5);

// Robust z-scores of each value against the others (merge's stragglers, docs/design.md section 10): the
// modified z-score M_i = 0.6745 (x_i - median) / MAD; when MAD is 0 (more than half the values equal)
// M_i = (x_i - median) / (1.253314 MeanAD), MeanAD the mean absolute deviation from the median (the
// fallback of Iglewicz and Hoaglin as IBM SPSS uses it; 1.253314 = sqrt(pi/2) makes it a standard
// deviation for normal data); all 0 when every value is the median. Empty in, empty out.
std::vector<double> robust_z_scores(const std::vector<double>& x);
// MAD: the median of |x_i - median(x)|; NaN when empty.
double median_absolute_deviation(const std::vector<double>& x);

// Coefficient of variation of throughput in consecutive windows of `window_s` seconds starting at
// the first sample's start. Each sample's work is spread over [start, start + duration] and counted
// in each window in proportion to its overlap, so a sample straddling a boundary adds no
// quantisation noise. Only complete windows count; fewer than 2 complete windows gives NaN.
// The throughputs (work per second) of those windows, in order; empty with no complete window.
std::vector<double> window_throughputs(const std::vector<std::int64_t>& start_ns, const std::vector<double>& duration_s,
                                       double work_per_sample, double window_s = 1.0);
double window_throughput_cv(const std::vector<std::int64_t>& start_ns, const std::vector<double>& duration_s,
                            double work_per_sample, double window_s = 1.0);

}  // namespace ib
