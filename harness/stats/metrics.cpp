#include "harness/stats/metrics.h"
#include "harness/core/numbers.h"

#include "harness/stats/bootstrap.h"
#include "harness/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

namespace ib {
namespace {

double ratio(double num, double den) { return den > 0.0 ? num / den : kNaN; }
}  // namespace

Estimate p95_slowdown(const BlockedSamples& colocated, const BlockedSamples& exclusive, std::uint64_t seed,
                      int resamples, const std::function<bool()>& stop, Pairing pairing) {
  return percentile_ratio_estimate(colocated, exclusive, pairing, 95.0, seed, resamples, 0, stop);
}

double median_slowdown(const std::vector<double>& colocated, const std::vector<double>& exclusive) {
  return ratio(median(colocated), median(exclusive)) - 1.0;
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
  for (const auto& t : tenants) s += ratio(t.isolated, t.colocated);
  return s;
}

double average_normalised_turnaround(const std::vector<MedianPair>& tenants) {
  if (tenants.empty()) return kNaN;
  double s = 0.0;
  for (const auto& t : tenants) s += ratio(t.colocated, t.isolated);
  return s / static_cast<double>(tenants.size());
}

VerdictResult slowdown_verdict(std::size_t n_exclusive, std::size_t n_colocated, const Estimate& p95, double cutoff) {
  std::ostringstream os;
  os.precision(3);
  if (n_exclusive < kMinSamplesP95 || n_colocated < kMinSamplesP95) {
    os << "P95 needs at least " << kMinSamplesP95 << " values per phase (exclusive " << n_exclusive << ", colocated "
       << n_colocated << "): run longer or use shorter samples";
    return {Verdict::inconclusive, os.str()};
  }
  if (std::isnan(p95.value)) return {Verdict::inconclusive, "p95_slowdown is undefined"};
  if (std::isnan(p95.ci_low) || std::isnan(p95.ci_high))
    return {Verdict::inconclusive, "no confidence interval (--resamples 0): the point estimate is not judged alone"};
  os << "P95 slowdown " << p95.value * 100.0 << "%, " << p95.confidence * 100.0 << "% CI [" << p95.ci_low * 100.0 << "%, "
     << p95.ci_high * 100.0 << "%]";
  if (p95.ci_high <= cutoff) {
    os << " within the " << cutoff * 100.0 << "% cutoff";
    return {Verdict::pass, os.str()};
  }
  if (p95.ci_low > cutoff) {
    os << " above the " << cutoff * 100.0 << "% cutoff";
    return {Verdict::fail, os.str()};
  }
  os << " straddles the " << cutoff * 100.0 << "% cutoff: measure longer or on a quieter machine";
  return {Verdict::inconclusive, os.str()};
}

}  // namespace ib
