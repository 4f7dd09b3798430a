// The judgements of vet and sustain (harness/vet/platform.h) and the documents they write
// (reports/<format>/platform_<format>.h, reports/<format>/selftest_<format>.h), on hand-built inputs.
#include "harness/core/exit_codes.h"
#include "harness/core/numbers.h"
#include "harness/vet/platform.h"
#include "reports/json/platform_json.h"
#include "reports/markdown/platform_markdown.h"
#include "reports/json/selftest_json.h"
#include "reports/markdown/selftest_markdown.h"
#include "tests/unit/sample_results.h"
#include "tests/unit/test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace ib {
namespace {

using namespace ib::test;



// ---------------------------------------------------------------- stability

TEST(VetStability, WindowCvPassesTo1Point5PercentWarnsTo10PercentFailsAbove) {
  EXPECT_EQ(stability_outcome(0.0), CheckOutcome::pass);
  EXPECT_EQ(stability_outcome(0.015), CheckOutcome::pass);
  EXPECT_EQ(stability_outcome(0.0151), CheckOutcome::warn);
  EXPECT_EQ(stability_outcome(0.10), CheckOutcome::warn);
  EXPECT_EQ(stability_outcome(0.1001), CheckOutcome::fail);
  EXPECT_EQ(stability_outcome(0.15), CheckOutcome::fail);  // seed 003: power-locked shared cards are > 10%
  EXPECT_EQ(stability_outcome(kNaN), CheckOutcome::unknown);  // fewer than 2 windows
}

// ---------------------------------------------------------------- P95 against the baseline

// A tenant's exclusive phase with `n` values in each of 3 blocks, around `seconds`: value i of a block
// is seconds * (1 + i / (10 n)), so P95 is about seconds * 1.095 and the CI is narrow.
ExclusivePhase exclusive_phase(const std::string& name, double seconds, std::size_t n = 100) {
  ExclusivePhase e;
  e.name = name;
  e.workload = "host-compute";
  e.work = {1e6, "FLOP"};
  for (int b = 0; b < 3; ++b) {
    std::vector<double> block;
    for (std::size_t i = 0; i < n; ++i) block.push_back(seconds * (1.0 + static_cast<double>(i) / (10.0 * n)));
    e.judged_blocks.push_back(block);
  }
  return e;
}

TEST(VetP95, ThisPlatformTwiceAsSlowAsTheExclusiveCardFails) {
  const ExclusivePhase here = exclusive_phase("compute", 0.002), base = exclusive_phase("compute", 0.001);
  const CheckResult c = p95_against_baseline(here, &base, 0.40, "base.json");
  EXPECT_EQ(c.id, "p95_vs_exclusive:compute");
  EXPECT_EQ(c.status, CheckOutcome::fail) << c.evidence;
  // P95(here) / P95(exclusive) - 1 = 2 - 1: here is the slower side, so the slowdown is +100%, not -50%.
  EXPECT_TRUE(contains(c.evidence, "p95_slowdown of sample time 100% [95% CI")) << c.evidence;
  EXPECT_TRUE(contains(c.evidence, "from 300 values here and 300 in base.json")) << c.evidence;
}

TEST(VetP95, ThisPlatformFasterThanTheExclusiveCardPasses) {
  const ExclusivePhase here = exclusive_phase("compute", 0.001), base = exclusive_phase("compute", 0.002);
  const CheckResult c = p95_against_baseline(here, &base, 0.40, "base.json");
  EXPECT_EQ(c.status, CheckOutcome::pass) << c.evidence;
  EXPECT_TRUE(contains(c.evidence, "p95_slowdown of sample time -50")) << c.evidence;
}

TEST(VetP95, TooFewValuesOrNoBaselineOrBasesThatDifferAreUnknown) {
  const ExclusivePhase here = exclusive_phase("compute", 0.002, 10), base = exclusive_phase("compute", 0.001, 10);
  EXPECT_EQ(p95_against_baseline(here, &base, 0.40, "b").status, CheckOutcome::unknown);  // 30 < 72 values
  const CheckResult none = p95_against_baseline(here, nullptr, 0.40, "b.json");
  EXPECT_EQ(none.status, CheckOutcome::unknown);
  EXPECT_EQ(none.evidence, "no compute in the baseline b.json");
  ExclusivePhase latency = exclusive_phase("compute", 0.002);
  latency.phase.latencies_s = {0.001};
  const ExclusivePhase full_base = exclusive_phase("compute", 0.001);
  EXPECT_EQ(p95_against_baseline(latency, &full_base, 0.40, "b").status, CheckOutcome::unknown);
}

// ---------------------------------------------------------------- verdicts and exit codes

TEST(VetVerdict, FailOverWarnOverPass) {
  std::vector<CheckResult> checks(3);
  checks[0].status = CheckOutcome::pass;
  checks[1].status = CheckOutcome::unknown;
  checks[2].status = CheckOutcome::pass;
  EXPECT_EQ(vet_verdict(checks), CheckOutcome::pass);  // unknown is not a warning
  checks[1].status = CheckOutcome::warn;
  EXPECT_EQ(vet_verdict(checks), CheckOutcome::warn);
  checks[2].status = CheckOutcome::fail;
  EXPECT_EQ(vet_verdict(checks), CheckOutcome::fail);
}

TEST(SustainExitCode, AnInconclusiveVerdictIsNotAPass) {
  EXPECT_EQ(sustain_exit_code(LoadVerdict::pass, kExitPass), kExitPass);
  EXPECT_EQ(sustain_exit_code(LoadVerdict::warn, kExitPass), kExitPass);
  EXPECT_EQ(sustain_exit_code(LoadVerdict::fail, kExitPass), kExitVerdictFailed);
  EXPECT_EQ(sustain_exit_code(LoadVerdict::inconclusive, kExitPass), kExitVerdictFailed);
  EXPECT_EQ(sustain_exit_code(LoadVerdict::inconclusive, kExitInconclusive), kExitVerdictFailed);
  // The run's own failure or interruption comes first.
  EXPECT_EQ(sustain_exit_code(LoadVerdict::pass, kExitWorkloadFailed), kExitWorkloadFailed);
  EXPECT_EQ(sustain_exit_code(LoadVerdict::fail, kExitInterrupted), kExitInterrupted);
}

// ---------------------------------------------------------------- exclusive phases of a results file

TEST(ExclusivePhases, OnlyMeasuredPhasesWithRawSamples) {
  ResultsDocument doc;
  doc.results = test::sample_results();
  doc.results.runs[0].tenants[1].exclusive.outcome.status = WorkerStatus::crashed;
  const auto phases = exclusive_phases(doc);
  ASSERT_EQ(phases.size(), 1u);
  EXPECT_EQ(phases[0].name, "alpha");
  EXPECT_EQ(phases[0].judged_count(), 3u);  // every sample counts (no counted flags: in_window says it)
  doc.raw_samples = false;
  EXPECT_TRUE(exclusive_phases(doc).empty());
}

// ---------------------------------------------------------------- the documents

TEST(PlatformWriter, VetJsonKeysAndMarkdown) {
  VetReport r;
  r.device = 2;
  r.backend = "host";
  r.budget_s = 30;
  r.steps = {2.4, 2.5, 10.0};
  r.verdict = CheckOutcome::warn;
  r.checks = {{"stability:compute", "Throughput stability (host-compute)", CheckOutcome::warn, "window CV 2%", "t", "s"}};
  r.cost = CostReport{"FLOP", "host-compute", {1e9, 4, 1e-12}, {5e8, 1, kNaN}, true, CostRecommendation::shared, "cheaper"};
  const auto j = vet_to_json(r);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"schema_version", "kind", "start_time", "host", "device", "backend", "budget_s", "steps",
                                            "baseline", "verdict", "checks", "cost", "stability_results",
                                            "sustain_results", "interrupted"}));
  EXPECT_EQ(j["interrupted"], false);
  EXPECT_EQ(j["verdict"], "warn");
  EXPECT_EQ(j["checks"][0]["status"], "warn");
  EXPECT_EQ(j["cost"]["recommendation"], "shared");
  EXPECT_TRUE(j["cost"]["shared"]["cost_per_unit"].is_null());
  EXPECT_EQ(vet_markdown(r), "## interference-bench vet — GPU 2\n\n| check | status | evidence | threshold | source |\n"
                             "|---|---|---|---|---|\n| Throughput stability (host-compute) | **warn** | window CV 2% | t | s |\n"
                             "\n**warn**\n");
  r.interrupted = true;
  EXPECT_EQ(vet_to_json(r)["interrupted"], true);
  EXPECT_NE(vet_markdown(r).find("**warn** (interrupted: only the steps above ran) — exit code 130"), std::string::npos);
  r.cost.reset();
  EXPECT_TRUE(vet_to_json(r)["cost"].is_null());
}

