#include "harness/analysis.h"

#include <cmath>
#include <sstream>

namespace ib {

std::vector<double> counted_durations(const PhaseResult& p) {
  std::vector<double> d;
  d.reserve(p.duration_s.size());
  for (std::size_t i = 0; i < p.duration_s.size(); ++i)
    if (p.in_window[i]) d.push_back(p.duration_s[i]);
  return d;
}

void summarize_phase(PhaseResult& p, const Work& work, std::optional<std::int64_t> ws,
                     std::optional<std::int64_t> we) {
  const std::size_t n = p.start_ns.size();
  p.in_window.assign(n, 1);
  if (ws && we) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto end_ns = p.start_ns[i] + static_cast<std::int64_t>(std::llround(p.duration_s[i] * 1e9));
      p.in_window[i] = p.start_ns[i] >= *ws && end_ns <= *we;
    }
  }
  std::vector<std::int64_t> starts;
  std::vector<double> durations;
  for (std::size_t i = 0; i < n; ++i)
    if (p.in_window[i]) {
      starts.push_back(p.start_ns[i]);
      durations.push_back(p.duration_s[i]);
    }
  const auto flags = mad_outliers(durations);
  p.outlier.assign(n, 0);
  p.outliers = 0;
  for (std::size_t i = 0, k = 0; i < n; ++i)
    if (p.in_window[i]) {
      p.outlier[i] = flags[k++];
      p.outliers += p.outlier[i];
    }
  double total = 0.0;
  for (double d : durations) total += d;
  p.stats = summarize(durations);
  p.throughput = total > 0.0 ? work.amount * static_cast<double>(durations.size()) / total : std::nan("");
  p.throughput_unit = work.unit + "/s";
  p.window_cv = window_throughput_cv(starts, durations, work.amount);
  p.counters.clear();
  for (auto& [name, column] : p.counter_samples) {
    column.resize(n, 0.0);  // a counter missing from the last samples counts 0 there
    PhaseResult::CounterTotal c;
    for (std::size_t i = 0; i < n; ++i)
      if (p.in_window[i]) c.total += column[i];
    c.rate = total > 0.0 ? c.total / total : std::nan("");
    p.counters[name] = c;
  }
  p.latency.reset();
  if (!p.latencies_s.empty()) p.latency = summarize(counted_latencies(p));
}

std::vector<double> counted_latencies(const PhaseResult& p) {
  std::vector<double> counted;
  if (p.latency_count.size() != p.start_ns.size() || p.in_window.size() != p.start_ns.size()) return counted;
  std::size_t off = 0;
  for (std::size_t i = 0; i < p.latency_count.size(); ++i) {
    const std::size_t c = std::min<std::size_t>(p.latency_count[i], p.latencies_s.size() - off);
    if (p.in_window[i]) counted.insert(counted.end(), p.latencies_s.begin() + off, p.latencies_s.begin() + off + c);
    off += c;
  }
  return counted;
}

void attach_telemetry(PhaseResult& p, std::vector<TelemetrySample> telemetry) {
  p.telemetry = std::move(telemetry);
  p.throttled = flag_throttled_samples(p.start_ns, p.duration_s, p.telemetry);
  std::vector<std::uint8_t> counted;
  for (std::size_t i = 0; i < p.throttled.size(); ++i)
    if (p.in_window[i]) counted.push_back(p.throttled[i]);
  p.throttle = summarize_throttle(counted, p.telemetry);
}

namespace {
std::string percent(double x) {
  std::ostringstream os;
  os.precision(3);
  os << x * 100.0 << "%";
  return os.str();
}
}  // namespace

