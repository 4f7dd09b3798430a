#include "harness/stats/stats.h"
#include "harness/core/numbers.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ib {
namespace {
}

double mean(const std::vector<double>& x) {
  if (x.empty()) return kNaN;
  // Pairwise-free Kahan-style compensation is unnecessary for our sizes; long double keeps 10M
  // samples of similar magnitude accurate to far better than the values' own precision.
  long double s = 0.0L;
  for (double v : x) s += v;
  return static_cast<double>(s / static_cast<long double>(x.size()));
}

double stddev(const std::vector<double>& x) {
  if (x.size() < 2) return kNaN;
  const double m = mean(x);
  long double ss = 0.0L;
  for (double v : x) ss += static_cast<long double>(v - m) * (v - m);
  return std::sqrt(static_cast<double>(ss / static_cast<long double>(x.size() - 1)));
}

double cv(const std::vector<double>& x) {
  const double m = mean(x);
  if (!(m != 0.0)) return kNaN;
  return stddev(x) / m;
}

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty() || !(q >= 0.0 && q <= 100.0)) return kNaN;
  const double h = (static_cast<double>(sorted.size()) - 1.0) * q / 100.0;
  const std::size_t lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

double percentile(std::vector<double> x, double q) {
  std::sort(x.begin(), x.end());
  return percentile_sorted(x, q);
}

double percentile_select(std::vector<double>& x, double q) {
  if (x.empty() || !(q >= 0.0 && q <= 100.0)) return kNaN;
  const double h = (static_cast<double>(x.size()) - 1.0) * q / 100.0;
  const std::size_t lo = static_cast<std::size_t>(std::floor(h));
  std::nth_element(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(lo), x.end());
  const double a = x[lo];
  if (lo + 1 >= x.size()) return a;
  const double b = *std::min_element(x.begin() + static_cast<std::ptrdiff_t>(lo) + 1, x.end());
  return a + (h - static_cast<double>(lo)) * (b - a);
}

double median(std::vector<double> x) { return percentile_select(x, 50.0); }

Summary summarize(std::vector<double> x) {
  Summary s;
  s.n = x.size();
  s.mean = mean(x);
  s.stddev = stddev(x);
  s.cv = (s.mean != 0.0 && !std::isnan(s.mean)) ? s.stddev / s.mean : kNaN;
  std::sort(x.begin(), x.end());
  s.min = x.empty() ? kNaN : x.front();
  s.max = x.empty() ? kNaN : x.back();
  s.p5 = percentile_sorted(x, 5);
  s.p50 = percentile_sorted(x, 50);
  s.median = s.p50;
  s.p95 = percentile_sorted(x, 95);
  s.p99 = percentile_sorted(x, 99);
  return s;
}

std::vector<std::uint8_t> mad_outliers(const std::vector<double>& x, double threshold) {
  std::vector<std::uint8_t> flags(x.size(), 0);
  if (x.empty()) return flags;
  const double med = median(x);
  std::vector<double> dev(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) dev[i] = std::fabs(x[i] - med);
  const double mad = median(dev);
  if (!(mad > 0.0)) return flags;
  for (std::size_t i = 0; i < x.size(); ++i) flags[i] = std::fabs(0.6745 * (x[i] - med) / mad) > threshold;
  return flags;
}

double median_absolute_deviation(const std::vector<double>& x) {
  if (x.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double med = median(x);
  std::vector<double> dev(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) dev[i] = std::fabs(x[i] - med);
  return median(dev);
}

std::vector<double> robust_z_scores(const std::vector<double>& x) {
  std::vector<double> z(x.size(), 0.0);
  if (x.empty()) return z;
  const double med = median(x);
  const double mad = median_absolute_deviation(x);
  if (mad > 0.0) {
    for (std::size_t i = 0; i < x.size(); ++i) z[i] = 0.6745 * (x[i] - med) / mad;
    return z;
  }
  double mean_ad = 0.0;
  for (double v : x) mean_ad += std::fabs(v - med);
  mean_ad /= static_cast<double>(x.size());
  if (!(mean_ad > 0.0)) return z;
  for (std::size_t i = 0; i < x.size(); ++i) z[i] = (x[i] - med) / (1.253314 * mean_ad);
  return z;
}

std::vector<double> window_throughputs(const std::vector<std::int64_t>& start_ns, const std::vector<double>& duration_s,
                                       double work_per_sample, double window_s) {
  if (start_ns.empty() || start_ns.size() != duration_s.size() || !(window_s > 0.0)) return {};
  const std::int64_t t0 = *std::min_element(start_ns.begin(), start_ns.end());
  double t_end = 0.0;  // seconds after t0
  for (std::size_t i = 0; i < start_ns.size(); ++i)
    t_end = std::max(t_end, static_cast<double>(start_ns[i] - t0) * 1e-9 + duration_s[i]);
  const std::size_t windows = static_cast<std::size_t>(std::floor(t_end / window_s + 1e-12));
  std::vector<double> work(windows, 0.0);
  for (std::size_t i = 0; i < start_ns.size(); ++i) {
    const double a = static_cast<double>(start_ns[i] - t0) * 1e-9;
    const double d = duration_s[i];
    if (!(d > 0.0)) continue;
    const double b = a + d;
    for (std::size_t w = static_cast<std::size_t>(a / window_s); w < windows; ++w) {
      const double lo = std::max(a, w * window_s), hi = std::min(b, (w + 1) * window_s);
      if (hi <= lo) break;
      work[w] += work_per_sample * (hi - lo) / d;
    }
  }
  for (auto& w : work) w /= window_s;
  return work;
}

double window_throughput_cv(const std::vector<std::int64_t>& start_ns, const std::vector<double>& duration_s,
                            double work_per_sample, double window_s) {
  const std::vector<double> w = window_throughputs(start_ns, duration_s, work_per_sample, window_s);
  return w.size() < 2 ? kNaN : cv(w);
}

}  // namespace ib