TEST(PlatformWriter, SustainJsonOfAMeasuredAndOfAnEmptyRun) {
  SustainReport r;
  r.duration_s = 3;
  r.verdict = LoadVerdict::fail;
  r.evidence = {"median SM clock 1300 MHz"};
  r.run_results = "sus/run/results.json";
  EXPECT_EQ(sustain_to_json(r).dump(),
            R"({"verdict":"fail","evidence":["median SM clock 1300 MHz"],"host":"","run":"sus/run/results.json"})");
  r.measured = true;
  r.workload = "host-compute";
  r.throughput_unit = "FLOP/s";
  TelemetryWindow w;
  w.readings = 10;
  w.median_sm_clock_mhz = 1300;
  w.reasons = 0x40;
  r.windows = {{0.0, 5e8, w}, {1.0, 4e8, TelemetryWindow{}}};
  r.telemetry_readings = 20;
  const auto j = sustain_to_json(r);
  EXPECT_EQ(j["window_throughputs"], nlohmann::ordered_json::array({5e8, 4e8}));
  EXPECT_EQ(j["windows"][0]["reasons"], "HwThermalSlowdown");
  EXPECT_TRUE(j["windows"][1]["reasons"].is_null());
  EXPECT_EQ(j["windows"][1]["t_s"], 1.0);
  EXPECT_EQ(j["thresholds"]["fail_reasons"], 0xE8);
  EXPECT_EQ(j.back(), "sus/run/results.json");  // "run" last
  EXPECT_EQ(sustain_markdown(r), "## interference-bench sustain — 3 s\n\n**fail**\n\n- median SM clock 1300 MHz\n");
}

