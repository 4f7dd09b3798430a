// matrix's nightly side (issue 50): matrix.json read back (harness/results/matrix_reader.h), two matrices compared
// (harness/analysis/matrix_compare.h) and a matrix's cells in the history (harness/history/history.h, record_matrix).
#include "harness/analysis/matrix_compare.h"
#include "harness/core/exit_codes.h"
#include "harness/history/history.h"
#include "harness/results/matrix_reader.h"
#include "reports/json/matrix_comparison_json.h"
#include "reports/json/matrix_json.h"
#include "reports/markdown/history_text.h"
#include "reports/markdown/matrix_comparison_markdown.h"
#include "tests/unit/sample_results.h"
#include "tests/unit/test_support.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

namespace ib {
namespace {

using namespace ib::test;

MatrixCell cell(std::size_t v, std::size_t a, Verdict verdict, double value, double low, double high) {
  MatrixCell c;
  c.victim = v;
  c.aggressor = a;
  c.p95_slowdown = Estimate{value, low, high};
  c.median_slowdown = value / 2.0;
  c.verdict = verdict;
  c.verdict_reason = std::string(verdict_name(verdict)) + " against the cutoff";
  return c;
}

// Three workloads: compute and copy cannot share (compute fails beside copy), idle shares with both; the
// packing puts idle with compute and copy alone.
MatrixResult three_workloads() {
  MatrixResult r;
  r.argv = {"interference-bench", "matrix", "--workloads", "host-compute,host-copy,host-idle"};
  r.version = "0.9";
  r.git_sha = "abc123";
  r.start_time = "2026-12-01T01:00:00Z";
  r.host = "node7";
  r.backend = "host";
  r.mode = "timeslice";
  r.phase_s = 2.0;
  r.rounds = 4;
  r.budget_s = 86400.0;
  for (const char* name : {"host-compute", "host-copy", "host-idle"})
    r.workloads.push_back({name, name, {{"workload", name}, {"params", {{"n", 64}}}, {"placement", {{"cpus", {0}}}}}});
  for (std::size_t a = 0; a < 3; ++a)
    for (std::size_t b = a; b < 3; ++b) {
      MatrixPair p{a, b, {}};
      p.run = {MatrixRunOutcome::measured, "", 0, "pairs/" + std::to_string(a) + "-" + std::to_string(b) + "/results.json", 9.5};
      r.pairs.push_back(p);
    }
  const Verdict P = Verdict::pass, F = Verdict::fail;
  r.cells = {cell(0, 0, F, 1.00, 0.90, 1.10), cell(0, 1, F, 0.80, 0.70, 0.90), cell(0, 2, P, 0.02, 0.00, 0.04),
             cell(1, 0, P, 0.10, 0.05, 0.15), cell(1, 1, F, 0.90, 0.80, 1.00), cell(1, 2, P, 0.01, -0.01, 0.03),
             cell(2, 0, P, 0.03, 0.01, 0.05), cell(2, 1, P, 0.04, 0.02, 0.06), cell(2, 2, P, 0.00, -0.02, 0.02)};
  r.may_share = {{0, 2}, {1, 2}};
  r.self_sharing = {2};
  MatrixPacking pack;
  pack.devices = {{0, 2}, {1}};
  pack.exclusive_devices = 3;
  pack.saved = 1;
  r.packing = pack;
  return r;
}

std::string written(const MatrixResult& r) { return matrix_to_json(r).dump(2); }

// ---- the reader ----

TEST(MatrixReader, ReadsBackWhatTheWriterWroteByteForByte) {
  MatrixResult r = three_workloads();
  r.price_exclusive = 4.0;
  r.price_shared = 2.5;
  r.packing->costs = {{0, 4.0, 2.55, true}, {2, 4.0, 2.575, true}};
  r.packing->exclusive_price_per_hour = 12.0;
  r.packing->packed_price_per_hour = 9.0;
  r.cells[4].p95_slowdown.reset();  // a cell of a pair that was not measured
  r.cells[4].median_slowdown.reset();
  r.cells[4].verdict = Verdict::error;
  r.cells[5].source = CellSource::predicted;
  r.pairs[1].run = {MatrixRunOutcome::cannot_run, "exit 3: no device", 3, "", 0.5};
  // --predict's part in full: a ladder, the reporter's curve, each workload's curve and pressure, a sampled
  // pair with its run, its checks and the error (every field the writer writes must come back).
  MatrixPrediction pred;
  pred.runs = 4;
  pred.full_matrix_runs = 6;
  pred.levels = {0.3, 0.6, 1.0};
  pred.bubble_workload = "host-bubble";
  pred.bubble_params = {{"period_ms", 10}};
  pred.reporter = "host-compute:n=128:reps=8";
  pred.reporter_tenant = {{"workload", "host-compute"}, {"params", {{"n", 128}, {"reps", 8}}}};
  pred.reporter_curve.slowdowns = {0.2, std::nullopt, 0.9};
  pred.reporter_curve.runs = {{MatrixRunOutcome::measured, "", 0, "a/results.json", 2.0}};
  PredictedWorkload w;
  w.curve.slowdowns = {0.1, 0.3, 0.5};
  w.reporter_slowdown = 0.4;
  w.pressure = 0.55;
  w.pressure_clamped = true;
  w.pressure_run = {{MatrixRunOutcome::measured, "", 0, "p/results.json", 1.5}};
  pred.workloads = {w, PredictedWorkload{}, PredictedWorkload{}};
  pred.workloads[1].reason = "no curve";
  pred.sampled_pairs = {{0, 2}};
  pred.sample_runs = {{MatrixRunOutcome::measured, "", 5, "s/results.json", 3.0}};
  pred.checks = {{0, 2, 0.5, 0.3, 20.0}, {2, 0, 0.1, 0.2, -10.0}};
  pred.error = PredictionError{2, 15.0, 0.0, 78.5, 0.95, 5.0, 20.0};
  r.prediction = pred;
  r.rounds.reset();
  r.interrupted = true;
  r.exit_code = kExitInterrupted;
  const std::string text = written(r);
  const MatrixResult back = matrix_from_json(nlohmann::ordered_json::parse(text), "m.json");
  EXPECT_EQ(written(back), text);
  EXPECT_EQ(back.cell(1, 0).verdict, Verdict::pass);
  EXPECT_EQ(back.workloads[2].tenant["placement"]["cpus"][0], 0);
}

TEST(MatrixReader, RefusesAnotherDocumentNamingTheFileAndField) {
  auto doc = matrix_to_json(three_workloads());
  doc["meta"]["command"] = "mig-sweep";
  try {
    matrix_from_json(doc, "other.json");
    FAIL() << "read a mig-sweep.json as a matrix";
  } catch (const ResultsFileError& e) {
    EXPECT_EQ(std::string(e.what()), "other.json: meta.command: \"mig-sweep\" is not matrix; not a matrix.json of this version (schema 1.0)");
  }
  doc = matrix_to_json(three_workloads());
  doc["cells"][4]["aggressor"] = 3;  // no fourth workload: reading it would index past the workloads
  try {
    matrix_from_json(doc, "m.json");
    FAIL() << "read a cell naming a workload that is not there";
  } catch (const ResultsFileError& e) {
    EXPECT_EQ(e.field(), "cells[4].aggressor");
  }
  doc = matrix_to_json(three_workloads());
  doc["schema_version"] = "2.0";
  EXPECT_THROW(matrix_from_json(doc, "m.json"), ResultsFileError);
}

TEST(MatrixReader, TellsAMatrixFromAResultsFileByMetaCommand) {
  TempDir dir;
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.path + "/" + name) << text;
    return dir.path + "/" + name;
  };
  const std::string matrix = write("matrix.json", written(three_workloads()));
  EXPECT_TRUE(is_matrix_file(matrix));
  EXPECT_EQ(written(read_matrix_file(matrix)), written(three_workloads()));
  EXPECT_FALSE(is_matrix_file(write("results.json", R"({"schema_version":"2.3","meta":{"tool":"interference-bench","command":"run"},"runs":[]})")));
  EXPECT_FALSE(is_matrix_file(write("nested.json", R"({"meta":{"x":{"command":"matrix"}},"command":"matrix"})")));
  EXPECT_FALSE(is_matrix_file(write("garbage.json", "{\"meta\": {\"command\": ")));
  EXPECT_FALSE(is_matrix_file(dir.path + "/none.json"));
  try {
    read_matrix_file(write("broken.json", "{"));
    FAIL() << "read a broken file";
  } catch (const ResultsFileError& e) {
    EXPECT_TRUE(starts_with(e.what(), dir.path + "/broken.json: not an interference-bench matrix.json")) << e.what();
  }
}

