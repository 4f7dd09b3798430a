#include "harness/metrics.h"

#include "harness/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

namespace ib {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Uniform index in [0, n) from a 64-bit generator without the platform-dependent
// std::uniform_int_distribution, so a seed gives the same CI everywhere.
std::size_t draw_index(std::mt19937_64& rng, std::size_t n) {
  __extension__ using u128 = unsigned __int128;
  return static_cast<std::size_t>((static_cast<u128>(rng()) * n) >> 64);
}

void resample(const std::vector<double>& from, std::vector<double>& to, std::mt19937_64& rng) {
  to.resize(from.size());
  for (auto& v : to) v = from[draw_index(rng, from.size())];
}

double ratio(double num, double den) { return den > 0.0 ? num / den : kNaN; }
}  // namespace

Estimate p95_slowdown(const std::vector<double>& colocated, const std::vector<double>& exclusive, std::uint64_t seed,
                      int resamples) {
  Estimate e{kNaN, kNaN, kNaN, 0.95, resamples, seed};
  if (colocated.empty() || exclusive.empty()) return e;
  e.value = ratio(percentile(colocated, 95), percentile(exclusive, 95)) - 1.0;
  if (resamples <= 0) return e;
  std::mt19937_64 rng(seed);
  std::vector<double> c, x, replicates;
  replicates.reserve(static_cast<std::size_t>(resamples));
  for (int b = 0; b < resamples; ++b) {
    resample(colocated, c, rng);
    resample(exclusive, x, rng);
    replicates.push_back(ratio(percentile_select(c, 95), percentile_select(x, 95)) - 1.0);
  }
  std::sort(replicates.begin(), replicates.end());
  e.ci_low = percentile_sorted(replicates, 2.5);
  e.ci_high = percentile_sorted(replicates, 97.5);
  return e;
}

double median_slowdown(const std::vector<double>& colocated, const std::vector<double>& exclusive) {
  return ratio(median(colocated), median(exclusive));
}

double partition_cost(const std::vector<double>& alone, const std::vector<double>& exclusive) {
  return ratio(median(alone), median(exclusive));
}

double interference(const std::vector<double>& colocated, const std::vector<double>& alone) {
  return ratio(median(colocated), median(alone));
}

double system_throughput(const std::vector<MedianPair>& tenants) {
  if (tenants.empty()) return kNaN;
  double s = 0.0;
  for (const auto& t : tenants) s += ratio(t.alone, t.colocated);
  return s;
}

double average_normalised_turnaround(const std::vector<MedianPair>& tenants) {
  if (tenants.empty()) return kNaN;
  double s = 0.0;
  for (const auto& t : tenants) s += ratio(t.colocated, t.alone);
  return s / static_cast<double>(tenants.size());
}

VerdictResult slowdown_verdict(std::size_t n_exclusive, std::size_t n_colocated, double p95, double cutoff) {
  std::ostringstream os;
  if (n_exclusive < kMinSamplesP95 || n_colocated < kMinSamplesP95) {
    os << "P95 needs at least " << kMinSamplesP95 << " samples per phase (exclusive " << n_exclusive
       << ", colocated " << n_colocated << "): run longer or use shorter samples";
    return {Verdict::inconclusive, os.str()};
  }
  if (std::isnan(p95)) return {Verdict::inconclusive, "p95_slowdown is undefined"};
  if (p95 > cutoff) {
    os << "P95 is " << p95 * 100.0 << "% slower than exclusive, above the " << cutoff * 100.0 << "% cutoff";
    return {Verdict::fail, os.str()};
  }
  os << "P95 is " << p95 * 100.0 << "% slower than exclusive, within the " << cutoff * 100.0 << "% cutoff";
  return {Verdict::pass, os.str()};
}

}  // namespace ib
