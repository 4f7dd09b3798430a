#include "harness/stats/bootstrap.h"

#include "harness/core/errors.h"
#include "harness/stats/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ib {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMaxRho = 0.95;  // beyond this the block length would be most of the block anyway

// Uniform index in [0, n) by multiply-shift on a 64-bit draw: the same mapping as draw_index in
// metrics.cpp (a local copy, since metrics.cpp is not ours to edit), not the platform-dependent
// std::uniform_int_distribution, so a seed gives the same CI everywhere.
std::size_t draw_index(std::mt19937_64& rng, std::size_t n) {
  __extension__ using u128 = unsigned __int128;
  return static_cast<std::size_t>((static_cast<u128>(rng()) * n) >> 64);
}

double ratio_minus_one(double num, double den) { return den > 0.0 ? num / den - 1.0 : kNaN; }

bool has_samples(const BlockedSamples& data) {
  for (const auto& rep : data)
    for (const auto& block : rep)
      if (!block.empty()) return true;
  return false;
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

HierarchicalResampler::HierarchicalResampler(const BlockedSamples& data, std::size_t block_length) {
  for (const auto& rep : data) {
    std::vector<Block> blocks;
    for (const auto& b : rep) {
      if (b.empty()) continue;  // empty blocks and repetitions are skipped, not drawn as nothing
      const std::size_t run = block_length == 0 ? moving_block_length(b) : std::min(block_length, b.size());
      blocks.push_back({b.data(), b.size(), run});
    }
    if (!blocks.empty()) reps_.push_back(std::move(blocks));
  }
}

void HierarchicalResampler::draw(std::mt19937_64& rng, std::vector<double>& out) const {
  out.clear();
  for (std::size_t r = 0; r < reps_.size(); ++r) {
    const auto& rep = reps_[draw_index(rng, reps_.size())];
    for (std::size_t k = 0; k < rep.size(); ++k) {
      const Block& b = rep[draw_index(rng, rep.size())];
      // Moving-block bootstrap: runs start anywhere a whole run fits (n - run + 1 starts), so a
      // sample near a block's ends appears in fewer runs; the last run is cut to fill exactly n.
      const std::size_t starts = b.n - b.run + 1;
      for (std::size_t filled = 0; filled < b.n;) {
        const double* s = b.x + draw_index(rng, starts);
        const std::size_t take = std::min(b.run, b.n - filled);
        out.insert(out.end(), s, s + take);
        filled += take;
      }
    }
  }
}

std::vector<double> percentile_ratio_replicates(const BlockedSamples& colocated, const BlockedSamples& exclusive,
                                                double q, std::uint64_t seed, int resamples,
                                                std::size_t block_length, const StopCheck& stop) {
  std::vector<double> replicates;
  const HierarchicalResampler c_plan(colocated, block_length), e_plan(exclusive, block_length);
  if (resamples <= 0 || c_plan.empty() || e_plan.empty()) return replicates;
  replicates.reserve(static_cast<std::size_t>(resamples));
  std::mt19937_64 rng(seed);
  std::vector<double> c, e;  // reused across replicates; percentile_select reorders them in place
  for (int i = 0; i < resamples; ++i) {
    if (stop && i % kStopCheckEvery == 0 && stop()) throw Interrupted();
    c_plan.draw(rng, c);
    e_plan.draw(rng, e);
    replicates.push_back(ratio_minus_one(percentile_select(c, q), percentile_select(e, q)));
  }
  return replicates;
}

Estimate percentile_ratio_ci(const BlockedSamples& colocated, const BlockedSamples& exclusive, double q,
                             std::uint64_t seed, int resamples, double confidence, std::size_t block_length,
                             const StopCheck& stop) {
  Estimate est{kNaN, kNaN, kNaN, confidence, resamples, seed};
  if (!has_samples(colocated) || !has_samples(exclusive)) return est;
  std::vector<double> c = pool_samples(colocated), e = pool_samples(exclusive);
  est.value = ratio_minus_one(percentile_select(c, q), percentile_select(e, q));
  if (resamples <= 0 || !(confidence > 0.0 && confidence < 1.0)) return est;
  std::vector<double> reps = percentile_ratio_replicates(colocated, exclusive, q, seed, resamples, block_length, stop);
  // A NaN would break the sort's ordering; with positive sample times it cannot occur.
  if (std::any_of(reps.begin(), reps.end(), [](double v) { return std::isnan(v); })) return est;
  std::sort(reps.begin(), reps.end());
  // 100 * 0.95 rounds to exactly 95, so the tails are exactly 2.5 and 97.5 (50 * (1 - 0.95) is not).
  const double level = 100.0 * confidence;
  est.ci_low = percentile_sorted(reps, (100.0 - level) / 2.0);
  est.ci_high = percentile_sorted(reps, (100.0 + level) / 2.0);
  return est;
}

}  // namespace ib