// ---- the comparison ----

TEST(MatrixCompare, TheDifferenceOfTwoIntervalsByMoverOnHandValues) {
  const Estimate d = interval_difference(Estimate{0.10, 0.05, 0.20}, Estimate{0.30, 0.26, 0.40});
  EXPECT_NEAR(d.value, 0.20, kTol);
  EXPECT_NEAR(d.ci_low, 0.20 - std::hypot(0.04, 0.10), kTol);   // NEW's lower distance, BASE's upper one
  EXPECT_NEAR(d.ci_high, 0.20 + std::hypot(0.10, 0.05), kTol);  // NEW's upper distance, BASE's lower one
  EXPECT_TRUE(std::isnan(interval_difference(Estimate{0.1, kNaN, kNaN}, Estimate{0.3, 0.2, 0.4}).ci_low));
}

TEST(MatrixCompare, AnUnchangedMatrixIsSameEverywhereAndExitsZero) {
  const MatrixResult m = three_workloads();
  const MatrixComparison c = compare_matrices(m, m, 0.05);
  ASSERT_EQ(c.cells.size(), 9u);
  // Each interval's half-width is at most 0.1, so the difference's is at most 0.1 * sqrt(2): within 0.15 of none.
  const MatrixComparison wide = compare_matrices(m, m, 0.15);
  EXPECT_EQ(wide.same, 9);
  EXPECT_EQ(wide.exit_code, kExitPass);
  EXPECT_TRUE(wide.stopped_sharing.empty() && wide.started_sharing.empty());
  EXPECT_EQ(*wide.base_devices, 2u);
  // With 5 points the widest cells' difference reaches beyond the bound but not wholly: inconclusive, exit 5.
  EXPECT_GT(c.inconclusive, 0);
  EXPECT_EQ(c.worse, 0);
  EXPECT_EQ(c.exit_code, kExitInconclusive);
}

