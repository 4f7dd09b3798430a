// Samples into a phase's statistics (which samples count, grouped by block and round, summarize_phase), the
// coverage of colocated samples and the blocks' overlap windows, summarize_blocks and a phase's telemetry.
// Tail bursts: tail_bursts.cpp; warnings: warnings.cpp; metrics and verdicts: tenant_metrics.cpp;
// over repetitions: aggregate.cpp (analysis_steps.h).
#include "harness/analysis/analysis.h"
#include "harness/analysis/analysis_steps.h"
#include "harness/analysis/ranks.h"

#include "harness/stats/stats.h"
#include "kernels/workload.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <set>

namespace ib {

using namespace analysis_steps;

bool sample_counts(const PhaseResult& p, std::size_t i) {
  if (!p.counted.empty()) return p.counted[i] != 0;
  return p.in_window.empty() || p.in_window[i] != 0;
}

std::vector<double> counted_values(const PhaseResult& p) {
  std::vector<double> d;
  d.reserve(p.duration_s.size());
  for (std::size_t i = 0; i < p.duration_s.size(); ++i)
    if (sample_counts(p, i)) d.push_back(sample_value(p, i));
  return d;
}

std::vector<double> counted_latencies(const PhaseResult& p) {
  std::vector<double> counted;
  if (p.latency_count.size() != p.start_ns.size()) return counted;
  std::size_t off = 0;
  for (std::size_t i = 0; i < p.latency_count.size(); ++i) {
    const std::size_t c = std::min<std::size_t>(p.latency_count[i], p.latencies_s.size() - off);
    if (sample_counts(p, i)) counted.insert(counted.end(), p.latencies_s.begin() + off, p.latencies_s.begin() + off + c);
    off += c;
  }
  return counted;
}

std::vector<std::vector<double>> counted_by_block(const PhaseResult& p, bool latencies) {
  std::map<int, std::size_t> slot;  // block index -> position in `out`, in order of first appearance
  std::vector<std::vector<double>> out;
  std::size_t off = 0;
  const bool lat_ok = p.latency_count.size() == p.start_ns.size();
  for (std::size_t i = 0; i < p.start_ns.size(); ++i) {
    const std::size_t c = lat_ok ? std::min<std::size_t>(p.latency_count[i], p.latencies_s.size() - off) : 0;
    const int b = p.block.size() == p.start_ns.size() ? p.block[i] : 0;
    if (sample_counts(p, i)) {
      auto it = slot.find(b);
      if (it == slot.end()) it = slot.emplace(b, out.size()).first, out.emplace_back();
      auto& v = out[it->second];
      if (latencies) v.insert(v.end(), p.latencies_s.begin() + off, p.latencies_s.begin() + off + c);
      else v.push_back(sample_value(p, i));
    }
    off += c;
  }
  return out;
}

std::vector<std::vector<double>> counted_by_round(const PhaseResult& p, const std::vector<BlockRecord>& blocks, int rounds,
                                                  bool latencies) {
  std::vector<std::vector<double>> out(static_cast<std::size_t>(std::max(rounds, 0)));
  std::size_t off = 0;
  const bool lat_ok = p.latency_count.size() == p.start_ns.size();
  for (std::size_t i = 0; i < p.start_ns.size(); ++i) {
    const std::size_t c = lat_ok ? std::min<std::size_t>(p.latency_count[i], p.latencies_s.size() - off) : 0;
    const int b = p.block.size() == p.start_ns.size() ? p.block[i] : -1;
    if (sample_counts(p, i) && b >= 0 && b < static_cast<int>(blocks.size()) && blocks[b].round >= 0 &&
        blocks[b].round < rounds) {
      auto& v = out[static_cast<std::size_t>(blocks[b].round)];
      if (latencies) v.insert(v.end(), p.latencies_s.begin() + off, p.latencies_s.begin() + off + c);
      else v.push_back(sample_value(p, i));
    }
    off += c;
  }
  return out;
}

void summarize_phase(PhaseResult& p, const Work& work, const std::vector<BlockRecord>& blocks) {
  const std::size_t n = p.start_ns.size();
  // Flags read from a file (a baseline: its blocks are not this run's) are kept.
  if (p.in_window.size() != n) p.in_window.assign(n, 1);
  if (p.counted.size() != n) p.counted.assign(n, 1);
  for (std::size_t i = 0; i < n && p.block.size() == n; ++i) {
    const int k = p.block[i];
    if (k < 0 || k >= static_cast<int>(blocks.size())) continue;
    const BlockRecord& b = blocks[k];
    if (b.phase == Phase::colocated)
      p.in_window[i] = b.overlap_start_ns && p.start_ns[i] >= *b.overlap_start_ns && end_ns(p, i) <= *b.overlap_end_ns;
    p.counted[i] = p.in_window[i] && b.counts();
  }
  // The values the phase is judged on: durations, or time per unit of work (judged_per_work).
  const auto values = counted_values(p);
  const auto flags = mad_outliers(values);
  p.outlier.assign(n, 0);
  p.outliers = 0;
  for (std::size_t i = 0, k = 0; i < n; ++i)
    if (p.counted[i]) p.outliers += (p.outlier[i] = flags[k++]);
  double total = 0.0, total_work = 0.0;
  const bool per_work = judged_per_work(p);
  for (std::size_t i = 0; i < n; ++i)
    if (p.counted[i]) {
      total += p.duration_s[i];
      total_work += per_work ? p.duration_s[i] / sample_value(p, i) : work.amount;
    }
  p.stats = summarize(values);
  set_sample_values(p, work.unit);
  p.throughput = total > 0.0 ? total_work / total : kNaN;
  p.throughput_unit = work.unit + "/s";
  // 1 s windows inside each block (a window never spans the gap between two blocks), pooled.
  std::map<int, std::pair<std::vector<std::int64_t>, std::vector<double>>> per_block;
  for (std::size_t i = 0; i < n; ++i)
    if (p.counted[i]) {
      auto& [st, du] = per_block[p.block.size() == n ? p.block[i] : 0];
      st.push_back(p.start_ns[i]);
      du.push_back(p.duration_s[i]);
    }
  std::vector<double> windows;
  for (const auto& [k, sd] : per_block) {
    const auto w = window_throughputs(sd.first, sd.second, work.amount);
    windows.insert(windows.end(), w.begin(), w.end());
  }
  if (per_work) {  // a sample is an interval of the program's own report: its throughput is that window's
    windows.clear();
    for (std::size_t i = 0; i < n; ++i)
      if (p.counted[i]) windows.push_back(1.0 / sample_value(p, i));
  }
  p.window_cv = windows.size() >= 2 ? cv(windows) : kNaN;
  p.counters.clear();
  for (auto& [name, column] : p.counter_samples) {
    column.resize(n, 0.0);  // a counter missing from the last samples counts 0 there
    if (name == kLongestCollectiveCounter) continue;  // a figure per sample, not an amount to sum
    PhaseResult::CounterTotal c;
    for (std::size_t i = 0; i < n; ++i)
      if (p.counted[i]) c.total += column[i];
    c.rate = total > 0.0 ? c.total / total : kNaN;
    p.counters[name] = c;
  }
  p.latency.reset();
  if (!p.latencies_s.empty()) p.latency = summarize(counted_latencies(p));
  summarize_ranks(p);
}

namespace {
// The parts of [a, b) that `cover` (sorted, non-overlapping) covers, intersected with `parts`.
Intervals intersect(const Intervals& parts, const Intervals& cover, std::size_t& from) {
  Intervals out;
  while (from < cover.size() && cover[from].second <= (parts.empty() ? 0 : parts.front().first)) ++from;
  for (const auto& [a, b] : parts)
    for (std::size_t k = from; k < cover.size() && cover[k].first < b; ++k) {
      const std::int64_t lo = std::max(a, cover[k].first), hi = std::min(b, cover[k].second);
      if (lo < hi) out.push_back({lo, hi});
    }
  return out;
}
}  // namespace

std::vector<double> coverage(const Intervals& self, const std::vector<Intervals>& others) {
  std::vector<double> out;
  out.reserve(self.size());
  std::vector<std::size_t> from(others.size(), 0);  // self is sorted: each list is scanned forward once
  for (const auto& [a, b] : self) {
    if (b <= a) {
      out.push_back(kNaN);
      continue;
    }
    Intervals covered = {{a, b}};
    for (std::size_t k = 0; k < others.size() && !covered.empty(); ++k) covered = intersect(covered, others[k], from[k]);
    std::int64_t sum = 0;
    for (const auto& [lo, hi] : covered) sum += hi - lo;
    out.push_back(static_cast<double>(sum) / static_cast<double>(b - a));
  }
  return out;
}

namespace {
// The overlap window of each colocated block: from the latest first-sample start to the earliest
// last-sample end over its tenants (none when a tenant has no sample in it).
void overlap_windows(RunResult& run) {
  for (BlockRecord& b : run.blocks) {
    if (b.phase != Phase::colocated) continue;
    std::int64_t lo = INT64_MIN, hi = INT64_MAX;
    bool all = true;
    for (TenantResult& t : run.tenants) {
      if (!has_tenant(b, t.name)) continue;
      const PhaseResult& p = t.colocated;
      std::int64_t first = INT64_MAX, last = INT64_MIN;
      for (std::size_t i = 0; i < p.start_ns.size(); ++i)
        if (p.block[i] == b.index) {
          first = std::min(first, p.start_ns[i]);
          last = std::max(last, end_ns(p, i));
        }
      all &= first != INT64_MAX;
      lo = std::max(lo, first);
      hi = std::min(hi, last);
    }
    if (all && lo < hi) {
      b.overlap_start_ns = lo;
      b.overlap_end_ns = hi;
    }
  }
}

Intervals intervals_in_block(const PhaseResult& p, int block, bool counted_only) {
  Intervals v;
  for (std::size_t i = 0; i < p.start_ns.size(); ++i)
    if (p.block[i] == block && (!counted_only || p.counted[i])) v.push_back({p.start_ns[i], end_ns(p, i)});
  return v;
}

// Coverage of every counted colocated sample against the other tenants of its block; mean and P5.
void colocated_coverage(RunResult& run) {
  for (TenantResult& t : run.tenants) {
    PhaseResult& p = t.colocated;
    p.coverage.assign(p.start_ns.size(), kNaN);
    for (const BlockRecord& b : run.blocks) {
      if (b.phase != Phase::colocated || !has_tenant(b, t.name)) continue;
      std::vector<Intervals> others;
      for (const TenantResult& o : run.tenants)
        if (&o != &t && has_tenant(b, o.name)) others.push_back(intervals_in_block(o.colocated, b.index, false));
      const auto cov = coverage(intervals_in_block(p, b.index, true), others);
      for (std::size_t i = 0, k = 0; i < p.start_ns.size(); ++i)
        if (p.block[i] == b.index && p.counted[i]) p.coverage[i] = cov[k++];
    }
    std::vector<double> counted;
    for (std::size_t i = 0; i < p.coverage.size(); ++i)
      if (p.counted[i] && std::isfinite(p.coverage[i])) counted.push_back(p.coverage[i]);
    p.coverage_mean.reset();
    p.coverage_p5.reset();
    if (!counted.empty()) {
      p.coverage_mean = mean(counted);
      p.coverage_p5 = percentile(counted, 5);
    }
  }
}
}  // namespace

void summarize_blocks(RunResult& run) {
  overlap_windows(run);
  flag_tail_bursts(run);
  run.barrier_skew_s.reset();
  for (const BlockRecord& b : run.blocks)
    if (b.barrier_skew_s) run.barrier_skew_s = std::max(run.barrier_skew_s.value_or(0.0), *b.barrier_skew_s);
  for (TenantResult& t : run.tenants)
    for (Phase ph : {Phase::exclusive, Phase::alone, Phase::colocated}) {
      int blocks = 0, clean = 0;
      for (const BlockRecord& b : run.blocks)
        if (b.phase == ph && has_tenant(b, t.name)) {
          ++blocks;
          clean += b.counts();
        }
      if (blocks == 0) continue;  // not measured in this run (e.g. from a baseline file)
      PhaseResult& p = phase_of(t, ph);
      p.block.resize(p.start_ns.size(), 0);
      summarize_phase(p, t.work, run.blocks);
      p.blocks = blocks;
      p.blocks_counted = clean;
    }
  colocated_coverage(run);
}

void attach_telemetry(PhaseResult& p, std::vector<TelemetrySample> telemetry) {
  p.telemetry = std::move(telemetry);
  p.throttled = flag_throttled_samples(p.start_ns, p.duration_s, p.telemetry);
  std::vector<std::uint8_t> counted;
  for (std::size_t i = 0; i < p.throttled.size(); ++i)
    if (sample_counts(p, i)) counted.push_back(p.throttled[i]);
  p.throttle = summarize_throttle(counted, p.telemetry);
}

}  // namespace ib