TEST(PlatformWriter, SelftestJsonAndMarkdown) {
  SelftestReport r;
  r.backend = "host";
  r.budget_s = 30;
  r.duration_s = 2.5;
  r.exit_code = 1;
  KnownAnswer wrong{"shared_resource", "fail", KnownAnswerStatus::wrong, "ratio 1.1", test::sample_results().aggregates[0], 0.15};
  KnownAnswer unsure{"idle_neighbour", "not fail", KnownAnswerStatus::inconclusive, "not measured: no results", {}};
  r.known_answers = {wrong, unsure};
  const auto j = selftest_to_json(r);
  EXPECT_EQ(j["known_answers"][0]["ok"], false);
  EXPECT_EQ(j["known_answers"][0]["inconclusive"], false);
  EXPECT_EQ(j["known_answers"][0]["aggregate"]["tenant"], "alpha");
  EXPECT_EQ(j["known_answers"][1]["inconclusive"], true);
  EXPECT_TRUE(j["known_answers"][1]["aggregate"].is_null());
  EXPECT_TRUE(j["resolvable_p95_slowdown"].is_null());
  const std::string md = selftest_markdown(r);
  // Each known answer's resolution and how far its run got.
  EXPECT_TRUE(contains(md, "| shared_resource | fail | **WRONG** | 15.0 points | decided after 12 rounds, 31 s | ratio 1.1 |\n"))
      << md;
  EXPECT_TRUE(contains(md, "| idle_neighbour | not fail | **inconclusive** | n/a | n/a | not measured: no results |\n")) << md;
  EXPECT_EQ(j["known_answers"][0]["resolution"], 0.15);
  EXPECT_EQ(j["known_answers"][0]["stopped"]["rounds"], 12);
  EXPECT_TRUE(contains(md, "resolves now: n/a (the idle case's")) << md;
  r.resolvable_p95_slowdown = 0.052;
  EXPECT_TRUE(contains(selftest_markdown(r), "resolves now: +5.2% (")) << selftest_markdown(r);
}

}  // namespace
}  // namespace ib

// The CUDA self-test's known answer (two time-sliced GEMMs: a time ratio near 2) needs samples of many
// GPU time slices: one 8192^3 product (~1.6 ms on an H200) is about one slice, and its median ratio
// lands near 1 + slice/g. Sixteen products per sample bring the quantisation under 0.1 of the ratio.
TEST(Selftest, TheCudaPairsSamplesSpanManyTimeSlices) {
  const nlohmann::json s = ib::selftest_shared_scenario("cuda", 1.0, 5.0);
  ASSERT_EQ(s.at("tenants").size(), 2u);
  for (const auto& t : s.at("tenants")) {
    EXPECT_EQ(t.at("workload"), "gemm");
    EXPECT_GE(t.at("params").at("reps").get<int>(), 16) << t.dump();
    EXPECT_FALSE(t.at("params").contains("m")) << "the default 8192^3 product";
  }
  EXPECT_EQ(s.at("mode"), "timeslice");
  EXPECT_EQ(ib::selftest_shared_scenario("host", 1.0, 5.0).at("tenants")[0].at("workload"), "host-compute");
}
