#include "harness/stats/bootstrap.h"
#include "harness/core/numbers.h"

#include "harness/core/errors.h"
#include "harness/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ib {
namespace {
constexpr double kMaxRho = 0.95;  // beyond this the block length would be most of the block anyway
constexpr std::size_t kNone = static_cast<std::size_t>(-1);
// PieceQuantile copies the values from this many percentage points below q upwards; a replicate whose
// P_q falls lower (it drew mostly fast rounds) is materialized instead.
constexpr double kWindowBelowPoints = 10.0;
constexpr int kRedrawsForAnEmptySide = 100;

// Uniform index in [0, n) by multiply-shift on a 64-bit draw (not the platform-dependent
// std::uniform_int_distribution), so a seed gives the same CI everywhere.
std::size_t draw_index(std::mt19937_64& rng, std::size_t n) {
  __extension__ using u128 = unsigned __int128;
  return static_cast<std::size_t>((static_cast<u128>(rng()) * n) >> 64);
}

bool has_samples(const BlockedSamples& data) {
  for (const auto& rep : data)
    for (const auto& block : rep)
      if (!block.empty()) return true;
  return false;
}

// x[lo] + (h - lo)(x[lo + 1] - x[lo]) of percentile_select, for the in-window values: `k` is the rank
// of x[lo] among them; the next rank is the smallest value after it (or `next_outside` when the
// values end there).
double interpolate_at(std::vector<double>& v, std::size_t k, double frac, bool need_next) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  const double a = v[k];
  if (!need_next) return a;
  const double b = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(k) + 1, v.end());
  return a + frac * (b - a);
}
}  // namespace

std::vector<double> pool_samples(const BlockedSamples& data) {
  std::vector<double> out;
  for (const auto& rep : data)
    for (const auto& block : rep) out.insert(out.end(), block.begin(), block.end());
  return out;
}

double lag1_autocorrelation(const std::vector<double>& x) {
  const std::size_t n = x.size();
  if (n < 3) return kNaN;
  const double m = mean(x);
  long double num = 0.0L, den = 0.0L;
  for (std::size_t t = 0; t < n; ++t) {
    const double d = x[t] - m;
    den += static_cast<long double>(d) * d;
    if (t + 1 < n) num += static_cast<long double>(d) * (x[t + 1] - m);
  }
  if (!(den > 0.0L)) return kNaN;
  return static_cast<double>(num / den);
}

std::size_t moving_block_length(const std::vector<double>& x) {
  const std::size_t n = x.size();
  if (n < 2) return 1;
  double rho = lag1_autocorrelation(x);
  rho = std::isnan(rho) ? 0.0 : std::clamp(rho, 0.0, kMaxRho);
  // The 1e-9 keeps a value that is an integer up to rounding (cbrt(1000), 3 * 1.5 / 0.5) from
  // rounding up to the next integer.
  const double by_size = std::ceil(std::cbrt(static_cast<double>(n)) - 1e-9);
  const double by_dependence = std::ceil(kBlockLengthTauFactor * (1.0 + rho) / (1.0 - rho) - 1e-9);
  const std::size_t cap = std::max<std::size_t>(1, n / 2);
  return std::min(static_cast<std::size_t>(std::max(by_size, by_dependence)), cap);
}

