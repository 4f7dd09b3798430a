#include "harness/analysis/compare.h"
#include "harness/core/numbers.h"

#include "harness/analysis/analysis.h"
#include "harness/core/exit_codes.h"
#include "harness/core/text.h"
#include "harness/stats/stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>

namespace ib {

double interval_factor(std::size_t clusters, bool whole_rounds) {
  const double c = static_cast<double>(clusters);
  if (!whole_rounds || c < 2) return kZ95;
  return std::sqrt(c / (c - 1.0)) * student_t_quantile(normal_cdf(kZ95), c - 1.0);
}

namespace {


double ratio_minus_one(double a, double b) { return b > 0.0 ? a / b - 1.0 : kNaN; }

// One side's three figures on one set of values (reorders them: selections).
struct SideFigures {
  double p95_slowdown = kNaN, median_slowdown = kNaN, throughput = kNaN;
};

SideFigures figures(std::vector<double>& E, std::vector<double>& C, std::vector<double>& D, double work) {
  SideFigures f;
  if (E.empty() || C.empty()) return f;
  const double mean_d = D.empty() ? kNaN : mean(D);  // before the selections reorder D (it may be C)
  f.median_slowdown = ratio_minus_one(percentile_select(C, 50.0), percentile_select(E, 50.0));
  f.p95_slowdown = ratio_minus_one(percentile_select(C, 95.0), percentile_select(E, 95.0));
  f.throughput = mean_d > 0.0 ? work / mean_d : kNaN;
  return f;
}

SideFigures pooled_figures(const TenantSamples& s) {
  std::vector<double> E = pool_samples(s.E), C = pool_samples(s.C), D = pool_samples(s.D);
  return figures(E, C, D, s.work_per_sample);
}

// The three changes of NEW against BASE.
std::array<double, 3> changes(const SideFigures& base, const SideFigures& next) {
  return {next.p95_slowdown - base.p95_slowdown, next.median_slowdown - base.median_slowdown,
          ratio_minus_one(next.throughput, base.throughput)};
}

// A side's resampling plan: its rounds with E, C and D (for a latency basis; with a sample-time basis D
// is C) drawn together.
struct SidePlan {
  const TenantSamples& s;
  RoundResampler plan;
  explicit SidePlan(const TenantSamples& samples)
      : s(samples), plan({&samples.E, &samples.C, &samples.D}, samples.pairing) {}
  bool empty() const { return plan.empty(); }
  SideFigures draw(std::mt19937_64& rng, std::vector<std::vector<Piece>>& pieces, std::vector<double>& e,
                   std::vector<double>& c, std::vector<double>& d) const {
    plan.draw(rng, pieces);
    plan.materialize(0, pieces[0], e);
    plan.materialize(1, pieces[1], c);
    if (s.by_latency) plan.materialize(2, pieces[2], d);
    else d = c;
    return figures(e, c, d, s.work_per_sample);
  }
};

double spread_factor(const RoundResampler& plan) { return interval_factor(plan.clusters(), plan.whole_rounds()); }

// The replicates of the three changes and of each side's three figures, one vector per metric, and the
// factors that turn their standard deviations into 95% half-widths (the change's: the side with fewer
// rounds decides).
struct Replicates {
  std::array<std::vector<double>, 3> change, base, next;
  double change_factor = kZ95, base_factor = kZ95, next_factor = kZ95;
};

Replicates change_replicates(const TenantSamples& base, const TenantSamples& next, const CompareOptions& o) {
  Replicates reps;
  const SidePlan b(base), n(next);
  if (o.resamples <= 0 || b.empty() || n.empty()) return reps;
  reps.base_factor = spread_factor(b.plan);
  reps.next_factor = spread_factor(n.plan);
  reps.change_factor = std::max(reps.base_factor, reps.next_factor);
  std::mt19937_64 rng(o.seed);
  std::vector<std::vector<Piece>> pieces;
  std::vector<double> e, c, d;
  for (int i = 0; i < o.resamples; ++i) {
    const SideFigures fb = b.draw(rng, pieces, e, c, d);
    const SideFigures fn = n.draw(rng, pieces, e, c, d);
    const auto ch = changes(fb, fn);
    const double vb[3] = {fb.p95_slowdown, fb.median_slowdown, fb.throughput};
    const double vn[3] = {fn.p95_slowdown, fn.median_slowdown, fn.throughput};
    for (std::size_t m = 0; m < 3; ++m) {
      reps.change[m].push_back(ch[m]);
      reps.base[m].push_back(vb[m]);
      reps.next[m].push_back(vn[m]);
    }
  }
  return reps;
}

// factor x the standard deviation of the replicates; NaN without them (or with a NaN among them).
double half_width(const std::vector<double>& reps, double factor) {
  if (reps.size() < 2 || std::any_of(reps.begin(), reps.end(), [](double v) { return std::isnan(v); })) return kNaN;
  return factor * stddev(reps);
}

// `width` as a fraction of `of`; NaN where that is not a number.
double relative(double width, double of) { return std::isfinite(of) && of > 0.0 ? width / of : kNaN; }

// The change's 95% interval: normal on the difference, its half-width from the replicates.
void set_ci(Estimate& e, double half) {
  if (!std::isfinite(half) || !std::isfinite(e.value)) return;
  e.ci_low = e.value - half;
  e.ci_high = e.value + half;
}

std::string points(double v) { return std::isfinite(v) ? formatted("%+.1f", v * 100.0) : std::string("n/a"); }

std::string change_text(ComparedMetric m, const Estimate& c) {
  const bool slowdown = m != ComparedMetric::throughput;
  const std::string unit = slowdown ? " points" : "%";
  return points(c.value) + unit + " [" + points(c.ci_low) + ", " + points(c.ci_high) + "]";
}

std::string class_reason(const MetricChange& m, double x) {
  const bool slowdown = m.metric != ComparedMetric::throughput;
  const std::string limit = formatted("%.1f", x * 100.0) + (slowdown ? " points" : "%");
  const std::string what = std::string(to_string(m.metric)) + " " + change_text(m.metric, m.change);
  switch (m.verdict) {
    case ChangeClass::worse: return what + ": the whole CI is worse than " + limit;
    case ChangeClass::better: return what + ": the whole CI is better than " + limit;
    case ChangeClass::same: return what + ": within " + limit + " on the worse side";
    case ChangeClass::inconclusive: {
      if (std::isnan(m.change.ci_low)) return what + ": no CI";
      // Which side keeps the comparison from resolving the limit: the one whose own interval is wider.
      const std::string unit = slowdown ? " points" : "%";
      const bool base_wider = m.base_resolution > m.next_resolution;
      return what + ": the CI reaches beyond " + limit + " but not wholly; it resolves +/-" +
             formatted("%.1f", m.resolution * 100.0) + unit + " (BASE alone +/-" + formatted("%.1f", m.base_resolution * 100.0) +
             ", NEW alone +/-" + formatted("%.1f", m.next_resolution * 100.0) + ": " + (base_wider ? "BASE" : "NEW") +
             "'s interval is the wider; measure it longer)";
    }
  }
  return what;
}

std::size_t count_of(const BlockedSamples& s) { return pool_samples(s).size(); }

}  // namespace

TenantSamples tenant_samples(const std::vector<RunTenant>& reps) {
  TenantSamples s;
  s.by_latency = !reps.empty();
  for (const auto& [run, t] : reps) {
    s.by_latency &= !counted_latencies(t->exclusive).empty() && !counted_latencies(t->colocated).empty();
    s.per_work |= judged_per_work(t->exclusive) || judged_per_work(t->colocated);
    if (t->exclusive.source == PhaseSource::baseline || run->blocks.empty()) s.pairing = Pairing::independent;
  }
  for (const auto& [run, t] : reps) {
    const auto rounds = [&, run = run](const PhaseResult& p, bool latencies) {
      return s.pairing == Pairing::paired ? counted_by_round(p, run->blocks, run->rounds, latencies)
                                          : counted_by_block(p, latencies);
    };
    s.E.push_back(rounds(t->exclusive, s.by_latency));
    s.C.push_back(rounds(t->colocated, s.by_latency));
    s.D.push_back(rounds(t->colocated, false));
    s.work_per_sample = t->work.amount;
  }
  return s;
}

ChangeClass classify_change(const Estimate& change, double x, bool higher_is_worse) {
  if (std::isnan(change.ci_low) || std::isnan(change.ci_high)) return ChangeClass::inconclusive;
  // Turned so that "higher is worse" holds: worse_low..worse_high.
  const double low = higher_is_worse ? change.ci_low : -change.ci_high;
  const double high = higher_is_worse ? change.ci_high : -change.ci_low;
  if (low > x) return ChangeClass::worse;
  if (high > x) return ChangeClass::inconclusive;
  if (high < -x) return ChangeClass::better;
  return ChangeClass::same;
}

ChangeClass worst_class(const std::vector<ChangeClass>& classes) {
  for (ChangeClass c : {ChangeClass::worse, ChangeClass::inconclusive, ChangeClass::better})
    if (std::find(classes.begin(), classes.end(), c) != classes.end()) return c;
  return ChangeClass::same;
}

std::vector<MetricChange> compare_samples(const TenantSamples& base, const TenantSamples& next, const CompareOptions& o) {
  const SideFigures fb = pooled_figures(base), fn = pooled_figures(next);
  const auto point = changes(fb, fn);
  auto reps = change_replicates(base, next, o);
  const double base_values[3] = {fb.p95_slowdown, fb.median_slowdown, fb.throughput};
  const double next_values[3] = {fn.p95_slowdown, fn.median_slowdown, fn.throughput};
  const bool enough_for_p95 = std::min({count_of(base.E), count_of(base.C), count_of(next.E), count_of(next.C)}) >=
                              kMinSamplesP95;
  std::vector<MetricChange> out;
  for (std::size_t m = 0; m < 3; ++m) {
    MetricChange c;
    c.metric = static_cast<ComparedMetric>(m);
    c.base = base_values[m];
    c.next = next_values[m];
    c.change = Estimate{point[m], kNaN, kNaN, 0.95, o.resamples, o.seed};
    c.resolution = half_width(reps.change[m], reps.change_factor);
    c.base_resolution = half_width(reps.base[m], reps.base_factor);
    c.next_resolution = half_width(reps.next[m], reps.next_factor);
    if (c.metric == ComparedMetric::throughput) {  // like the change, a fraction of the side's own figure
      c.base_resolution = relative(c.base_resolution, c.base);
      c.next_resolution = relative(c.next_resolution, c.next);
    }
    set_ci(c.change, c.resolution);
    c.verdict = classify_change(c.change, o.max_regression, c.metric != ComparedMetric::throughput);
    c.reason = class_reason(c, o.max_regression);
    if (c.metric == ComparedMetric::p95_slowdown && !enough_for_p95) {  // the reason that matters first
      c.verdict = ChangeClass::inconclusive;
      c.reason = std::string(to_string(c.metric)) + " " + change_text(c.metric, c.change) + ": fewer than " +
                 std::to_string(kMinSamplesP95) + " counted values in a phase of one of the runs";
    }
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

struct TenantRuns {
  TenantIdentity id;
  std::vector<RunTenant> reps;
};

bool same_identity(const TenantIdentity& a, const TenantIdentity& b) {
  return a.scenario == b.scenario && a.mode == b.mode && a.tenant == b.tenant && a.workload == b.workload &&
         a.params == b.params;
}

// Every tenant of the runs that ran (not waived), with its repetitions, in order of first appearance.
std::vector<TenantRuns> tenants_of(const Results& r) {
  std::vector<TenantRuns> out;
  for (const RunResult& run : r.runs) {
    if (run.status == RunStatus::waived) continue;
    for (const TenantResult& t : run.tenants) {
      const TenantIdentity id{run.scenario, run.mode, t.name, t.workload, t.params.dump()};
      auto it = std::find_if(out.begin(), out.end(), [&](const TenantRuns& x) { return same_identity(x.id, id); });
      if (it == out.end()) it = out.insert(out.end(), TenantRuns{id, {}});
      it->reps.push_back({&run, &t});
    }
  }
  return out;
}

const TenantRuns* find_tenant(const std::vector<TenantRuns>& all, const TenantIdentity& id) {
  for (const auto& t : all)
    if (same_identity(t.id, id)) return &t;
  return nullptr;
}

TenantComparison compare_tenant(const TenantRuns& base, const TenantRuns& next, const CompareOptions& o) {
  TenantComparison c;
  c.id = base.id;
  const TenantSamples sb = tenant_samples(base.reps), sn = tenant_samples(next.reps);
  c.base_exclusive_n = count_of(sb.E);
  c.base_colocated_n = count_of(sb.C);
  c.next_exclusive_n = count_of(sn.E);
  c.next_colocated_n = count_of(sn.C);
  const auto basis = [](const TenantSamples& s) {
    return s.by_latency ? "request_latency" : s.per_work ? "time_per_work" : "sample_time";
  };
  c.basis = basis(sb);
  if (std::string(basis(sb)) != basis(sn)) {
    c.verdict = ChangeClass::inconclusive;
    c.reason = std::string("the runs judge this tenant on different values (") + basis(sb) + " in one, " + basis(sn) +
               " in the other)";
    return c;
  }
  c.metrics = compare_samples(sb, sn, o);
  std::vector<ChangeClass> classes;
  for (const auto& m : c.metrics) classes.push_back(m.verdict);
  c.verdict = worst_class(classes);
  for (const auto& m : c.metrics)
    if (m.verdict == c.verdict) {
      c.reason = m.reason;
      break;
    }
  return c;
}

}  // namespace

Comparison compare_results(const Results& base, const Results& next, const CompareOptions& o) {
  Comparison out;
  out.max_regression = o.max_regression;
  out.seed = o.seed;
  out.resamples = o.resamples;
  const auto base_tenants = tenants_of(base), next_tenants = tenants_of(next);
  for (const auto& b : base_tenants) {
    const TenantRuns* n = find_tenant(next_tenants, b.id);
    if (!n) {
      out.only_in_base.push_back(b.id);
      continue;
    }
    out.tenants.push_back(compare_tenant(b, *n, o));
    switch (out.tenants.back().verdict) {
      case ChangeClass::better: ++out.better; break;
      case ChangeClass::same: ++out.same; break;
      case ChangeClass::worse: ++out.worse; break;
      case ChangeClass::inconclusive: ++out.inconclusive; break;
    }
  }
  for (const auto& n : next_tenants)
    if (!find_tenant(base_tenants, n.id)) out.only_in_next.push_back(n.id);
  out.exit_code = out.worse > 0 ? kExitVerdictFailed : (out.inconclusive > 0 || out.tenants.empty()) ? kExitInconclusive : kExitPass;
  return out;
}

}  // namespace ib
