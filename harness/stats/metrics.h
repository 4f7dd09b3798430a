// Interference metrics and verdicts (docs/design.md section 4). E, A, C are one tenant's sample
// durations in the exclusive, alone and colocated phases; all ratios are time ratios (larger = slower).
#pragma once

#include <cstdint>
#include <string>
#include <functional>
#include <limits>
#include <vector>

namespace ib {

// Whether two phases' rounds are resampled together (bootstrap.h): paired when both were measured in
// the same rounds of the same run, independent when one comes from elsewhere (a baseline file).
enum class Pairing { paired, independent };

struct Estimate {
  double value;     // point estimate on the full samples
  double ci_low;    // the interval: log(1 + value) -/+ z * log_se, back on the ratio scale (bootstrap.h)
  double ci_high;
  double confidence = 0.95;  // 2 Phi(z) - 1
  int resamples = 0;
  std::uint64_t seed = 0;
  double log_se = std::numeric_limits<double>::quiet_NaN();  // bootstrap standard error of log(1 + value)
  double z = 1.959963984540054;  // two-sided normal quantile of the interval (1.96: 95%)
  Pairing pairing = Pairing::paired;  // how the replicates drew E and C
  int clusters = 0;        // rounds (over the repetitions) the replicates drew from
  bool whole_rounds = false;  // each drawn round taken whole (enough rounds), else runs of samples within
  double quantile = 1.959963984540054;  // what the interval used: z, or Student's t at z's tail (bootstrap.h)
};

// One phase's counted values grouped as repetitions -> rounds -> values in time order (a round's
// block of this phase; an empty vector where the round has no counted block of it).
using BlockedSamples = std::vector<std::vector<std::vector<double>>>;

// P95(C) / P95(E) - 1 over the pooled values, with the 95% interval of the round bootstrap
// (harness/stats/bootstrap.h): repetitions, then rounds (E and C of a round together when paired),
// then moving blocks of samples.
Estimate p95_slowdown(const BlockedSamples& colocated, const BlockedSamples& exclusive, std::uint64_t seed,
                      int resamples = 1000, const std::function<bool()>& stop = {}, Pairing pairing = Pairing::paired);
double median_slowdown(const std::vector<double>& colocated, const std::vector<double>& exclusive);  // median(C)/median(E) - 1
double partition_cost(const std::vector<double>& alone, const std::vector<double>& exclusive);       // median(A)/median(E)
double interference(const std::vector<double>& colocated, const std::vector<double>& alone);         // median(C)/median(A)

struct MedianPair {
  double isolated;   // median(X_i): X = exclusive or alone
  double colocated;  // median(C_i)
};
double system_throughput(const std::vector<MedianPair>& tenants);                   // STP  = sum median(X_i)/median(C_i)
double average_normalised_turnaround(const std::vector<MedianPair>& tenants);       // ANTT = mean median(C_i)/median(X_i)

// P95 needs at least 72 samples for a distribution-free 95% confidence interval.
constexpr std::size_t kMinSamplesP95 = 72;
// The alone or exclusive phase is "noisy" above this coefficient of variation.
constexpr double kNoisyBaselineCv = 0.02;
constexpr double kDefaultCutoff = 0.40;

enum class Verdict { pass, fail, inconclusive, baseline, waived, error };
// Inline so the writers in reports/ can name verdicts without linking the harness.
inline const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass: return "pass";
    case Verdict::fail: return "fail";
    case Verdict::inconclusive: return "inconclusive";
    case Verdict::baseline: return "baseline";
    case Verdict::waived: return "waived";
    case Verdict::error: return "error";
  }
  return "error";
}

struct VerdictResult {
  Verdict verdict;
  std::string reason;
};
// Three-way, on the CI (docs/design.md section 4): pass when its upper bound <= cutoff, fail when its lower
// bound > cutoff, otherwise inconclusive (it straddles the cutoff); also inconclusive below 72 values in
// E or C, or without a CI (--resamples 0). The point estimate is reported, never judged alone.
VerdictResult slowdown_verdict(std::size_t n_exclusive, std::size_t n_colocated, const Estimate& p95_slowdown,
                               double cutoff);

}  // namespace ib
