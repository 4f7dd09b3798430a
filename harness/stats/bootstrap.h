// Hierarchical moving-block bootstrap for percentile ratios (DESIGN.md section 4, "Confidence
// intervals"; docs/methodology.md, "Confidence interval: hierarchical block bootstrap").
//
// Samples of one measurement block are autocorrelated and blocks and repetitions differ more than
// samples within them, so resampling the pooled samples as i.i.d. draws gives far too narrow an
// interval. Here every level is resampled: repetitions, blocks within a repetition, and contiguous
// runs of samples within a block. Pure functions; a seed gives the same result on every platform.
#pragma once

#include "harness/stats/metrics.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace ib {

// Asked now and then by a long resampling loop: true when the user asked to stop (a stop signal),
// and the loop then throws Interrupted (core/errors.h). Empty: never.
using StopCheck = std::function<bool()>;

// One phase's counted samples grouped as repetitions -> blocks -> samples in time order.
using BlockedSamples = std::vector<std::vector<std::vector<double>>>;

// All samples of all repetitions and blocks, in order.
std::vector<double> pool_samples(const BlockedSamples& data);

// Lag-1 sample autocorrelation sum_{t<n-1} (x_t - m)(x_{t+1} - m) / sum_t (x_t - m)^2, m = mean(x)
// (the usual biased-denominator estimator, as in Box & Jenkins). NaN for n < 3 or zero variance.
double lag1_autocorrelation(const std::vector<double>& x);

// Moving-block length for a series of n samples:
//   L = min(max(ceil(n^(1/3)), ceil(kBlockLengthTauFactor * (1 + rho) / (1 - rho))), max(1, floor(n / 2)))
// with rho = lag1_autocorrelation(x) clamped to [0, 0.95] (NaN counts as 0). (1 + rho) / (1 - rho) is
// the AR(1) integrated autocorrelation time; runs several times longer keep most of the dependence
// that cutting a series into runs destroys. n^(1/3) is the classical rate for the block length.
// The factor 3 puts L at the start of the plateau where the CI width stops growing with L
// (measured for rho 0.5-0.9: docs/methodology.md, "Confidence interval: hierarchical block bootstrap").
constexpr double kBlockLengthTauFactor = 3.0;
std::size_t moving_block_length(const std::vector<double>& x);

// One phase's resampling plan: the non-empty repetitions and blocks, each block's run length fixed
// once (so replicates do not recompute autocorrelations). Holds pointers into `data`, which must
// outlive the plan.
class HierarchicalResampler {
 public:
  // block_length 0: each block's own moving_block_length(); otherwise that length for every block
  // (capped at the block's size; 1 = i.i.d. resampling within blocks).
  explicit HierarchicalResampler(const BlockedSamples& data, std::size_t block_length = 0);
  HierarchicalResampler(BlockedSamples&&, std::size_t = 0) = delete;  // would dangle
  bool empty() const { return reps_.empty(); }
  // One replicate into `out` (replaced): repetitions with replacement; within each chosen repetition
  // its blocks with replacement; within each chosen block random contiguous runs of the block's
  // length, concatenated and cut to the block's size. Reuses out's capacity.
  void draw(std::mt19937_64& rng, std::vector<double>& out) const;

 private:
  struct Block {
    const double* x;
    std::size_t n;
    std::size_t run;  // moving-block length, 1..n
  };
  std::vector<std::vector<Block>> reps_;
};

// P_q(pooled C) / P_q(pooled E) - 1 for every replicate, in draw order (not sorted); a replicate is
// NaN when its P_q(E) is not positive. The seeded generator draws the C resample, then the E
// resample, per replicate. Empty when resamples <= 0 or a side has no samples. Throws Interrupted
// when `stop` says so (asked every kStopCheckEvery replicates).
constexpr int kStopCheckEvery = 64;
std::vector<double> percentile_ratio_replicates(const BlockedSamples& colocated, const BlockedSamples& exclusive,
                                                double q, std::uint64_t seed, int resamples = 1000,
                                                std::size_t block_length = 0, const StopCheck& stop = {});

// P_q(pooled C) / P_q(pooled E) - 1 (q in [0, 100]) with the percentile CI of the replicates above:
// the (1 - confidence)/2 .. (1 + confidence)/2 percentiles (percentile_sorted). No samples on a side:
// NaN value. resamples <= 0, a confidence outside (0, 1) or a NaN replicate: NaN CI.
Estimate percentile_ratio_ci(const BlockedSamples& colocated, const BlockedSamples& exclusive, double q,
                             std::uint64_t seed, int resamples = 1000, double confidence = 0.95,
                             std::size_t block_length = 0, const StopCheck& stop = {});

}  // namespace ib