RoundResampler::RoundResampler(const std::vector<const BlockedSamples*>& sides, Pairing pairing, std::size_t block_length)
    : blocks_(sides.size()), layout_(sides.size()) {
  for (std::size_t s = 0; s < sides.size(); ++s) {
    const BlockedSamples& data = *sides[s];
    if (pairing == Pairing::paired) {
      const BlockedSamples& first = *sides.front();
      bool same = data.size() == first.size();
      for (std::size_t r = 0; same && r < data.size(); ++r) same = data[r].size() == first[r].size();
      if (!same) throw std::invalid_argument("paired sides need the same repetitions and rounds");
    }
    for (const auto& rep : data) {
      std::vector<std::size_t> rounds;
      for (const auto& b : rep) {
        if (b.empty()) {
          rounds.push_back(kNone);
          continue;
        }
        const std::size_t run = block_length == 0 ? moving_block_length(b) : std::min(block_length, b.size());
        rounds.push_back(blocks_[s].size());
        blocks_[s].push_back({b.data(), b.size(), run});
      }
      layout_[s].push_back(std::move(rounds));
    }
  }
  if (sides.empty()) return;
  if (pairing == Pairing::paired) {
    std::vector<std::size_t> all(sides.size());
    for (std::size_t s = 0; s < all.size(); ++s) all[s] = s;
    draws_.push_back(clusters_of(all));
  } else {
    for (std::size_t s = 0; s < sides.size(); ++s) draws_.push_back(clusters_of({s}));
  }
  // Enough rounds: each is resampled whole (its within-block dependence kept as it is; runs of samples
  // on top would count the within-round noise twice).
  std::size_t fewest = SIZE_MAX;
  for (const Clusters& c : draws_) {
    std::size_t n = 0;
    for (const auto& rep : c.reps) n += rep.second.size();
    fewest = std::min(fewest, n);
  }
  clusters_ = fewest == SIZE_MAX ? 0 : fewest;
  whole_ = block_length == 0 && fewest >= kMinRoundsResampledWhole;
  if (whole_)
    for (auto& side : blocks_)
      for (ResampledBlock& b : side) b.run = b.n;
}

bool RoundResampler::empty() const {
  return blocks_.empty() || std::any_of(blocks_.begin(), blocks_.end(), [](const auto& b) { return b.empty(); });
}

void RoundResampler::add_runs(std::mt19937_64& rng, std::size_t side, std::size_t k, std::vector<Piece>& out) const {
  const ResampledBlock& b = blocks_[side][k];
  if (b.run == b.n) {  // the whole block (one start: nothing to draw)
    out.push_back({k, 0, b.n});
    return;
  }
  // Moving-block bootstrap: runs start anywhere a whole run fits (n - run + 1 starts), so a sample near
  // a block's ends appears in fewer runs; the last run is cut to fill exactly n.
  const std::size_t starts = b.n - b.run + 1;
  for (std::size_t filled = 0; filled < b.n;) {
    const std::size_t take = std::min(b.run, b.n - filled);
    out.push_back({k, draw_index(rng, starts), take});
    filled += take;
  }
}

// Repetitions with replacement, then rounds within each (clusters_ lists the non-empty ones); every
// side of a drawn round adds its block's runs.
void RoundResampler::draw_clusters(std::mt19937_64& rng, const Clusters& c, std::vector<std::vector<Piece>>& out) const {
  for (std::size_t i = 0; i < c.reps.size(); ++i) {
    const auto& [r, rounds] = c.reps[draw_index(rng, c.reps.size())];
    for (std::size_t j = 0; j < rounds.size(); ++j) {
      const std::size_t k = rounds[draw_index(rng, rounds.size())];
      for (std::size_t s : c.sides)
        if (layout_[s][r][k] != kNone) add_runs(rng, s, layout_[s][r][k], out[s]);
    }
  }
}

// The clusters of `sides`: a (repetition, round) with a block in at least one of them. Repetitions and
// rounds with nothing in them are not clusters (they are not drawn as nothing).
RoundResampler::Clusters RoundResampler::clusters_of(std::vector<std::size_t> sides) const {
  Clusters c;
  c.sides = std::move(sides);
  const auto& shape = layout_[c.sides.front()];
  for (std::size_t r = 0; r < shape.size(); ++r) {
    std::vector<std::size_t> rounds;
    for (std::size_t k = 0; k < shape[r].size(); ++k)
      if (std::any_of(c.sides.begin(), c.sides.end(), [&](std::size_t s) { return layout_[s][r][k] != kNone; }))
        rounds.push_back(k);
    if (!rounds.empty()) c.reps.emplace_back(r, std::move(rounds));
  }
  return c;
}

void RoundResampler::draw(std::mt19937_64& rng, std::vector<std::vector<Piece>>& out) const {
  out.resize(blocks_.size());
  for (auto& o : out) o.clear();
  for (const Clusters& c : draws_) draw_clusters(rng, c, out);
}

