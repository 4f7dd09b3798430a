// `interference-bench selftest` (DESIGN.md section 4, "Self-test"): known answers that tell whether this
// machine can measure now. Two identical tenants time-sharing one resource (host: one CPU core; CUDA:
// two time-sliced GEMMs) must show a median slowdown near +100% (a time ratio of 1.7-2.3) and fail the
// cutoff; a tenant beside an idle neighbour must not fail. The CI of the idle case, where the true
// slowdown is 0, says how small a slowdown this machine resolves now.
#include "harness/core/files.h"
#include "harness/core/exit_codes.h"
#include "harness/core/text.h"
#include "harness/core/clock.h"
#include "harness/vet/platform.h"
#include "harness/scenario/scenario.h"
#include "reports/json_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

namespace ib {

using nlohmann::json;

namespace {

constexpr double kPairRatioLow = 1.7, kPairRatioHigh = 2.3;

struct KnownAnswer {
  std::string name;         // "shared_resource" or "idle_neighbour"
  std::string expected;     // in words
  bool ok = false;
  bool inconclusive = false;  // the run could not say (foreign load, too few samples, a failure)
  std::string evidence;
  json aggregate;           // the victim's aggregate from the run's results.json
};

double number_or_nan(const json& v) { return v.is_number() ? v.get<double>() : NAN; }


// The two scenarios. Host: compute tenants of about 13 ms samples (longer than the scheduler's slice,
// so sharing a core shows in every sample), pinned to the first CPU we may use; the idle neighbour
// sleeps. CUDA: two bf16 GEMMs time-sliced; the idle neighbour is an open-loop latency tenant at 1% load.
json shared_scenario(const std::string& backend, double warmup, double duration) {
  const int cpu = available_cpus().empty() ? 0 : available_cpus().front();
  json t = backend == "cuda" ? json{{"workload", "gemm"}}
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

json idle_scenario(const std::string& backend, double warmup, double duration) {
  json s = shared_scenario(backend, warmup, duration);
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

// Runs one scenario as a measuring step and returns the victim's aggregate (null when none).
json run_victim(const PlatformOptions& o, const json& scenario, const std::string& out, int& exit_code) {
  const std::string dir = out + "/" + scenario.at("name").get<std::string>();
  std::filesystem::create_directories(dir);
  const std::string file = dir + ".scenario.json";
  write_file_atomic(file, scenario.dump(2) + "\n");
  const double timeout = 3.0 * scenario.at("duration_s").get<double>() + 120.0;
  // Ten rounds of short blocks: a machine whose speed changes every second or so (a VM's CPU) then puts
  // exclusive and colocated blocks alike on each of its speeds.
  const ChildRun run = run_self(o, {"--backend", o.backend, "--device", std::to_string(o.device), "--scenario", file,
                                    "--telemetry-hz", o.backend == "cuda" ? "10" : "0", "--rounds", "10"},
                                dir, timeout);
  exit_code = run.exit_code;
  if (!run.results.is_object() || !run.results.contains("aggregates")) return nullptr;
  for (const auto& a : run.results["aggregates"])
    if (a.value("tenant", "") == "victim") return a;
  return nullptr;
}

KnownAnswer judge_shared(json agg) {
  KnownAnswer k;
  k.name = "shared_resource";
  k.expected = "two identical tenants time-sharing one resource: median time ratio " +
               std::to_string(kPairRatioLow).substr(0, 3) + "-" + std::to_string(kPairRatioHigh).substr(0, 3) +
               " and verdict fail";
  k.aggregate = agg;
  if (!agg.is_object() || agg["metrics"].is_null() || agg["metrics"]["median_slowdown"].is_null()) {
    k.inconclusive = true;
    k.evidence = "not measured: " + (agg.is_object() ? agg.value("verdict_reason", "") : std::string("no results"));
    return k;
  }
  const double ratio = 1.0 + agg["metrics"]["median_slowdown"].get<double>();
  const std::string verdict = agg.value("verdict", "");
  k.evidence = "median time ratio " + std::to_string(ratio).substr(0, 5) + ", p95_slowdown " +
               signed_percent(number_or_nan(agg["metrics"]["p95_slowdown"]["value"])) + ", verdict " + verdict + " (" +
               agg.value("verdict_reason", "") + ")";
  k.inconclusive = verdict == "inconclusive" || verdict == "error";
  k.ok = verdict == "fail" && ratio >= kPairRatioLow && ratio <= kPairRatioHigh;
  return k;
}

KnownAnswer judge_idle(json agg) {
  KnownAnswer k;
  k.name = "idle_neighbour";
  k.expected = "a tenant beside an idle neighbour: verdict not fail";
  k.aggregate = agg;
  if (!agg.is_object() || agg["metrics"].is_null()) {
    k.inconclusive = true;
    k.evidence = "not measured: " + (agg.is_object() ? agg.value("verdict_reason", "") : std::string("no results"));
    return k;
  }
  const std::string verdict = agg.value("verdict", "");
  k.evidence = "p95_slowdown " + signed_percent(number_or_nan(agg["metrics"]["p95_slowdown"]["value"])) + ", verdict " + verdict + " (" +
               agg.value("verdict_reason", "") + ")";
  k.inconclusive = verdict == "error";
  k.ok = verdict == "pass" || verdict == "inconclusive";
  return k;
}

// The smallest slowdown told apart from none: the largest magnitude the idle case's 95% CI reaches
// (its true slowdown is 0, so anything beyond that bound is resolved).
double resolvable_slowdown(const KnownAnswer& idle) {
  if (!idle.aggregate.is_object() || idle.aggregate["metrics"].is_null()) return NAN;
  const json& e = idle.aggregate["metrics"]["p95_slowdown"];
  if (e["ci_low"].is_null() || e["ci_high"].is_null()) return NAN;
  return std::max(std::fabs(e["ci_low"].get<double>()), std::fabs(e["ci_high"].get<double>()));
}

std::string report_markdown(const std::vector<KnownAnswer>& answers, double resolvable, int exit_code) {
  std::ostringstream os;
  os << "## interference-bench selftest\n\n| known answer | expected | result | evidence |\n|---|---|---|---|\n";
  for (const auto& k : answers)
    os << "| " << k.name << " | " << k.expected << " | **" << (k.ok ? "ok" : k.inconclusive ? "inconclusive" : "WRONG")
       << "** | " << k.evidence << " |\n";
  os << "\nSmallest P95 slowdown this machine resolves now: " << (std::isfinite(resolvable) ? signed_percent(resolvable) : "n/a")
     << " (the idle case's 95% CI bound; its true slowdown is 0).\n\nexit code " << exit_code << "\n";
  return os.str();
}

}  // namespace

int selftest_command(const PlatformOptions& o) {
  const std::string out = o.out.empty() ? "interference-bench-results/selftest-" + utc_now("%Y%m%d-%H%M%S") : o.out;
  std::filesystem::create_directories(out);
  // Two scenarios of three phases (two exclusive, one colocated) each, 15 s kept for start-up and analysis.
  const double warmup = 0.3;
  const double duration = std::clamp((o.selftest_budget_s - 15.0) / 6.0, 1.0, 300.0);
  int shared_rc = 0, idle_rc = 0;
  const KnownAnswer shared = judge_shared(run_victim(o, shared_scenario(o.backend, warmup, duration), out, shared_rc));
  const KnownAnswer idle = judge_idle(run_victim(o, idle_scenario(o.backend, warmup, duration), out, idle_rc));
  if (shared_rc == kExitInterrupted || idle_rc == kExitInterrupted) return kExitInterrupted;
  const std::vector<KnownAnswer> answers = {shared, idle};
  const bool wrong = std::any_of(answers.begin(), answers.end(), [](const KnownAnswer& k) { return !k.ok && !k.inconclusive; });
  const bool unsure = std::any_of(answers.begin(), answers.end(), [](const KnownAnswer& k) { return !k.ok && k.inconclusive; });
  const int rc = wrong ? kExitVerdictFailed : unsure ? kExitInconclusive : kExitPass;
  const double resolvable = resolvable_slowdown(idle);
  json doc = {{"tool", "interference-bench selftest"}, {"backend", o.backend}, {"budget_s", o.selftest_budget_s},
              {"duration_s", duration}, {"exit_code", rc}, {"known_answers", json::array()}};
  doc["resolvable_p95_slowdown"] = std::isfinite(resolvable) ? json(resolvable) : json(nullptr);
  for (const auto& k : answers)
    doc["known_answers"].push_back({{"name", k.name}, {"expected", k.expected}, {"ok", k.ok},
                                    {"inconclusive", k.inconclusive}, {"evidence", k.evidence}, {"aggregate", k.aggregate}});
  write_file_atomic(out + "/selftest.json", doc.dump(1) + "\n");
  const std::string md = report_markdown(answers, resolvable, rc);
  write_file_atomic(out + "/selftest.md", md);
  std::cout << md << "\nresults: " << out << "/selftest.json\n";
  return rc;
}

}  // namespace ib
