#include "reports/prometheus/results_prometheus.h"

#include "harness/core/text.h"
#include "reports/prometheus/prometheus_common.h"

#include <sstream>

namespace ib {

namespace {

using Labels = PrometheusLabels;
using Family = PrometheusFamily;

std::string gpu_uuid_of(const Results& r, int device) {
  for (const auto& d : r.meta.devices)
    if (d.kind == DeviceKind::gpu && d.index && *d.index == device) return d.uuid.value_or("");
  return "";
}

// The device index the runs of a scenario and mode used.
int device_of(const Results& r, const std::string& scenario, const std::string& mode) {
  for (const auto& run : r.runs)
    if (run.scenario == scenario && run.mode == mode) return run.device;
  return 0;
}

Labels tenant_labels(const Results& r, const std::string& scenario, const std::string& mode, const std::string& tenant,
                     const std::string& workload) {
  return {{"scenario", scenario}, {"mode", mode},
          {"tenant", tenant},     {"workload", workload},
          {"gpu_uuid", gpu_uuid_of(r, device_of(r, scenario, mode))}, {"node", r.meta.host}};
}

void aggregate_families(std::ostringstream& os, const Results& r) {
  Family p95(os, "interference_bench_p95_slowdown",
             "P95(colocated)/P95(exclusive) - 1 over all repetitions (the verdict's point estimate)");
  for (const auto& a : r.aggregates)
    if (a.metrics) p95.sample(tenant_labels(r, a.scenario, a.mode, a.tenant, a.workload), a.metrics->p95_slowdown.value);
  Family median(os, "interference_bench_median_slowdown", "median(colocated)/median(exclusive) - 1 over all repetitions");
  for (const auto& a : r.aggregates)
    if (a.metrics) median.sample(tenant_labels(r, a.scenario, a.mode, a.tenant, a.workload), a.metrics->median_slowdown);
  // How far each verdict got (docs/design.md section 4, "Deciding"): a nightly dashboard sees a run that
  // no longer resolves what it used to before it sees a verdict change.
  Family resolution(os, "interference_bench_p95_slowdown_resolution",
                    "half-width of the P95 slowdown's interval: the slowdown this run resolves (slowdown units)");
  Family ci_low(os, "interference_bench_p95_slowdown_ci_low", "lower end of the P95 slowdown's interval");
  Family ci_high(os, "interference_bench_p95_slowdown_ci_high", "upper end of the P95 slowdown's interval");
  Family rounds(os, "interference_bench_rounds", "rounds the verdict was judged on, over its repetitions");
  Family decided(os, "interference_bench_decided", "1 when the verdict was decided (pass or fail), else 0");
  for (const auto& a : r.aggregates) {
    if (!a.metrics || !a.decision) continue;
    const Labels l = tenant_labels(r, a.scenario, a.mode, a.tenant, a.workload);
    resolution.sample(l, a.decision->resolution);
    ci_low.sample(l, a.metrics->p95_slowdown.ci_low);
    ci_high.sample(l, a.metrics->p95_slowdown.ci_high);
    rounds.sample(l, a.decision->rounds);
    decided.sample(l, a.decision->decided ? 1.0 : 0.0);
  }
  Family verdict(os, "interference_bench_verdict",
                 "1 for the tenant's verdict over all repetitions (label verdict), 0 for the other verdict words");
  for (const auto& a : r.aggregates)
    for (const char* word : EnumWords<Verdict>::words) {
      Labels l = tenant_labels(r, a.scenario, a.mode, a.tenant, a.workload);
      l.emplace_back("verdict", word);
      verdict.sample(l, std::string(word) == verdict_name(a.verdict) ? 1.0 : 0.0);
    }
}

// Command tenants: the advice's choice (1 for it, 0 for the other words) and the cost per step.
void advice_families(std::ostringstream& os, const Results& r) {
  if (std::none_of(r.aggregates.begin(), r.aggregates.end(), [](const TenantAggregate& a) { return a.advice.has_value(); }))
    return;
  Family choice(os, "interference_bench_advice",
                "1 for the card the advice chooses for a user's program (label choice: exclusive, shared, unknown)");
  for (const auto& a : r.aggregates) {
    if (!a.advice) continue;
    for (const char* word : EnumWords<CardChoice>::words) {
      Labels l = tenant_labels(r, a.scenario, a.mode, a.tenant, a.workload);
      l.emplace_back("choice", word);
      choice.sample(l, std::string(word) == to_string(a.advice->choice) ? 1.0 : 0.0);
    }
  }
  if (std::none_of(r.aggregates.begin(), r.aggregates.end(),
                   [](const TenantAggregate& a) { return a.advice && a.advice->cost_per_step_shared; }))
    return;
  Family cost(os, "interference_bench_cost_per_step",
              "price per hour x median step time of a user's program, on each card (label card), when both prices are given");
  for (const auto& a : r.aggregates) {
    if (!a.advice || !a.advice->cost_per_step_exclusive || !a.advice->cost_per_step_shared) continue;
    for (const auto& [card, value] : {std::pair<const char*, double>{"exclusive", *a.advice->cost_per_step_exclusive},
                                      std::pair<const char*, double>{"shared", *a.advice->cost_per_step_shared}}) {
      Labels l = tenant_labels(r, a.scenario, a.mode, a.tenant, a.workload);
      l.emplace_back("card", card);
      cost.sample(l, value);
    }
  }
}

// A collective's amplification over its single-rank reference (per aggregate; only where it is defined).
void amplification_family(std::ostringstream& os, const Results& r) {
  const auto has = [](const TenantAggregate& a) { return a.amplification && a.amplification->value; };
  if (std::none_of(r.aggregates.begin(), r.aggregates.end(), has)) return;
  Family amp(os, "interference_bench_collective_amplification",
             "a collective's P95 slowdown over that of its shared rank alone beside the same neighbours");
  for (const auto& a : r.aggregates)
    if (has(a)) amp.sample(tenant_labels(r, a.scenario, a.mode, a.tenant, a.workload), *a.amplification->value);
}

// Tenants with ranks (docs/design.md section 13), per repetition: ranks, blast radius, the longest stall's
// margin to the collective timeout, and the colocated phase's straggler (label rank) and its share.
void collective_families(std::ostringstream& os, const Results& r) {
  const auto has = [](const TenantResult& t) { return t.metrics && t.metrics->collective; };
  if (std::none_of(r.runs.begin(), r.runs.end(),
                   [&](const RunResult& run) { return std::any_of(run.tenants.begin(), run.tenants.end(), has); }))
    return;
  Family ranks(os, "interference_bench_collective_ranks", "ranks of a collective tenant (one worker process each)");
  Family blast(os, "interference_bench_collective_blast_radius",
               "ranks whose colocated iterations slowed by more than the blast threshold (cutoff / 4)");
  Family margin(os, "interference_bench_collective_stall_margin",
                "collective timeout / the longest colocated sample: below 1 the job would have died");
  Family straggler(os, "interference_bench_collective_straggler_share",
                   "share of the counted colocated samples in which the straggler (label rank) arrived last");
  for (const auto& run : r.runs)
    for (const auto& t : run.tenants) {
      if (!has(t)) continue;
      Labels l = tenant_labels(r, run.scenario, run.mode, t.name, t.workload);
      l.emplace_back("repetition", std::to_string(run.repetition));
      const TenantMetrics::Collective& c = *t.metrics->collective;
      ranks.sample(l, c.ranks);
      blast.sample(l, c.blast_radius);
      margin.sample(l, c.stall_margin);
      if (const auto& f = t.colocated.rank_figures) {
        l.emplace_back("rank", std::to_string(f->straggler_rank));
        straggler.sample(l, f->straggler_share);
      }
    }
  amplification_family(os, r);
}

// Per repetition and phase: throughput, window CV, throttled fraction.
void phase_families(std::ostringstream& os, const Results& r) {
  const Phase phases[] = {Phase::exclusive, Phase::colocated};
  const auto each = [&](Family& f, auto value) {
    for (const auto& run : r.runs)
      for (const auto& t : run.tenants)
        for (Phase ph : phases) {
          const PhaseResult& p = phase_of(t, ph);
          if (!p.measured()) continue;
          Labels l = tenant_labels(r, run.scenario, run.mode, t.name, t.workload);
          l.emplace_back("repetition", std::to_string(run.repetition));
          l.emplace_back("phase", phase_name(ph));
          if (const auto v = value(p)) f.sample(l, *v);
        }
  };
  Family throughput(os, "interference_bench_throughput",
                    "work per second over the phase's counted samples (unit: results.json throughput.unit)");
  each(throughput, [](const PhaseResult& p) { return std::optional<double>(p.throughput); });
  Family window_cv(os, "interference_bench_window_cv", "stddev/mean of the phase's throughput in 1 s windows");
  each(window_cv, [](const PhaseResult& p) { return std::optional<double>(p.window_cv); });
  Family throttled(os, "interference_bench_throttled_fraction",
                   "fraction of the phase's counted samples measured while the GPU was throttled (NVML telemetry)");
  each(throttled, [](const PhaseResult& p) {
    return p.throttle ? std::optional<double>(p.throttle->throttled_fraction) : std::nullopt;
  });
}

}  // namespace

std::string prometheus_text(const Results& r) {
  std::ostringstream os;
  aggregate_families(os, r);
  advice_families(os, r);
  collective_families(os, r);
  phase_families(os, r);
  return os.str();
}

}  // namespace ib