void RoundResampler::materialize(std::size_t side, const std::vector<Piece>& pieces, std::vector<double>& out) const {
  out.clear();
  for (const Piece& p : pieces) {
    const double* x = blocks_[side][p.block].x + p.start;
    out.insert(out.end(), x, x + p.take);
  }
}

PieceQuantile::PieceQuantile(const RoundResampler& plan, std::size_t side, double q) : plan_(plan), side_(side), q_(q) {
  std::vector<double> pooled;
  for (std::size_t k = 0; k < plan.block_count(side); ++k) {
    const ResampledBlock& b = plan.block(side, k);
    pooled.insert(pooled.end(), b.x, b.x + b.n);
  }
  lo_ = pooled.empty() ? 0.0 : percentile_select(pooled, std::max(0.0, q - kWindowBelowPoints));
  for (std::size_t k = 0; k < plan.block_count(side); ++k) {
    const ResampledBlock& b = plan.block(side, k);
    std::vector<std::uint32_t> below(b.n + 1, 0), in(b.n + 1, 0);
    std::vector<double> values;
    for (std::size_t i = 0; i < b.n; ++i) {
      const bool low = b.x[i] < lo_;
      below[i + 1] = below[i] + low;
      in[i + 1] = in[i] + !low;
      if (!low) values.push_back(b.x[i]);
    }
    below_.push_back(std::move(below));
    in_.push_back(std::move(in));
    in_values_.push_back(std::move(values));
  }
}

double PieceQuantile::operator()(const std::vector<Piece>& pieces, std::vector<double>& scratch) const {
  std::size_t n = 0, below = 0;
  scratch.clear();
  for (const Piece& p : pieces) {
    n += p.take;
    below += below_[p.block][p.start + p.take] - below_[p.block][p.start];
    const double* v = in_values_[p.block].data();
    scratch.insert(scratch.end(), v + in_[p.block][p.start], v + in_[p.block][p.start + p.take]);
  }
  if (n == 0 || !(q_ >= 0.0 && q_ <= 100.0)) return kNaN;
  // Ranks as percentile_select: h = (n - 1) q / 100, x[floor h] and the next one. Every value below
  // lo_ ranks before every value at or above it, so ranks >= `below` are ranks in `scratch`.
  const double h = (static_cast<double>(n) - 1.0) * q_ / 100.0;
  const std::size_t lo = static_cast<std::size_t>(std::floor(h));
  if (lo >= below) return interpolate_at(scratch, lo - below, h - static_cast<double>(lo), lo + 1 < n);
  plan_.materialize(side_, pieces, scratch);  // the replicate's P_q lies below the window
  return percentile_select(scratch, q_);
}

namespace {
std::vector<double> replicates_of(const RoundResampler& plan, double q, std::uint64_t seed, int resamples,
                                  const StopCheck& stop) {
  std::vector<double> replicates;
  if (resamples <= 0 || plan.empty()) return replicates;
  const PieceQuantile c_q(plan, 0, q), e_q(plan, 1, q);
  replicates.reserve(static_cast<std::size_t>(resamples));
  std::mt19937_64 rng(seed);
  std::vector<std::vector<Piece>> pieces;
  std::vector<double> scratch;  // reused across replicates
  for (int i = 0; i < resamples; ++i) {
    if (stop && i % kStopCheckEvery == 0 && stop()) throw Interrupted();
    // A paired replicate may draw only rounds in which one side lost its block (excluded): it has no
    // ratio, and is drawn again (a few times at most; then it counts as NaN).
    for (int attempt = 0; attempt < kRedrawsForAnEmptySide; ++attempt) {
      plan.draw(rng, pieces);
      if (!pieces[0].empty() && !pieces[1].empty()) break;
    }
    const double c = c_q(pieces[0], scratch), e = e_q(pieces[1], scratch);
    replicates.push_back(c > 0.0 && e > 0.0 ? std::log(c / e) : kNaN);
  }
  return replicates;
}

// Continued fraction of the regularized incomplete beta function (Numerical Recipes, 6.4), for x below
// its mean (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  d = 1.0 / (std::fabs(d) < kTiny ? kTiny : d);
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    for (int half = 0; half < 2; ++half) {
      const double num = half == 0 ? m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m))
                                   : -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
      d = 1.0 + num * d;
      d = 1.0 / (std::fabs(d) < kTiny ? kTiny : d);
      c = 1.0 + num / c;
      if (std::fabs(c) < kTiny) c = kTiny;
      h *= d * c;
      if (half == 1 && std::fabs(d * c - 1.0) < 1e-15) return h;
    }
  }
  return h;
}

