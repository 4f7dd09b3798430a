#include "harness/analysis/ranks.h"
#include "harness/analysis/analysis.h"

#include "harness/analysis/advice.h"

#include "harness/core/text.h"

#include "harness/stats/bootstrap.h"
#include "harness/stats/stats.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace ib {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::int64_t end_ns(const PhaseResult& p, std::size_t i) {
  return p.start_ns[i] + static_cast<std::int64_t>(std::llround(p.duration_s[i] * 1e9));
}

bool has_tenant(const BlockRecord& b, const std::string& name) {
  return std::find(b.tenants.begin(), b.tenants.end(), name) != b.tenants.end();
}
}  // namespace

bool sample_counts(const PhaseResult& p, std::size_t i) {
  if (!p.counted.empty()) return p.counted[i] != 0;
  return p.in_window.empty() || p.in_window[i] != 0;
}

std::vector<double> counted_durations(const PhaseResult& p) {
  std::vector<double> d;
  d.reserve(p.duration_s.size());
  for (std::size_t i = 0; i < p.duration_s.size(); ++i)
    if (sample_counts(p, i)) d.push_back(p.duration_s[i]);
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
      else v.push_back(p.duration_s[i]);
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
      else v.push_back(p.duration_s[i]);
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
  const auto durations = counted_durations(p);
  const auto flags = mad_outliers(durations);
  p.outlier.assign(n, 0);
  p.outliers = 0;
  for (std::size_t i = 0, k = 0; i < n; ++i)
    if (p.counted[i]) p.outliers += (p.outlier[i] = flags[k++]);
  double total = 0.0;
  for (double d : durations) total += d;
  p.stats = summarize(durations);
  p.throughput = total > 0.0 ? work.amount * static_cast<double>(durations.size()) / total : kNaN;
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
  p.window_cv = windows.size() >= 2 ? cv(windows) : kNaN;
  p.counters.clear();
  for (auto& [name, column] : p.counter_samples) {
    column.resize(n, 0.0);  // a counter missing from the last samples counts 0 there
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

}  // namespace ib

namespace ib {

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

// Flags the tail bursts of every tenant's phases over the whole repetition (DESIGN.md section 4).
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
}  // namespace

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
      else v.push_back(p.duration_s[i]);
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

namespace ib {

namespace {

const WorkerStatus kBadStatuses[] = {WorkerStatus::error,   WorkerStatus::crashed, WorkerStatus::exited,
                                     WorkerStatus::timeout, WorkerStatus::stopped, WorkerStatus::interrupted};

const PhaseResult* failed_phase(const TenantResult& t) {
  for (const PhaseResult* p : {&t.exclusive, &t.alone, &t.colocated})
    for (const WorkerStatus b : kBadStatuses)
      if (p->outcome.status == b) return p;
  return nullptr;
}

// Exclusive medians of the first and last round differ by more than cutoff/4 (DESIGN.md section 4).
std::optional<std::string> drift_warning(const RunResult& run, const TenantResult& t) {
  if (run.rounds < 2 || t.exclusive.block.size() != t.exclusive.start_ns.size()) return std::nullopt;
  std::vector<double> first, last;
  for (std::size_t i = 0; i < t.exclusive.start_ns.size(); ++i) {
    const int k = t.exclusive.block[i];
    if (!sample_counts(t.exclusive, i) || k < 0 || k >= static_cast<int>(run.blocks.size())) continue;
    if (run.blocks[k].round == 0) first.push_back(t.exclusive.duration_s[i]);
    if (run.blocks[k].round == run.rounds - 1) last.push_back(t.exclusive.duration_s[i]);
  }
  if (first.empty() || last.empty()) return std::nullopt;
  const double change = median(last) / median(first) - 1.0;
  if (!(std::fabs(change) > run.cutoff / 4)) return std::nullopt;
  return "drift: the exclusive median changed by " + percent(change) + " from the first round to the last (more than cutoff/4 = " +
         percent(run.cutoff / 4) + "); the machine changed during the run";
}

// The colocated blocks in which this tenant's tail burst (flag_tail_bursts), named: kept, since a
// neighbour may have caused it, but the reader learns which block drove the tail.
void tail_burst_warnings(const RunResult& run, TenantResult& t) {
  const auto i = tenant_index(run, t.name);
  if (!i) return;
  std::vector<int> idx;
  std::vector<BlockTail> tails;
  for (int k : tail_reference(run, Phase::colocated, t.name, INT_MAX))
    if (const auto tail = block_tail(run, *i, k)) idx.push_back(k), tails.push_back(*tail);
  for (std::size_t j = 0; j < idx.size(); ++j) {
    const BlockRecord& b = run.blocks[static_cast<std::size_t>(idx[j])];
    if (std::find(b.tail_bursts.begin(), b.tail_bursts.end(), t.name) == b.tail_bursts.end()) continue;
    t.warnings.push_back({WarningKind::tail_burst, "colocated block " + std::to_string(b.index) + " (round " +
                                                       std::to_string(b.round + 1) + ") drove the tail: " + tail_reason(tails, j) +
                                                       "; kept (a neighbour may have caused it)"});
  }
}

void phase_warnings(const RunResult& run, TenantResult& t) {
  const auto name = [&](const PhaseResult* p) { return p == &t.exclusive ? "exclusive" : p == &t.alone ? "alone" : "colocated"; };
  const auto add = [&](WarningKind k, std::string text) { t.warnings.push_back({k, std::move(text)}); };
  for (const PhaseResult* p : {&t.exclusive, &t.alone})
    if (p->measured() && p->source != PhaseSource::exclusive && p->stats.cv > kNoisyBaselineCv)
      add(WarningKind::noisy_baseline, std::string("noisy baseline: the ") + name(p) + " phase has a sample_cv of " +
                                           percent(p->stats.cv) + " (above " + percent(kNoisyBaselineCv) +
                                           "); slowdowns below that level are not resolvable");
  for (const PhaseResult* p : {&t.exclusive, &t.alone, &t.colocated}) {
    if (!p->measured() || p->source == PhaseSource::exclusive) continue;
    if (p->throttle && p->throttle->throttled_samples > 0)
      add(WarningKind::throttled, percent(p->throttle->throttled_fraction) + " of the " + name(p) +
                                      " samples ran throttled (reasons seen: " + reason_names(p->throttle->reasons_seen) +
                                      "); flagged and kept in the statistics");
    const double flagged = p->stats.n ? static_cast<double>(p->outliers) / static_cast<double>(p->stats.n) : 0.0;
    // An open-loop sample lasts its slice of the arrival schedule, so its duration is nearly constant and
    // MAD flags on it say nothing; such a tenant is judged on per-request latency.
    const bool open_loop = !p->latencies_s.empty();
    if (!open_loop && flagged > 0.10)
      add(WarningKind::multi_modal, std::string("multi-modal: ") + percent(flagged) + " of the " + name(p) +
                                        " samples are MAD-flagged, so the distribution has more than one mode (not a few outliers); kept");
    else if (!open_loop && p->outliers > 0)
      add(WarningKind::outliers, std::to_string(p->outliers) + " outlier sample(s) flagged (MAD) in the " + name(p) +
                                     " phase; kept in the statistics");
    if (p->blocks > p->blocks_counted)
      add(WarningKind::blocks_not_counted, std::to_string(p->blocks - p->blocks_counted) + " of " + std::to_string(p->blocks) +
                                               " " + name(p) +
                                               " block(s) not counted: contaminated by foreign load or a tail burst (see runs[].blocks)");
  }
  tail_burst_warnings(run, t);
  if (t.colocated.coverage_mean && *t.colocated.coverage_mean < 0.9)
    add(WarningKind::coverage, "coverage: colocated samples overlapped their neighbours " + percent(*t.colocated.coverage_mean) +
                                   " of their time on average (below 90%); the neighbours were not always running");
  if (const auto d = drift_warning(run, t)) add(WarningKind::drift, *d);
  for (const PhaseResult* p : {&t.exclusive, &t.alone, &t.colocated})
    if (p->outcome.escaped_processes > 0)
      add(WarningKind::escaped_processes,
          std::to_string(p->outcome.escaped_processes) + " process(es) of the program left its process group (setsid or "
              "setpgid) in the " + name(p) + " phase: stopped with it between blocks and killed at its end; the "
              "tenant's own doing, not its neighbours'");
}

// Issue 37 item 1: a program whose processes left its group is named in the verdict's reason as the
// tenant's fault ("" when none did).
std::string escape_note(const std::vector<const TenantResult*>& reps) {
  std::size_t n = 0;
  for (const TenantResult* t : reps)
    for (const PhaseResult* p : {&t->exclusive, &t->alone, &t->colocated}) n += p->outcome.escaped_processes;
  return n == 0 ? std::string() : "; its program left " + std::to_string(n) + " process(es) outside its process group "
                                  "(killed with it; the tenant's fault)";
}

struct Basis {
  bool by_latency = false;
  Pairing pairing = Pairing::paired;
  BlockedSamples E, A, C;
};

// One tenant in one repetition.
struct TenantRep {
  const RunResult* run;
  const TenantResult* t;
};

const PhaseResult& alone_of(const TenantResult& t) { return t.alone.source == PhaseSource::exclusive ? t.exclusive : t.alone; }

// Latency-type workloads are judged on their per-request latencies (queueing included): an open-loop
// sample lasts as long as its arrivals do, so its duration hides a slower victim. The rounds are
// paired unless an exclusive phase comes from a baseline file (measured in another run's rounds).
Basis basis_of(const std::vector<TenantRep>& reps, bool have_a) {
  Basis b;
  b.by_latency = true;
  for (const TenantRep& r : reps) {
    const TenantResult* t = r.t;
    b.by_latency &= !counted_latencies(t->exclusive).empty() && !counted_latencies(t->colocated).empty() &&
                    (!have_a || !counted_latencies(alone_of(*t)).empty());
    // A phase from a baseline file was measured in another run's rounds; a run without block records
    // (a file from before rounds) has no rounds to pair.
    if (t->exclusive.source == PhaseSource::baseline || r.run->blocks.empty()) b.pairing = Pairing::independent;
  }
  for (const TenantRep& r : reps) {
    const TenantResult* t = r.t;
    const auto rounds = [&](const PhaseResult& p) {
      return b.pairing == Pairing::paired ? counted_by_round(p, r.run->blocks, r.run->rounds, b.by_latency)
                                          : counted_by_block(p, b.by_latency);
    };
    b.E.push_back(rounds(t->exclusive));
    b.A.push_back(have_a ? counted_by_block(alone_of(*t), b.by_latency) : std::vector<std::vector<double>>{});
    b.C.push_back(rounds(t->colocated));
  }
  return b;
}

TenantMetrics metrics_of(const Basis& b, bool have_a, std::uint64_t seed, int resamples, double z, const StopCheck& stop) {
  const auto E = pool_samples(b.E), A = pool_samples(b.A), C = pool_samples(b.C);
  TenantMetrics m;
  m.basis = b.by_latency ? "request_latency" : "sample_time";
  m.p95_slowdown = interval_at(p95_slowdown(b.C, b.E, seed, resamples, stop, b.pairing), z);
  m.median_slowdown = median_slowdown(C, E);
  m.partition_cost = have_a ? partition_cost(A, E) : kNaN;
  m.interference = have_a ? interference(C, A) : kNaN;
  m.n_exclusive = E.size();
  m.n_colocated = C.size();
  return m;
}

// A phase that ran blocks but has none clean cannot be judged (foreign load took all of them).
std::optional<std::string> no_clean_blocks(const std::vector<const TenantResult*>& reps) {
  for (const char* name : {"exclusive", "colocated"}) {
    int blocks = 0, clean = 0;
    for (const TenantResult* t : reps) {
      const PhaseResult& p = std::string(name) == "exclusive" ? t->exclusive : t->colocated;
      blocks += p.blocks;  // 0 for a phase read from a baseline file
      clean += p.blocks_counted;
    }
    if (blocks > 0 && clean == 0)
      return "foreign load: none of the " + std::to_string(blocks) + " " + name +
             " blocks was clean (all contaminated, see runs[].blocks); run again on a quieter machine";
  }
  return std::nullopt;
}

VerdictResult judge(const std::vector<const TenantResult*>& reps, const TenantMetrics& m, double cutoff) {
  if (const auto why = no_clean_blocks(reps)) return {Verdict::inconclusive, *why};
  return slowdown_verdict(m.n_exclusive, m.n_colocated, m.p95_slowdown, cutoff);
}

}  // namespace

void finalize_run(RunResult& run, std::uint64_t seed, int resamples, const StopCheck& stop) {
  std::vector<MedianPair> vs_exclusive, vs_alone;
  bool all_colocated = !run.tenants.empty();
  for (std::size_t i = 0; i < run.tenants.size(); ++i) {
    TenantResult& t = run.tenants[i];
    const PhaseResult& alone = t.alone.source == PhaseSource::exclusive ? t.exclusive : t.alone;
    phase_warnings(run, t);
    const PhaseResult* failed = failed_phase(t);
    if (t.exclusive.outcome.status == WorkerStatus::waived || t.colocated.outcome.status == WorkerStatus::waived ||
        t.alone.outcome.status == WorkerStatus::waived) {
      t.verdict = Verdict::waived;
      for (const PhaseResult* p : {&t.exclusive, &t.alone, &t.colocated})
        if (p->outcome.status == WorkerStatus::waived) t.verdict_reason = p->outcome.message;
    } else if (failed) {
      t.verdict = Verdict::error;
      t.verdict_reason = "worker " + std::string(to_string(failed->outcome.status)) + (failed->outcome.message.empty() ? "" : ": " + failed->outcome.message);
    }
    const bool have_e = t.exclusive.measured(), have_a = alone.measured(), have_c = t.colocated.measured();
    all_colocated &= have_c && have_e && have_a;
    if (have_e && have_c) {
      const Basis b = basis_of({{&run, &t}}, have_a);
      t.metrics = metrics_of(b, have_a, seed + i, resamples, run.stopping.z, stop);
      t.metrics->collective = collective_metrics(t, run.cutoff, run.collective_timeout_s);
      if (have_a) {
        vs_alone.push_back({median(counted_durations(alone)), median(counted_durations(t.colocated))});
        vs_exclusive.push_back({median(counted_durations(t.exclusive)), median(counted_durations(t.colocated))});
      }
      if (!failed && t.verdict != Verdict::waived) {
        const auto v = judge({&t}, *t.metrics, run.cutoff);
        t.verdict = v.verdict;
        t.verdict_reason = v.reason;
      }
    } else if (!failed && t.verdict != Verdict::waived) {
      if (have_e && run.mode == "exclusive") {
        t.verdict = Verdict::baseline;
        t.verdict_reason = "exclusive mode measures the baseline only";
      } else {
        t.verdict = Verdict::error;
        t.verdict_reason = "not measured: " + (run.message.empty() ? std::string("phases missing") : run.message);
      }
    }
    t.verdict_reason += escape_note({&t});
  }
  if (all_colocated && vs_alone.size() == run.tenants.size())
    run.system = SystemMetrics{system_throughput(vs_exclusive), average_normalised_turnaround(vs_exclusive),
                               system_throughput(vs_alone), average_normalised_turnaround(vs_alone)};
}

}  // namespace ib

namespace ib {

namespace {
// The repetitions' own verdicts decide when something stopped the judging: an error in any
// repetition is the aggregate's error; all waived or all baseline stay so.
std::optional<std::pair<Verdict, std::string>> settled_verdict(const std::vector<const TenantResult*>& reps) {
  for (std::size_t k = 0; k < reps.size(); ++k)
    if (reps[k]->verdict == Verdict::error)
      return std::make_pair(Verdict::error, "repetition " + std::to_string(k + 1) + ": " + reps[k]->verdict_reason);
  for (Verdict v : {Verdict::waived, Verdict::baseline})
    if (std::all_of(reps.begin(), reps.end(), [v](const TenantResult* t) { return t->verdict == v; }))
      return std::make_pair(v, reps.front()->verdict_reason);
  return std::nullopt;
}
}  // namespace

std::vector<std::optional<TenantMetrics>> tenant_metrics(const std::vector<const RunResult*>& reps, std::uint64_t seed,
                                                         int resamples, double z, const StopCheck& stop) {
  std::vector<std::optional<TenantMetrics>> out;
  if (reps.empty()) return out;
  for (std::size_t i = 0; i < reps.front()->tenants.size(); ++i) {
    std::vector<TenantRep> with_values;
    bool have_a = true;
    for (const RunResult* r : reps) {
      if (i >= r->tenants.size()) continue;
      const TenantResult& t = r->tenants[i];
      if (counted_durations(t.exclusive).empty() || counted_durations(t.colocated).empty()) continue;
      with_values.push_back({r, &t});
      have_a &= !counted_durations(alone_of(t)).empty();
    }
    if (with_values.empty()) out.emplace_back();
    else out.push_back(metrics_of(basis_of(with_values, have_a), have_a, seed + i, resamples, z, stop));
  }
  return out;
}

namespace {
// How far the aggregate of `reps` got: rounds and measuring time over its repetitions, the last
// repetition's looks and why it stopped, and the resolution (the interval's half-width).
Decision decision_of(const std::vector<const RunResult*>& reps, const TenantAggregate& a) {
  Decision d;
  const Stopping& last = reps.back()->stopping;
  d.decided = a.verdict == Verdict::pass || a.verdict == Verdict::fail;
  for (const RunResult* r : reps) {
    d.rounds += r->rounds;
    if (!r->blocks.empty()) d.seconds += static_cast<double>(r->blocks.back().end_ns - r->blocks.front().start_ns) * 1e-9;
  }
  d.look = last.looks_taken;
  d.looks_planned = static_cast<int>(last.looks.size());
  d.z = last.z;
  d.stopped_by = last.stopped_by;
  const Estimate& e = a.metrics->p95_slowdown;
  d.resolution = (e.ci_high - e.ci_low) / 2.0;
  return d;
}
}  // namespace

namespace {

// What a command tenant's advice is judged on: its declared facts (params), its verdict and step
// times (median exclusive step; the shared one by the median slowdown), its peak GPU memory and mean
// GPU utilisation in the exclusive phase over its measured repetitions.
AdviceInputs advice_inputs(const std::vector<const TenantResult*>& measured, const nlohmann::json& params,
                           const TenantAggregate& a) {
  AdviceInputs in;
  in.p95_verdict = a.verdict;
  if (params.contains("run_length_h") && params["run_length_h"].is_number()) in.run_length_h = params["run_length_h"].get<double>();
  if (params.contains("interruptible") && params["interruptible"].is_boolean()) in.interruptible = params["interruptible"].get<bool>();
  const nlohmann::json prices = params.value("price_per_hour", nlohmann::json::object());
  if (prices.contains("exclusive")) in.price_exclusive_per_h = prices["exclusive"].get<double>();
  if (prices.contains("shared")) in.price_shared_per_h = prices["shared"].get<double>();
  std::vector<double> medians;
  double util_sum = 0.0;
  std::size_t util_n = 0;
  for (const TenantResult* t : measured) {
    medians.push_back(t->exclusive.stats.median);
    const PhaseResult& e = t->exclusive;
    if (e.gpu_memory_peak_bytes && e.gpu_memory_total_bytes && *e.gpu_memory_total_bytes > 0)
      in.peak_memory_fraction = std::max(in.peak_memory_fraction.value_or(0.0),
                                         static_cast<double>(*e.gpu_memory_peak_bytes) / static_cast<double>(*e.gpu_memory_total_bytes));
    for (const TelemetrySample& s : e.telemetry)
      if (s.r.util_gpu_pct) util_sum += *s.r.util_gpu_pct, ++util_n;
  }
  if (util_n > 0) in.gpu_util_pct = util_sum / static_cast<double>(util_n);
  if (!medians.empty() && a.metrics) {
    std::sort(medians.begin(), medians.end());
    in.step_exclusive_s = medians[medians.size() / 2];
    in.step_shared_s = *in.step_exclusive_s * (1.0 + a.metrics->median_slowdown);
  }
  return in;
}

}  // namespace

std::vector<TenantAggregate> aggregate_repetitions(const std::vector<const RunResult*>& reps, std::uint64_t seed,
                                                   int resamples, const StopCheck& stop) {
  std::vector<TenantAggregate> out;
  if (reps.empty()) return out;
  const RunResult& first = *reps.front();
  const double z = reps.back()->stopping.z;
  for (std::size_t i = 0; i < first.tenants.size(); ++i) {
    TenantAggregate a;
    a.scenario = first.scenario;
    a.mode = first.mode;
    a.tenant = first.tenants[i].name;
    a.workload = first.tenants[i].workload;
    std::vector<const TenantResult*> ts, measured;
    std::vector<TenantRep> measured_reps;
    for (const RunResult* r : reps) {
      if (i >= r->tenants.size()) continue;
      const TenantResult& t = r->tenants[i];
      ts.push_back(&t);
      a.repetition_verdicts.push_back(verdict_name(t.verdict));
      if (t.metrics) measured.push_back(&t), measured_reps.push_back({r, &t});
      for (const auto& w : t.warnings)
        if (std::find(a.warnings.begin(), a.warnings.end(), w) == a.warnings.end()) a.warnings.push_back(w);
    }
    a.repetitions = static_cast<int>(ts.size());
    a.repetitions_measured = static_cast<int>(measured.size());
    if (!measured.empty()) {
      const bool have_a = std::all_of(measured.begin(), measured.end(), [](const TenantResult* t) {
        return alone_of(*t).measured();
      });
      a.metrics = metrics_of(basis_of(measured_reps, have_a), have_a, seed + i, resamples, z, stop);
    }
    if (const auto settled = settled_verdict(ts)) {
      a.verdict = settled->first;
      a.verdict_reason = settled->second;
    } else if (a.metrics) {
      const auto v = judge(measured, *a.metrics, first.cutoff);
      a.verdict = v.verdict;
      a.verdict_reason = (reps.size() > 1 ? "over " + std::to_string(measured.size()) + " repetitions: " : std::string()) + v.reason;
    } else {
      a.verdict = Verdict::error;
      a.verdict_reason = "not measured";
    }
    if (!settled_verdict(ts)) a.verdict_reason += escape_note(ts);
    if (a.metrics) a.decision = decision_of(reps, a);
    if (first.tenants[i].workload == "command") a.advice = advise(advice_inputs(measured, first.tenants[i].params, a));
    out.push_back(std::move(a));
  }
  return out;
}

RunSummary summarize_results(const std::vector<TenantAggregate>& aggregates, int runs, bool interrupted) {
  RunSummary s;
  s.runs = runs;
  s.interrupted = interrupted;
  for (const auto& a : aggregates) {
    ++s.tenants;
    switch (a.verdict) {
      case Verdict::pass: ++s.passed; break;
      case Verdict::fail: ++s.failed; break;
      case Verdict::inconclusive: ++s.inconclusive; break;
      case Verdict::baseline: ++s.baseline; break;
      case Verdict::waived: ++s.waived; break;
      case Verdict::error: ++s.errors; break;
    }
  }
  s.pass = !interrupted && s.errors == 0 && s.failed == 0 && s.inconclusive == 0 && s.tenants > 0;
  if (interrupted) s.exit_code = 130;
  else if (s.errors > 0) s.exit_code = 4;
  else if (s.failed > 0) s.exit_code = 1;
  else if (s.inconclusive > 0) s.exit_code = 5;
  else s.exit_code = 0;
  return s;
}

}  // namespace ib
