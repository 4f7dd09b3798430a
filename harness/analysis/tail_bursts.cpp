// Tail bursts (docs/design.md section 4, "One bad block"): a block's tail against the other blocks of its phase,
// flagged over a whole repetition (flag_tail_bursts) or for the block just measured (tail_burst_now).
#include "harness/analysis/analysis.h"
#include "harness/analysis/analysis_steps.h"

#include "harness/core/text.h"
#include "harness/stats/stats.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace ib {

using namespace analysis_steps;

std::vector<bool> tail_bursts(const std::vector<BlockTail>& blocks, double cutoff) {
  std::vector<bool> flags(blocks.size(), false);
  if (blocks.size() < kMinBlocksForTails) return flags;
  std::vector<double> L, T;
  for (const BlockTail& b : blocks) {
    L.push_back(std::log(b.p95));
    T.push_back(std::log(b.p95 / b.median));
  }
  const auto far_above = [&](const std::vector<double>& x) {
    const double m = median(x);
    std::vector<double> dev;
    for (double v : x) dev.push_back(std::fabs(v - m));
    const double limit = std::max(kTailZ * 1.4826 * median(dev), std::log1p(cutoff / 4));
    std::vector<bool> out;
    for (double v : x) out.push_back(v - m > limit);
    return out;
  };
  const auto high_p95 = far_above(L), high_tail = far_above(T);
  for (std::size_t k = 0; k < blocks.size(); ++k) flags[k] = high_p95[k] && high_tail[k];
  return flags;
}

namespace {
// A tail needs enough values for a P95 to say something.
constexpr std::size_t kMinValuesForTail = 20;

bool judged_in_tails(const BlockRecord& b) { return b.status == BlockStatus::clean || b.status == BlockStatus::outlier; }
}  // namespace

namespace analysis_steps {

std::optional<std::size_t> tenant_index(const RunResult& run, const std::string& name) {
  for (std::size_t i = 0; i < run.tenants.size(); ++i)
    if (run.tenants[i].name == name) return i;
  return std::nullopt;
}

// Blocks of `phase` with tenant `name`, judged in tails, up to and including index `upto`.
std::vector<int> tail_reference(const RunResult& run, Phase phase, const std::string& name, int upto) {
  std::vector<int> out;
  for (const BlockRecord& b : run.blocks)
    if (b.index <= upto && b.phase == phase && has_tenant(b, name) && judged_in_tails(b)) out.push_back(b.index);
  return out;
}

std::string tail_reason(const std::vector<BlockTail>& tails, std::size_t k) {
  std::vector<double> p95s, medians;
  for (std::size_t j = 0; j < tails.size(); ++j)
    if (j != k) p95s.push_back(tails[j].p95), medians.push_back(tails[j].median);
  const double others_p95 = median(p95s), others_median = median(medians);
  return "tail burst: P95 " + formatted("%.4g ms", tails[k].p95 * 1e3) + ", " + formatted("%.2f", tails[k].p95 / others_p95) +
         "x the median of the phase's other blocks' P95 (" + formatted("%.4g ms", others_p95 * 1e3) + "), while its median is " +
         formatted("%.2f", tails[k].median / others_median) + "x theirs";
}

// Flags the tail bursts of every tenant's phases over the whole repetition (docs/design.md section 4).
void flag_tail_bursts(RunResult& run) {
  for (std::size_t i = 0; i < run.tenants.size(); ++i)
    for (Phase ph : {Phase::exclusive, Phase::alone, Phase::colocated}) {
      const std::string& name = run.tenants[i].name;
      std::vector<int> idx;
      std::vector<BlockTail> tails;
      for (int k : tail_reference(run, ph, name, INT_MAX))
        if (const auto t = block_tail(run, i, k)) idx.push_back(k), tails.push_back(*t);
      const auto flags = tail_bursts(tails, run.cutoff);
      for (std::size_t j = 0; j < idx.size(); ++j) {
        if (!flags[j]) continue;
        BlockRecord& b = run.blocks[idx[j]];
        if (std::find(b.tail_bursts.begin(), b.tail_bursts.end(), name) == b.tail_bursts.end()) b.tail_bursts.push_back(name);
        if (ph != Phase::colocated && b.status == BlockStatus::clean) {
          b.status = BlockStatus::outlier;
          b.reason = name + ": " + tail_reason(tails, j) + "; found once the phase had enough blocks, not re-run";
        }
      }
    }
}

}  // namespace analysis_steps

std::optional<BlockTail> block_tail(const RunResult& run, std::size_t tenant, int index) {
  const BlockRecord& b = run.blocks[static_cast<std::size_t>(index)];
  const PhaseResult& p = phase_of(run.tenants[tenant], b.phase);
  const bool latencies = !p.latencies_s.empty() && p.latency_count.size() == p.start_ns.size();
  std::vector<double> v;
  std::size_t off = 0;
  for (std::size_t i = 0; i < p.start_ns.size() && p.block.size() == p.start_ns.size(); ++i) {
    const std::size_t c = latencies ? std::min<std::size_t>(p.latency_count[i], p.latencies_s.size() - off) : 0;
    const bool inside = b.phase != Phase::colocated ||
                        (b.overlap_start_ns && p.start_ns[i] >= *b.overlap_start_ns && end_ns(p, i) <= *b.overlap_end_ns);
    if (p.block[i] == index && inside) {
      if (latencies) v.insert(v.end(), p.latencies_s.begin() + off, p.latencies_s.begin() + off + c);
      else v.push_back(sample_value(p, i));
    }
    off += c;
  }
  if (v.size() < kMinValuesForTail) return std::nullopt;
  const double p95 = percentile(v, 95.0), med = median(v);
  if (!(med > 0.0)) return std::nullopt;
  return BlockTail{p95, med};
}

std::string tail_burst_now(RunResult& run, int index) {
  BlockRecord& b = run.blocks[static_cast<std::size_t>(index)];
  std::string why;
  for (const std::string& name : b.tenants) {
    const auto i = tenant_index(run, name);
    if (!i) continue;
    std::vector<BlockTail> tails;
    bool last_is_this = false;
    for (int k : tail_reference(run, b.phase, name, index))
      if (const auto t = block_tail(run, *i, k)) tails.push_back(*t), last_is_this = k == index;
    if (!last_is_this || !tail_bursts(tails, run.cutoff).back()) continue;
    b.tail_bursts.push_back(name);
    why += (why.empty() ? "" : "; ") + name + ": " + tail_reason(tails, tails.size() - 1);
  }
  return why;
}

}  // namespace ib
