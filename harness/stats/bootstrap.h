// Round (cluster) bootstrap for percentile ratios (docs/design.md section 4, "Confidence intervals";
// docs/methodology.md, "Confidence interval: paired round bootstrap").
//
// Samples of one block are autocorrelated and rounds and repetitions differ more than samples within
// them, so resampling the pooled samples as i.i.d. draws gives far too narrow an interval. Here every
// level is resampled: repetitions, rounds within a repetition, and contiguous runs of samples within
// a round's block. A round is resampled whole: its exclusive (or alone) and its colocated block
// together (Pairing::paired), so a slow change of the machine that moves both blocks of a round moves
// both sides of the ratio in a replicate and cancels, instead of counting as noise twice. Pure
// functions; a seed gives the same result on every platform.
#pragma once

#include "harness/stats/metrics.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <utility>
#include <vector>

namespace ib {

// Asked now and then by a long resampling loop: true when the user asked to stop (a stop signal),
// and the loop then throws Interrupted (core/errors.h). Empty: never.
using StopCheck = std::function<bool()>;

// All values of all repetitions and rounds, in order.
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
// (measured for rho 0.5-0.9: docs/methodology.md).
constexpr double kBlockLengthTauFactor = 3.0;
std::size_t moving_block_length(const std::vector<double>& x);

// Rounds are the clusters: with this many (over the repetitions, per side drawn) a replicate takes each
// drawn round's blocks whole, which keeps all their within-block dependence. Resampling runs of samples
// inside them as well counts the within-round noise a second time: measured on rounds whose truth is
// known, the interval then covers 98.5% instead of 95% and is about 1.4 times too wide
// (docs/methodology.md). With fewer rounds (--rounds 3) resampling so few clusters alone is erratic,
// and runs of samples within blocks add the variability they lack, as before rounds were clusters.
constexpr std::size_t kMinRoundsResampledWhole = 8;

// Pairing (metrics.h) says whether the sides of a resampling share their clusters. paired: every side
// has the same repetitions and rounds (round k of every side was measured in round k); one draw of
// (repetition, round) takes that round of every side. independent: each side draws its own.

// One contiguous run of a replicate: values [start, start + take) of flat block `block` of its side.
struct Piece {
  std::size_t block, start, take;
};

// One side's resampling plan inside a RoundResampler: its non-empty blocks, flat, each with the
// moving-block length fixed once (so replicates do not recompute autocorrelations).
struct ResampledBlock {
  const double* x;
  std::size_t n;
  std::size_t run;  // moving-block length, 1..n
};

// The resampling plan of one or more sides (E and C; compare adds D). Holds pointers into the data,
// which must outlive it.
class RoundResampler {
 public:
  // block_length 0: with at least kMinRoundsResampledWhole rounds (clusters) every round's blocks are
  // taken whole, otherwise each block in runs of its own moving_block_length(); another block_length:
  // runs of that length in every block (capped at the block's size; 1 = i.i.d. resampling within
  // blocks). Paired sides of different shapes (repetitions, rounds per repetition): std::invalid_argument.
  RoundResampler(const std::vector<const BlockedSamples*>& sides, Pairing pairing, std::size_t block_length = 0);
  // True when a side has no value at all (nothing to resample).
  bool empty() const;
  std::size_t sides() const { return blocks_.size(); }
  // The fewest clusters (non-empty repetition-rounds) of the sides drawn together or apart.
  std::size_t clusters() const { return clusters_; }
  // Whether rounds are resampled whole (enough of them, block_length 0).
  bool whole_rounds() const { return whole_; }
  const ResampledBlock& block(std::size_t side, std::size_t k) const { return blocks_[side][k]; }
  std::size_t block_count(std::size_t side) const { return blocks_[side].size(); }
  // One replicate into `out` (one list of pieces per side, replaced; capacity reused): repetitions
  // with replacement; within each chosen repetition its rounds with replacement; of each chosen round,
  // every side's block (paired) as random contiguous runs of the block's run length (moving-block
  // bootstrap), the last run cut so the block keeps its size. Independent sides draw one after another.
  void draw(std::mt19937_64& rng, std::vector<std::vector<Piece>>& out) const;
  // The values of a side's pieces, in order (into `out`, replaced).
  void materialize(std::size_t side, const std::vector<Piece>& pieces, std::vector<double>& out) const;

