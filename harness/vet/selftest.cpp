// `interference-bench selftest` (docs/design.md section 4, "Self-test"): known answers that tell whether this
// machine can measure now. Two identical tenants time-sharing one resource (host: one CPU core; CUDA:
// two time-sliced GEMMs) must show a median slowdown near +100% (a time ratio of 1.7-2.3) and fail the
// cutoff; a tenant beside an idle neighbour must not fail. The CI of the idle case, where the true
// slowdown is 0, says how small a slowdown this machine resolves now.
#include "harness/core/clock.h"
#include "harness/core/exit_codes.h"
#include "harness/core/files.h"
#include "harness/core/output_dir.h"
#include "harness/core/text.h"
#include "harness/scenario/scenario.h"
#include "harness/vet/platform.h"
#include "reports/json/selftest_json.h"
#include "reports/markdown/selftest_markdown.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

namespace ib {

using nlohmann::json;

namespace {

constexpr double kPairRatioLow = 1.7, kPairRatioHigh = 2.3;
// Each known answer's run: its first look after a third of its share of the budget, its last at all of it.
constexpr double kSelftestBudgetFactor = 3.0;

}  // namespace

// The two scenarios. Host: compute tenants of about 13 ms samples (longer than the scheduler's slice,
// so sharing a core shows in every sample), pinned to the first CPU we may use; the idle neighbour
// sleeps. CUDA: two bf16 GEMMs time-sliced, each sample 16 products of 8192^3 (about 25 ms on an H200,
// many GPU time slices: with one product, about one slice, a sample takes g or g + slice and the median
// ratio lands near 1 + slice/g instead of 2); the idle neighbour is an open-loop latency tenant at 1% load.
json selftest_shared_scenario(const std::string& backend, double warmup, double duration) {
  const int cpu = available_cpus().empty() ? 0 : available_cpus().front();
  json t = backend == "cuda" ? json{{"workload", "gemm"}, {"params", {{"reps", kSelftestGemmReps}}}}
                             : json{{"workload", "host-compute"}, {"params", {{"n", 128}, {"reps", 8}}},
                                    {"placement", {{"cpus", {cpu}}}}};
  json a = t, b = t;
  a["name"] = "victim";
  a["role"] = "victim";
  b["name"] = "twin";
  b["role"] = "aggressor";
  return {{"name", "selftest-shared"}, {"mode", "timeslice"}, {"warmup_s", warmup}, {"duration_s", duration},
          {"tenants", {a, b}}};
}

namespace {

json idle_scenario(const std::string& backend, double warmup, double duration) {
  json s = selftest_shared_scenario(backend, warmup, duration);
  s["name"] = "selftest-idle";
  json& idle = s["tenants"][1];
  idle["name"] = "idle";
  if (backend == "cuda") {
    idle["workload"] = "latency";
    idle["params"] = {{"mode", "open"}, {"load", 0.01}};
  } else {
    idle["workload"] = "host-idle";
    idle["params"] = json::object();
  }
  return s;
}

// Runs one scenario as a measuring step and returns the victim's aggregate (empty when none).
std::optional<TenantAggregate> run_victim(const PlatformOptions& o, const json& scenario, const std::string& out,
                                          int& exit_code) {
  const std::string dir = out + "/" + scenario.at("name").get<std::string>();
  std::filesystem::create_directories(dir);
  const std::string file = dir + ".scenario.json";
  write_file_atomic(file, scenario.dump(2) + "\n");
  const double first = scenario.at("duration_s").get<double>(), most = kSelftestBudgetFactor * first;
  const double timeout = 3.0 * most + 120.0;
  // Ten rounds of short blocks (a machine whose speed changes every second or so, a VM's CPU, then puts
  // exclusive and colocated blocks alike on each of its speeds), then pairs of rounds until decided,
  // within the step's share of the budget: a clear answer is known at the first look.
  const ChildRun run = run_self(o, {"--backend", o.backend, "--device", std::to_string(o.device), "--scenario", file,
                                    "--telemetry-hz", o.backend == "cuda" ? "10" : "0", "--rounds", "10", "--until",
                                    "decided", "--max-duration", std::to_string(most)},
                                dir, timeout);
  exit_code = run.exit_code;
  if (!run.results) return std::nullopt;
  for (const auto& a : run.results->results.aggregates)
    if (a.tenant == "victim") return a;
  return std::nullopt;
}

// "not measured: <why>" when the victim has no metrics.
std::string not_measured(const std::optional<TenantAggregate>& agg) {
  return "not measured: " + (agg ? agg->verdict_reason : std::string("no results"));
}

std::string verdict_evidence(const TenantAggregate& agg) {
  return "p95_slowdown " + signed_percent(agg.metrics->p95_slowdown.value) + ", verdict " + verdict_name(agg.verdict) +
         " (" + agg.verdict_reason + ")";
}

KnownAnswer judge_shared(const std::optional<TenantAggregate>& agg) {
  KnownAnswer k;
  k.name = "shared_resource";
  k.expected = "two identical tenants time-sharing one resource: median time ratio " +
               std::to_string(kPairRatioLow).substr(0, 3) + "-" + std::to_string(kPairRatioHigh).substr(0, 3) +
               " and verdict fail";
  k.aggregate = agg;
  if (agg && agg->decision) k.resolution = agg->decision->resolution;
  if (!agg || !agg->metrics || !std::isfinite(agg->metrics->median_slowdown)) {
    k.status = KnownAnswerStatus::inconclusive;
    k.evidence = not_measured(agg);
    return k;
  }
  const double ratio = 1.0 + agg->metrics->median_slowdown;
  k.evidence = "median time ratio " + std::to_string(ratio).substr(0, 5) + ", " + verdict_evidence(*agg);
  if (agg->verdict == Verdict::fail && ratio >= kPairRatioLow && ratio <= kPairRatioHigh) k.status = KnownAnswerStatus::ok;
  else if (agg->verdict == Verdict::inconclusive || agg->verdict == Verdict::error) k.status = KnownAnswerStatus::inconclusive;
  else k.status = KnownAnswerStatus::wrong;
  return k;
}

KnownAnswer judge_idle(const std::optional<TenantAggregate>& agg) {
  KnownAnswer k;
  k.name = "idle_neighbour";
  k.expected = "a tenant beside an idle neighbour: verdict not fail";
  k.aggregate = agg;
  if (agg && agg->decision) k.resolution = agg->decision->resolution;
  if (!agg || !agg->metrics) {
    k.status = KnownAnswerStatus::inconclusive;
    k.evidence = not_measured(agg);
    return k;
  }
  k.evidence = verdict_evidence(*agg);
  if (agg->verdict == Verdict::pass || agg->verdict == Verdict::inconclusive) k.status = KnownAnswerStatus::ok;
  else if (agg->verdict == Verdict::error) k.status = KnownAnswerStatus::inconclusive;
  else k.status = KnownAnswerStatus::wrong;
  return k;
}

// The smallest slowdown told apart from none: the largest magnitude the idle case's interval reaches
// (its true slowdown is 0, so anything beyond that bound is resolved).
std::optional<double> resolvable_slowdown(const KnownAnswer& idle) {
  if (!idle.aggregate || !idle.aggregate->metrics) return std::nullopt;
  const Estimate& e = idle.aggregate->metrics->p95_slowdown;
  if (!std::isfinite(e.ci_low) || !std::isfinite(e.ci_high)) return std::nullopt;
  return std::max(std::fabs(e.ci_low), std::fabs(e.ci_high));
}

// 1 when a known answer came out wrong, else 5 when one could not be told, else 0.
int selftest_exit_code(const std::vector<KnownAnswer>& answers) {
  const auto any = [&](KnownAnswerStatus s) {
    return std::any_of(answers.begin(), answers.end(), [s](const KnownAnswer& k) { return k.status == s; });
  };
  return any(KnownAnswerStatus::wrong) ? kExitVerdictFailed : any(KnownAnswerStatus::inconclusive) ? kExitInconclusive
                                                                                                  : kExitPass;
}

}  // namespace

int selftest_command(const PlatformOptions& o) {
  const OutputDir folder("--out", o.out.empty() ? OutputDir::unique_default("interference-bench-results/selftest-") : o.out,
                         {"selftest.json", "selftest.md"}, o.force);
  const std::string& out = folder.path();
  // Two scenarios of three phases (two exclusive, one colocated) each, 15 s kept for start-up and analysis;
  // `duration` is the first look's share, a third of each phase's most.
  const double warmup = 0.3;
  const double duration = std::clamp((o.selftest_budget_s - 15.0) / 6.0 / kSelftestBudgetFactor, 1.0, 300.0);
  int shared_rc = 0, idle_rc = 0;
  const auto stopped = [&o] { return o.stop && o.stop(); };
  const KnownAnswer shared = judge_shared(run_victim(o, selftest_shared_scenario(o.backend, warmup, duration), out, shared_rc));
  if (shared_rc == kExitInterrupted || stopped()) return kExitInterrupted;  // what finished is in its folder
  const KnownAnswer idle = judge_idle(run_victim(o, idle_scenario(o.backend, warmup, duration), out, idle_rc));
  if (idle_rc == kExitInterrupted || stopped()) return kExitInterrupted;
  SelftestReport report;
  report.backend = o.backend;
  report.budget_s = o.selftest_budget_s;
  report.duration_s = duration;
  report.known_answers = {shared, idle};
  report.exit_code = selftest_exit_code(report.known_answers);
  report.resolvable_p95_slowdown = resolvable_slowdown(idle);
  write_file_atomic(out + "/selftest.json", selftest_to_json(report).dump(1) + "\n");
  const std::string md = selftest_markdown(report);
  write_file_atomic(out + "/selftest.md", md);
  std::cout << md << "\nresults: " << out << "/selftest.json\n";
  return report.exit_code;
}

}  // namespace ib
