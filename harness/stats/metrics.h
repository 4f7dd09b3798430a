// Interference metrics and verdicts (DESIGN.md section 4). E, A, C are one tenant's sample
// durations in the exclusive, alone and colocated phases; all ratios are time ratios (larger = slower).
#pragma once

#include <cstdint>
#include <string>
#include <functional>
#include <vector>

namespace ib {

struct Estimate {
  double value;     // point estimate on the full samples
  double ci_low;    // bootstrap percentile interval
  double ci_high;
  double confidence = 0.95;
  int resamples = 0;
  std::uint64_t seed = 0;
};

// One phase's counted values grouped as repetitions -> blocks -> values in time order.
using BlockedSamples = std::vector<std::vector<std::vector<double>>>;

// P95(C) / P95(E) - 1 over the pooled values, with the 95% CI of the hierarchical block bootstrap
// (harness/stats/bootstrap.h): repetitions, then blocks, then moving blocks of samples, C and E independently.
Estimate p95_slowdown(const BlockedSamples& colocated, const BlockedSamples& exclusive, std::uint64_t seed,
                      int resamples = 1000, const std::function<bool()>& stop = {});
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
// Three-way, on the CI (DESIGN.md section 4): pass when its upper bound <= cutoff, fail when its lower
// bound > cutoff, otherwise inconclusive (it straddles the cutoff); also inconclusive below 72 values in
// E or C, or without a CI (--resamples 0). The point estimate is reported, never judged alone.
VerdictResult slowdown_verdict(std::size_t n_exclusive, std::size_t n_colocated, const Estimate& p95_slowdown,
                               double cutoff);

}  // namespace ib
