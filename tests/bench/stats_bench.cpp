// Google Benchmark (not a timed test): statistics over 10 million samples and JSON writing of a
// 1-million-sample result. Figures are recorded in docs/performance.md.
#include "harness/analysis/analysis.h"
#include "harness/stats/bootstrap.h"
#include "harness/stats/metrics.h"
#include "harness/stats/sequential.h"
#include "harness/stats/stats.h"
#include "reports/json/results_json.h"
#include "reports/html/results_html.h"
#include "reports/prometheus/results_prometheus.h"
#include "reports/junit/results_junit.h"
#include "reports/markdown/results_markdown.h"

#include <benchmark/benchmark.h>

#include <random>

namespace {

std::vector<double> make_samples(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> d(std::log(0.01), 0.05);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

void BM_Summarize10M(benchmark::State& state) {
  const auto v = make_samples(10'000'000, 1);
  for (auto _ : state) benchmark::DoNotOptimize(ib::summarize(v));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(v.size()));
}
BENCHMARK(BM_Summarize10M)->Unit(benchmark::kMillisecond);

void BM_MadOutliers10M(benchmark::State& state) {
  const auto v = make_samples(10'000'000, 2);
  for (auto _ : state) benchmark::DoNotOptimize(ib::mad_outliers(v));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(v.size()));
}
BENCHMARK(BM_MadOutliers10M)->Unit(benchmark::kMillisecond);

void BM_WindowCv10M(benchmark::State& state) {
  const auto d = make_samples(10'000'000, 3);
  std::vector<std::int64_t> start(d.size());
  std::int64_t t = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    start[i] = t;
    t += static_cast<std::int64_t>(d[i] * 1e9);
  }
  for (auto _ : state) benchmark::DoNotOptimize(ib::window_throughput_cv(start, d, 1.0));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(d.size()));
}
BENCHMARK(BM_WindowCv10M)->Unit(benchmark::kMillisecond);

// The bootstrap at a realistic phase size (3,000 samples a side, 1,000 resamples).
void BM_P95SlowdownBootstrap(benchmark::State& state) {
  const auto c = make_samples(static_cast<std::size_t>(state.range(0)), 4);
  const auto e = make_samples(static_cast<std::size_t>(state.range(0)), 5);
  for (auto _ : state) benchmark::DoNotOptimize(ib::p95_slowdown({{c}}, {{e}}, 1, 1000));
}
BENCHMARK(BM_P95SlowdownBootstrap)->Arg(3000)->Unit(benchmark::kMillisecond);

// The round bootstrap (harness/stats/bootstrap.h) with 3 repetitions x 3 rounds x 3,000
// samples per side, 1,000 resamples, P95. Blocks are AR(1) (rho 0.7) log-normal series, so the
// run lengths are the ones the rule picks for autocorrelated samples.
ib::BlockedSamples make_blocked(std::size_t reps, std::size_t blocks, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> eps(0.0, 0.05 * std::sqrt(1.0 - 0.7 * 0.7));
  ib::BlockedSamples d(reps, std::vector<std::vector<double>>(blocks, std::vector<double>(n)));
  for (auto& rep : d)
    for (auto& block : rep) {
      double z = 0.0;
      for (auto& x : block) {
        z = 0.7 * z + eps(rng);
        x = 0.01 * std::exp(z);
      }
    }
  return d;
}

void BM_HierarchicalBootstrap(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto c = make_blocked(3, 3, n, 7);
  const auto e = make_blocked(3, 3, n, 8);
  for (auto _ : state)
    benchmark::DoNotOptimize(ib::percentile_ratio_estimate(c, e, ib::Pairing::paired, 95.0, 1, 1000));
  state.SetItemsProcessed(state.iterations() * 1000);  // replicates
}
BENCHMARK(BM_HierarchicalBootstrap)->Arg(3000)->Unit(benchmark::kMillisecond);

// One stopping look (harness/analysis/deciding.h) costs one paired round bootstrap per tenant: 1,000
// resamples over 20 rounds of `n` samples per side (n = 150: 3,000 a side, a 10 s GPU phase of 3 ms
// samples; n = 3,000: 60,000 a side, sub-millisecond samples or per-request latencies), and the
// look's boundary. Compared in docs/performance.md with the time of a round.
void BM_PairedBootstrapLook(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto c = make_blocked(1, 20, n, 9);
  const auto e = make_blocked(1, 20, n, 10);
  const auto z = ib::obrien_fleming_boundaries(ib::planned_looks(10, 2, 30), ib::kSequentialAlpha);
  for (auto _ : state) {
    const auto est = ib::interval_at(ib::percentile_ratio_estimate(c, e, ib::Pairing::paired, 95.0, 1, 1000), z[5]);
    benchmark::DoNotOptimize(ib::slowdown_verdict(20 * n, 20 * n, est, 0.4));
  }
  state.SetItemsProcessed(state.iterations() * 1000);  // replicates
}
BENCHMARK(BM_PairedBootstrapLook)->Arg(150)->Arg(3000)->Unit(benchmark::kMillisecond);

