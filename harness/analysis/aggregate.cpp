// Over the repetitions of one scenario under one mode: each tenant's aggregate (metrics, verdict, how far the
// stopping got, a command tenant's advice) and the totals and exit code of a whole run (summarize_results).
#include "harness/analysis/analysis.h"
#include "harness/analysis/analysis_steps.h"
#include "harness/analysis/advice.h"

#include <algorithm>
#include <utility>

namespace ib {

using namespace analysis_steps;

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
      a.verdict_reason = (reps.size() > 1 ? "over " + std::to_string(measured.size()) + " repetitions: " : std::string()) +
                         v.reason + escape_note(ts);  // a settled reason has its repetition's note already
    } else {
      a.verdict = Verdict::error;
      a.verdict_reason = "not measured" + escape_note(ts);
    }
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