void finalize_run(RunResult& run, std::uint64_t seed, int resamples) {
  std::vector<MedianPair> pairs;
  bool all_colocated = !run.tenants.empty();
  for (std::size_t i = 0; i < run.tenants.size(); ++i) {
    TenantResult& t = run.tenants[i];
    // Under time-slicing the alone phase is the exclusive one (source "exclusive"): use its samples.
    const PhaseResult& alone = t.alone.source == "exclusive" ? t.exclusive : t.alone;
    for (const PhaseResult* p : {&t.exclusive, &t.alone})
      if (p->measured() && p->source != "exclusive" && p->stats.cv > kNoisyBaselineCv)
        t.warnings.push_back(std::string("noisy baseline: the ") + (p == &t.exclusive ? "exclusive" : "alone") +
                             " phase has a sample-time CV of " + percent(p->stats.cv) + " (above " +
                             percent(kNoisyBaselineCv) + "); slowdowns below that level are not resolvable");
    for (const PhaseResult* p : {&t.exclusive, &t.alone, &t.colocated})
      if (p->measured() && p->source != "exclusive" && p->throttle && p->throttle->throttled_samples > 0)
        t.warnings.push_back(percent(p->throttle->throttled_fraction) + " of the " +
                             (p == &t.exclusive ? "exclusive" : p == &t.alone ? "alone" : "colocated") +
                             " samples ran throttled (reasons seen: " + reason_names(p->throttle->reasons_seen) +
                             "); flagged and kept in the statistics");
    for (const PhaseResult* p : {&t.exclusive, &t.colocated})
      if (p->measured() && p->outliers > 0)
        t.warnings.push_back(std::to_string(p->outliers) + " outlier sample(s) flagged (MAD) in the " +
                             (p == &t.exclusive ? "exclusive" : "colocated") + " phase; kept in the statistics");

    const std::vector<std::string> bad = {"error", "crashed", "exited", "timeout", "stopped", "interrupted"};
    const PhaseResult* failed = nullptr;
    for (const PhaseResult* p : {&t.exclusive, &t.alone, &t.colocated})
      for (const auto& b : bad)
        if (p->outcome.status == b && !failed) failed = p;
    if (t.exclusive.outcome.status == "waived") {
      t.verdict = Verdict::waived;
      t.verdict_reason = t.exclusive.outcome.message;
    } else if (failed) {
      t.verdict = Verdict::error;
      t.verdict_reason = "worker " + failed->outcome.status + (failed->outcome.message.empty() ? "" : ": " + failed->outcome.message);
    }
    const bool have_e = t.exclusive.measured(), have_a = alone.measured(), have_c = t.colocated.measured();
    if (have_e && have_c) {
      // Latency-type workloads are judged on their per-request latencies (queueing included): an
      // open-loop sample lasts as long as its arrivals do, so its duration hides a slower victim.
      const auto lat_e = counted_latencies(t.exclusive), lat_a = counted_latencies(alone),
                 lat_c = counted_latencies(t.colocated);
      const bool by_latency = !lat_e.empty() && !lat_c.empty() && (!have_a || !lat_a.empty());
      const auto E = by_latency ? lat_e : counted_durations(t.exclusive);
      const auto A = by_latency ? lat_a : counted_durations(alone);
      const auto C = by_latency ? lat_c : counted_durations(t.colocated);
      TenantMetrics m;
      m.basis = by_latency ? "request_latency" : "sample_time";
      m.p95_slowdown = p95_slowdown(C, E, seed + i, resamples);
      m.median_slowdown = median_slowdown(C, E);
      m.partition_cost = have_a ? partition_cost(A, E) : std::nan("");
      m.interference = have_a ? interference(C, A) : std::nan("");
      t.metrics = m;
      // STP and ANTT are about throughput: always on sample times.
      if (have_a) pairs.push_back({median(counted_durations(alone)), median(counted_durations(t.colocated))});
      if (!failed) {
        const auto v = slowdown_verdict(E.size(), C.size(), m.p95_slowdown.value, run.cutoff);
        t.verdict = v.verdict;
        t.verdict_reason = v.reason;
      }
    } else if (!failed && t.exclusive.outcome.status != "waived") {
      all_colocated = false;
      if (have_e && run.mode == "exclusive") {
        t.verdict = Verdict::baseline;
        t.verdict_reason = "exclusive mode measures the baseline only";
      } else {
        t.verdict = Verdict::error;
        t.verdict_reason = "not measured: " + (run.message.empty() ? std::string("phases missing") : run.message);
      }
    }
    if (!have_c) all_colocated = false;
  }
  if (all_colocated && pairs.size() == run.tenants.size())
    run.system = SystemMetrics{system_throughput(pairs), average_normalised_turnaround(pairs)};
}

RunSummary summarize_results(const std::vector<RunResult>& runs, bool interrupted) {
  RunSummary s;
  s.runs = static_cast<int>(runs.size());
  s.interrupted = interrupted;
  for (const auto& r : runs)
    for (const auto& t : r.tenants) {
      ++s.tenants;
      switch (t.verdict) {
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
  else if (s.failed > 0 || s.inconclusive > 0) s.exit_code = 1;
  else s.exit_code = 0;
  return s;
}

}  // namespace ib