TEST(MatrixCompare, AWorseCellAndAPairThatStoppedSharingAreExitOne) {
  const MatrixResult base = three_workloads();
  MatrixResult next = base;
  next.cell(2, 1) = cell(2, 1, Verdict::fail, 0.60, 0.50, 0.70);  // idle beside copy: +56 points, now fails
  next.may_share = {{0, 2}};
  next.packing->devices = {{0, 2}, {1}};
  const MatrixComparison c = compare_matrices(base, next, 0.05);
  const auto& worse = c.cells[2 * 3 + 1];
  EXPECT_EQ(worse.victim, "host-idle");
  EXPECT_EQ(worse.aggressor, "host-copy");
  EXPECT_EQ(worse.verdict, ChangeClass::worse);
  EXPECT_NEAR(worse.change.value, 0.56, kTol);
  EXPECT_NEAR(worse.change.ci_low, 0.56 - std::hypot(0.10, 0.02), kTol);
  EXPECT_EQ(c.worse, 1);
  ASSERT_EQ(c.stopped_sharing.size(), 1u);
  EXPECT_EQ(c.stopped_sharing[0].a, "host-copy");
  EXPECT_EQ(c.stopped_sharing[0].b, "host-idle");
  EXPECT_TRUE(c.stopped_sharing[0].decided);
  EXPECT_TRUE(contains(c.stopped_sharing[0].reason, "host-idle beside host-copy: fail (+60.0%)")) << c.stopped_sharing[0].reason;
  EXPECT_EQ(c.exit_code, kExitVerdictFailed);
  const std::string md = matrix_comparison_markdown(c);
  EXPECT_TRUE(contains(md, "- stopped sharing: host-copy + host-idle — NEW: ")) << md;
  const auto j = matrix_comparison_to_json(c);
  EXPECT_EQ(j["summary"]["exit_code"], 1);
  EXPECT_EQ(j["cells"][7]["verdict"], "worse");
  EXPECT_EQ(j["stopped_sharing"][0]["decided"], true);
}

TEST(MatrixCompare, APairThatStoppedSharingOnAnUndecidedCellIsInconclusiveNotWorse) {
  const MatrixResult base = three_workloads();
  MatrixResult next = base;
  next.cell(0, 2) = cell(0, 2, Verdict::inconclusive, 0.30, 0.00, 0.60);  // compute beside idle: now undecided
  next.may_share = {{1, 2}};
  const MatrixComparison c = compare_matrices(base, next, 0.80);  // no cell moved beyond 80 points
  EXPECT_EQ(c.worse, 0);
  ASSERT_EQ(c.stopped_sharing.size(), 1u);
  EXPECT_FALSE(c.stopped_sharing[0].decided);
  EXPECT_EQ(c.exit_code, kExitInconclusive);
  // The other way round, the pair started sharing: good news, not a failure.
  const MatrixComparison back = compare_matrices(next, base, 0.80);
  ASSERT_EQ(back.started_sharing.size(), 1u);
  EXPECT_TRUE(back.stopped_sharing.empty());
  EXPECT_EQ(back.exit_code, kExitPass);
}