double incomplete_beta(double a, double b, double x) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_fraction(a, b, x) / a;
  return 1.0 - front * beta_fraction(b, a, 1.0 - x) / b;
}
}  // namespace

std::vector<double> log_ratio_replicates(const BlockedSamples& colocated, const BlockedSamples& exclusive, Pairing pairing,
                                         double q, std::uint64_t seed, int resamples, std::size_t block_length,
                                         const StopCheck& stop) {
  if (resamples <= 0 || !has_samples(colocated) || !has_samples(exclusive)) return {};
  return replicates_of(RoundResampler({&colocated, &exclusive}, pairing, block_length), q, seed, resamples, stop);
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double student_t_cdf(double t, double df) {
  if (!(df > 0.0)) return std::numeric_limits<double>::quiet_NaN();
  const double tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
  return t >= 0.0 ? 1.0 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0.0 && p < 1.0) || !(df > 0.0)) return std::numeric_limits<double>::quiet_NaN();
  if (p < 0.5) return -student_t_quantile(1.0 - p, df);
  double lo = 0.0, hi = 1.0;
  while (student_t_cdf(hi, df) < p && hi < 1e12) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

Estimate interval_at(Estimate e, double z) {
  e.z = z;
  e.confidence = 2.0 * normal_cdf(z) - 1.0;
  // Whole rounds resampled: Student's t with clusters - 1 degrees of freedom at the same one-sided tail
  // as z; runs of samples within few rounds: z itself.
  e.quantile = e.whole_rounds
                   ? student_t_quantile(normal_cdf(z), static_cast<double>(e.clusters - 1))
                   : z;
  if (!std::isfinite(e.log_se) || !(e.value > -1.0) || !(z > 0.0) || !std::isfinite(e.quantile)) {
    e.ci_low = e.ci_high = kNaN;
    return e;
  }
  const double centre = std::log1p(e.value);
  e.ci_low = std::expm1(centre - e.quantile * e.log_se);
  e.ci_high = std::expm1(centre + e.quantile * e.log_se);
  return e;
}

Estimate percentile_ratio_estimate(const BlockedSamples& colocated, const BlockedSamples& exclusive, Pairing pairing,
                                   double q, std::uint64_t seed, int resamples, std::size_t block_length,
                                   const StopCheck& stop) {
  Estimate est{kNaN, kNaN, kNaN, 0.95, resamples, seed};
  est.pairing = pairing;
  if (!has_samples(colocated) || !has_samples(exclusive)) return est;
  std::vector<double> c = pool_samples(colocated), e = pool_samples(exclusive);
  const double pc = percentile_select(c, q), pe = percentile_select(e, q);
  est.value = pe > 0.0 ? pc / pe - 1.0 : kNaN;
  const RoundResampler plan({&colocated, &exclusive}, pairing, block_length);
  est.clusters = static_cast<int>(plan.clusters());
  est.whole_rounds = plan.whole_rounds();
  if (resamples >= 2) {
    const std::vector<double> reps = replicates_of(plan, q, seed, resamples, stop);
    // A NaN replicate (a side's P_q not positive) leaves no standard error; with sample times it cannot
    // occur. Whole clusters: the bootstrap variance of a mean over C clusters is (C - 1) / C of the
    // usual estimate, so it is scaled back by C / (C - 1).
    if (std::none_of(reps.begin(), reps.end(), [](double v) { return std::isnan(v); })) {
      const double c_count = static_cast<double>(est.clusters);
      est.log_se = stddev(reps) * (plan.whole_rounds() && c_count > 1 ? std::sqrt(c_count / (c_count - 1.0)) : 1.0);
    }
  }
  return interval_at(est, kZ95);
}

}  // namespace ib