// The boundaries of a run's looks (once per scenario): 11 looks, 10 to 30 rounds.
void BM_ObrienFlemingBoundaries(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ib::obrien_fleming_boundaries(ib::planned_looks(10, 2, 30)));
}
BENCHMARK(BM_ObrienFlemingBoundaries)->Unit(benchmark::kMillisecond);

void BM_JsonWrite1M(benchmark::State& state) {
  ib::Results r;
  ib::RunResult run;
  ib::TenantResult t;
  const auto d = make_samples(1'000'000, 6);
  t.exclusive.duration_s = d;
  t.exclusive.start_ns.resize(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) t.exclusive.start_ns[i] = static_cast<std::int64_t>(i) * 10'000'000;
  t.exclusive.outcome.status = ib::WorkerStatus::ok;
  ib::summarize_phase(t.exclusive, {1.0, "FLOP"}, {});
  run.tenants.push_back(t);
  r.runs.push_back(run);
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = ib::results_to_json(r, true).dump(1);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["json_MB"] = static_cast<double>(bytes) / 1e6;
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(d.size()));
}
BENCHMARK(BM_JsonWrite1M)->Unit(benchmark::kMillisecond);

// A result of 1 M raw samples as the writers get it: one timesliced pair, each tenant's exclusive and
// colocated phases 250 000 samples, summarized, with an aggregate verdict per tenant.
ib::Results million_sample_result() {
  ib::Results r;
  r.meta.argv = {"interference-bench", "--suite", "bench"};
  ib::RunResult run;
  run.scenario = "bench-pair";
  run.mode = "timeslice";
  run.cutoff = 0.4;
  for (int k = 0; k < 2; ++k) {
    ib::TenantResult t;
    t.name = k == 0 ? "victim" : "aggressor";
    t.workload = "host-compute";
    t.params = {{"n", 64}};
    t.work = {1.0, "FLOP"};
    for (ib::PhaseResult* p : {&t.exclusive, &t.colocated}) {
      const auto d = make_samples(250'000, 10 + static_cast<std::uint64_t>(k) + (p == &t.colocated ? 2 : 0));
      p->duration_s = d;
      p->start_ns.resize(d.size());
      for (std::size_t i = 0; i < d.size(); ++i) p->start_ns[i] = static_cast<std::int64_t>(i) * 10'000'000;
      p->outcome.status = ib::WorkerStatus::ok;
      ib::summarize_phase(*p, t.work, {});
    }
    ib::TenantMetrics m;
    m.p95_slowdown = {0.25, 0.2, 0.3, 0.95, 1000, 1};
    m.median_slowdown = 0.2;
    m.n_exclusive = m.n_colocated = 250'000;
    t.metrics = m;
    t.verdict = k == 0 ? ib::Verdict::pass : ib::Verdict::fail;
    run.tenants.push_back(t);
    ib::TenantAggregate a;
    a.scenario = run.scenario;
    a.mode = run.mode;
    a.tenant = t.name;
    a.workload = t.workload;
    a.repetitions = a.repetitions_measured = 1;
    a.metrics = m;
    a.verdict = t.verdict;
    a.verdict_reason = "bench";
    r.aggregates.push_back(a);
  }
  r.runs.push_back(run);
  r.summary = ib::summarize_results(r.aggregates, 1, false);
  return r;
}

// Every output format rendered from that result (writers format, they never compute: these are the
// costs of formatting alone). Arg: 0 JSON, 1 Markdown, 2 JUnit, 3 Prometheus, 4 HTML.
void BM_Render1M(benchmark::State& state) {
  static const ib::Results r = million_sample_result();
  const auto render = [&]() -> std::string {
    switch (state.range(0)) {
      case 0: return ib::results_to_json(r, true).dump(1);
      case 1: return ib::markdown_summary(r);
      case 2: return ib::junit_xml(r);
      case 3: return ib::prometheus_text(r);
      default: return ib::html_report_available() ? ib::html_report(r) : std::string();
    }
  };
  static const char* const kNames[] = {"json", "markdown", "junit", "prometheus", "html"};
  state.SetLabel(kNames[state.range(0)]);
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = render();
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_Render1M)->DenseRange(0, 4)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