TEST(MatrixCompare, CellsMatchByNameAndUnmeasuredOrPredictedCellsAreInconclusive) {
  const MatrixResult base = three_workloads();
  MatrixResult next;
  next = base;
  std::swap(next.workloads[0], next.workloads[1]);  // NEW lists copy first: its cells move with it
  for (MatrixCell& c : next.cells) {
    const auto swap_index = [](std::size_t i) { return i == 0 ? 1 : i == 1 ? 0 : i; };
    c = base.cell(swap_index(c.victim), swap_index(c.aggressor));
    c.victim = swap_index(c.victim);
    c.aggressor = swap_index(c.aggressor);
  }
  next.may_share = {{1, 2}, {0, 2}};
  next.cell(2, 2).p95_slowdown.reset();
  next.cell(2, 2).verdict = Verdict::error;
  next.cell(2, 2).verdict_reason = "run failed";
  next.self_sharing = {};
  next.cell(0, 0).source = CellSource::predicted;  // copy beside copy
  const MatrixComparison c = compare_matrices(base, next, 0.15);
  EXPECT_EQ(c.cells[0].verdict, ChangeClass::same);  // compute beside compute, found at NEW's (1, 1)
  EXPECT_EQ(c.cells[4].verdict, ChangeClass::inconclusive);
  EXPECT_TRUE(contains(c.cells[4].reason, "predicted in NEW")) << c.cells[4].reason;
  EXPECT_TRUE(contains(c.cells[8].reason, "not measured in NEW (run failed)")) << c.cells[8].reason;
  ASSERT_EQ(c.stopped_sharing.size(), 1u);  // idle beside a copy of itself
  EXPECT_EQ(c.stopped_sharing[0].a, "host-idle");
  EXPECT_FALSE(c.stopped_sharing[0].decided);
  EXPECT_EQ(c.exit_code, kExitInconclusive);

  MatrixResult other = base;
  other.workloads[1].name = "host-copy:mib=16";
  const MatrixComparison renamed = compare_matrices(base, other, 0.15);
  EXPECT_EQ(renamed.cells.size(), 4u);  // compute and idle, both ways and the diagonals
  EXPECT_EQ(renamed.only_in_base, std::vector<std::string>{"host-copy"});
  EXPECT_EQ(renamed.only_in_next, std::vector<std::string>{"host-copy:mib=16"});
  other = base;
  other.mode = "mps";
  EXPECT_TRUE(compare_matrices(base, other, 0.15).cells.empty());
  EXPECT_EQ(compare_matrices(base, other, 0.15).exit_code, kExitInconclusive);
}

// ---- the history ----

struct HistoryDir : TempDir {
  std::string db() const { return path + "/history.db"; }
  ~HistoryDir() {
    for (const char* suffix : {"-wal", "-shm"}) ::unlink((db() + suffix).c_str());
  }
};

TEST(MatrixHistory, EveryCellIsATenantRowUnderScenarioMatrixWithThePacking) {
  if (!history_available()) GTEST_SKIP() << "built without SQLiteCpp";
  HistoryDir dir;
  MatrixResult m = three_workloads();
  m.cell(1, 1).p95_slowdown.reset();
  m.cell(1, 1).verdict = Verdict::error;
  m.cell(1, 1).verdict_reason = "run failed";
  record_run(dir.db(), sample_results(), "/r/results.json");
  record_matrix(dir.db(), m, "/m/matrix.json");
  const auto all = history_trend(dir.db(), {});
  const auto cells = history_trend(dir.db(), {std::string("matrix"), std::nullopt, 0});
  ASSERT_EQ(cells.size(), 9u);
  EXPECT_EQ(all.size(), 9u + sample_results().aggregates.size());
  const HistoryTenantRecord& r = cells[1];
  EXPECT_EQ(r.run.command, "matrix");
  EXPECT_EQ(r.run.results_file, "/m/matrix.json");
  EXPECT_EQ(r.run.matrix_devices, 2);
  EXPECT_EQ(r.run.matrix_workloads, 3);
  EXPECT_EQ(r.key.mode, "timeslice");
  EXPECT_EQ(r.key.tenant, "host-compute beside host-copy");
  EXPECT_EQ(r.key.workload, "host-compute");
  EXPECT_EQ(r.key.params_key, R"({"n":64})");
  EXPECT_EQ(r.p95_slowdown, 0.80);
  EXPECT_EQ(r.p95_ci_low, 0.70);
  EXPECT_EQ(r.p95_ci_high, 0.90);
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_EQ(r.cutoff, 0.40);
  EXPECT_FALSE(cells[4].p95_slowdown.has_value());
  EXPECT_EQ(cells[4].repetitions_measured, 0);
  EXPECT_EQ(cells[4].verdict_reason, "run failed");
  const std::string text = history_text(cells);
  EXPECT_TRUE(starts_with(text, "2026-12-01T01:00:00Z  run 2  abc123  matrix/timeslice  packing 2 devices for 3 workloads\n"))
      << text;
  EXPECT_TRUE(contains(text, "  matrix/timeslice  host-compute beside host-copy (host-compute)  p95 +80.0% [+70.0%, +90.0%]")) << text;
  // compare --against-history never takes a matrix's cell for a run's tenant.
  HistoryWindow w{cells[1].key, 7, ""};
  EXPECT_TRUE(history_window(dir.db(), w).empty());
}

}  // namespace
}  // namespace ib
