#include "harness/stats/sequential.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ib {
namespace {
constexpr double kPi = 3.14159265358979323846;
constexpr double kLowest = -9.0;  // W below this (t <= 1) has probability < 1e-18: the grid's floor

double normal_pdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * kPi); }
double normal_sf(double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); }

// A grid from kLowest * scale to `top` with spacing close to `step` and its trapezoid weights.
void grid(double top, double scale, double step, std::vector<double>& x, std::vector<double>& w) {
  const double bottom = std::min(kLowest * scale, top - step);
  const int n = std::max(2, static_cast<int>(std::ceil((top - bottom) / step)) + 1);
  const double h = (top - bottom) / (n - 1);
  x.resize(n);
  w.assign(n, h);
  for (int i = 0; i < n; ++i) x[i] = bottom + h * i;
  w.front() = w.back() = h / 2;
}
}  // namespace

double upper_crossing_probability(const std::vector<double>& t, const std::vector<double>& z, double step) {
  if (t.empty() || t.size() != z.size()) throw std::invalid_argument("one boundary per look");
  const double scale = std::sqrt(t.back());
  // Density of the paths that have not crossed, at look k, on the grid x below u_k = z_k sqrt(t_k).
  std::vector<double> x, w, f;
  double top = z[0] * std::sqrt(t[0]);
  double crossed = normal_sf(z[0]);
  grid(top, scale, step, x, w);
  f.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) f[i] = normal_pdf(x[i] / std::sqrt(t[0])) / std::sqrt(t[0]);
  for (std::size_t k = 1; k < t.size(); ++k) {
    const double sd = std::sqrt(t[k] - t[k - 1]);
    const double next_top = z[k] * std::sqrt(t[k]);
    for (std::size_t i = 0; i < x.size(); ++i) crossed += w[i] * f[i] * normal_sf((next_top - x[i]) / sd);
    std::vector<double> y, v, g;
    grid(next_top, scale, step, y, v);
    g.assign(y.size(), 0.0);
    // On the same grid (O'Brien-Fleming's boundaries are one level of W) the kernel depends on j - i
    // only: 2n exponentials instead of n^2.
    const bool same = y.size() == x.size() && y.front() == x.front() && y.back() == x.back();
    std::vector<double> kernel;
    if (same) {
      const double h = x[1] - x[0];
      const long m = static_cast<long>(x.size());
      kernel.resize(2 * m - 1);
      for (long d = -(m - 1); d <= m - 1; ++d) kernel[d + m - 1] = normal_pdf(d * h / sd);
    }
    for (std::size_t j = 0; j < y.size(); ++j) {
      double s = 0.0;
      if (same)
        for (std::size_t i = 0; i < x.size(); ++i) s += w[i] * f[i] * kernel[j - i + x.size() - 1];
      else
        for (std::size_t i = 0; i < x.size(); ++i) s += w[i] * f[i] * normal_pdf((y[j] - x[i]) / sd);
      g[j] = s / sd;
    }
    x.swap(y);
    w.swap(v);
    f.swap(g);
    top = next_top;
  }
  return crossed;
}

std::vector<double> obrien_fleming_boundaries(const std::vector<int>& n, double alpha) {
  if (n.empty() || n.front() <= 0 || !std::is_sorted(n.begin(), n.end()) ||
      std::adjacent_find(n.begin(), n.end()) != n.end())
    throw std::invalid_argument("looks must be increasing positive round counts");
  if (!(alpha > 0.0 && alpha < 1.0)) throw std::invalid_argument("alpha must lie in (0, 1)");
  std::vector<double> t;
  for (int k : n) t.push_back(static_cast<double>(k) / n.back());
  const auto bounds = [&](double c) {
    std::vector<double> z;
    for (double tk : t) z.push_back(c / std::sqrt(tk));
    return z;
  };
  // The crossing probability falls as c grows: bisection between the fixed-length quantile (too
  // small for more than one look) and one far above any K's constant.
  double lo = 1.0, hi = 6.0;
  for (int i = 0; i < 40 && hi - lo > 1e-6; ++i) {
    const double mid = 0.5 * (lo + hi);
    (upper_crossing_probability(t, bounds(mid)) > alpha / 2 ? lo : hi) = mid;
  }
  return bounds(hi);
}

std::vector<int> planned_looks(int first, int step, int last) {
  std::vector<int> looks = {std::max(1, first)};
  if (step < 1) step = 1;
  while (looks.back() + step <= last) looks.push_back(looks.back() + step);
  if (looks.back() < last) looks.push_back(last);
  return looks;
}

}  // namespace ib