 private:
  // [side][repetition][round] -> index into blocks_[side], or SIZE_MAX for an empty round of that side.
  using Layout = std::vector<std::vector<std::vector<std::size_t>>>;
  // Sides drawn together and their non-empty (repetition, rounds) clusters.
  struct Clusters {
    std::vector<std::size_t> sides;
    std::vector<std::pair<std::size_t, std::vector<std::size_t>>> reps;
  };
  Clusters clusters_of(std::vector<std::size_t> sides) const;
  void draw_clusters(std::mt19937_64& rng, const Clusters& c, std::vector<std::vector<Piece>>& out) const;
  void add_runs(std::mt19937_64& rng, std::size_t side, std::size_t k, std::vector<Piece>& out) const;

  std::vector<std::vector<ResampledBlock>> blocks_;
  Layout layout_;
  std::vector<Clusters> draws_;  // one (paired) or one per side (independent), drawn in this order
  std::size_t clusters_ = 0;
  bool whole_ = false;
};

// P_q of a replicate side given as pieces: exactly percentile_select (stats.h) of the materialized
// values, computed from per-block prefix counts where it can: values below a window around the
// pooled P_q are only counted, values in it copied, and only when the replicate's P_q falls outside
// the window are the pieces materialized. (Tested equal to the plain computation.)
class PieceQuantile {
 public:
  PieceQuantile(const RoundResampler& plan, std::size_t side, double q);
  double operator()(const std::vector<Piece>& pieces, std::vector<double>& scratch) const;

 private:
  const RoundResampler& plan_;
  std::size_t side_;
  double q_, lo_ = 0.0;
  std::vector<std::vector<std::uint32_t>> below_;  // per block: count of values < lo_ among the first i
  std::vector<std::vector<std::uint32_t>> in_;     // per block: count of values >= lo_ among the first i
  std::vector<std::vector<double>> in_values_;     // per block: the values >= lo_, in time order
};

// log(P_q(C*) / P_q(E*)) of every replicate, in draw order (not sorted); NaN where a side's P_q is
// not positive. Empty when resamples <= 0 or a side has no samples. Throws Interrupted when `stop`
// says so (asked every kStopCheckEvery replicates).
constexpr int kStopCheckEvery = 64;
std::vector<double> log_ratio_replicates(const BlockedSamples& colocated, const BlockedSamples& exclusive, Pairing pairing,
                                         double q, std::uint64_t seed, int resamples = 1000, std::size_t block_length = 0,
                                         const StopCheck& stop = {});

// The two-sided normal quantile of a 95% interval.
constexpr double kZ95 = 1.959963984540054;

// P_q(pooled C) / P_q(pooled E) - 1 (q in [0, 100]), the bootstrap standard error of its logarithm
// (the standard deviation of log_ratio_replicates, times sqrt(C / (C - 1)) for C clusters resampled
// whole) and the interval at kZ95 (interval_at). No samples on a side: NaN value. resamples < 2 or a
// NaN replicate: NaN standard error and interval.
Estimate percentile_ratio_estimate(const BlockedSamples& colocated, const BlockedSamples& exclusive, Pairing pairing,
                                   double q, std::uint64_t seed, int resamples = 1000, std::size_t block_length = 0,
                                   const StopCheck& stop = {});

// The interval of `e` at the nominal two-sided normal quantile z, on the log of the ratio:
//   ci = exp(log(1 + value) -/+ q * log_se) - 1,  confidence = 2 Phi(z) - 1,
// q = Student's t quantile with clusters - 1 degrees of freedom at the same tail, Phi(z), when rounds
// are resampled whole (the standard error then comes from few clusters: with 10 rounds and z = 1.96,
// q = 2.26), else q = z. The log makes a ratio's interval multiplicative (a slowdown of +100% and one of
// -50% are alike); a z other than 1.96 is what a sequential look asks for (harness/stats/sequential.h).
Estimate interval_at(Estimate e, double z);

// Standard normal distribution function.
double normal_cdf(double z);
// Student's t distribution function and its inverse (df > 0; the inverse of p in (0, 1)); NaN otherwise.
double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);

}  // namespace ib
