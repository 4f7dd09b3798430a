// JSON and Markdown writers (reports/): formatting only, on hand-built results.
#include "harness/core/files.h"
#include "reports/json_writer.h"
#include "reports/markdown_writer.h"
#include "tests/unit/sample_results.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ib {
namespace {

using namespace ib::test;

// ---------------------------------------------------------------- results_to_json

TEST(JsonWriter, SchemaVersionMetaAndSummary) {
  const auto j = results_to_json(sample_results(), true);
  EXPECT_EQ(j.at("schema_version"), "2.0");
  EXPECT_EQ(j.at("schema_version"), kSchemaVersion);
  EXPECT_EQ(j.at("meta").at("tool"), "interference-bench");
  EXPECT_EQ(j.at("meta").at("bootstrap").at("seed"), 7);
  EXPECT_EQ(j.at("meta").at("bootstrap").at("resamples"), 100);
  EXPECT_EQ(j.at("meta").at("raw_samples"), true);
  EXPECT_EQ(j.at("summary").at("exit_code"), 4);
  EXPECT_EQ(j.at("summary").at("errors"), 1);
  EXPECT_EQ(j.at("summary").at("passed"), 1);
  EXPECT_EQ(j.at("summary").at("pass"), false);
  EXPECT_EQ(j.at("runs").size(), 1u);
  EXPECT_EQ(j.at("runs")[0].at("tenants").size(), 2u);
  EXPECT_EQ(j.at("runs")[0].at("rounds"), 3);
  EXPECT_EQ(j.at("runs")[0].at("round_order"), "abba");
  const auto& b = j.at("runs")[0].at("blocks")[0];
  EXPECT_EQ(b.at("phase"), "colocated");
  EXPECT_EQ(b.at("status"), "excluded");
  EXPECT_EQ(b.at("overlap_window_ns").at("start"), 10);
  EXPECT_EQ(b.at("overlap_window_ns").at("end"), 20);
  EXPECT_DOUBLE_EQ(b.at("foreign_load").at("foreign_cpus").get<double>(), 0.5);
  EXPECT_TRUE(b.at("foreign_load").at("gpu_foreign_processes").is_null());
  // The aggregates carry the verdicts that count.
  ASSERT_EQ(j.at("aggregates").size(), 2u);
  EXPECT_EQ(j.at("aggregates")[0].at("tenant"), "alpha");
  EXPECT_EQ(j.at("aggregates")[0].at("verdict"), "pass");
  EXPECT_EQ(j.at("aggregates")[0].at("repetition_verdicts")[0], "pass");
  EXPECT_TRUE(j.at("aggregates")[1].at("metrics").is_null());
  // The writer's first key is the schema version.
  EXPECT_EQ(j.begin().key(), "schema_version");
}

TEST(JsonWriter, NaNWrittenAsNull) {
  const auto j = results_to_json(sample_results(), true);
  const auto& run = j.at("runs")[0];
  EXPECT_TRUE(run.at("system").at("vs_exclusive").at("antt").is_null());
  EXPECT_DOUBLE_EQ(run.at("system").at("vs_exclusive").at("stp").get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(run.at("system").at("vs_alone").at("stp").get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(run.at("system").at("vs_alone").at("antt").get<double>(), 2.0);
  const auto& alpha = run.at("tenants")[0];
  EXPECT_TRUE(alpha.at("metrics").at("partition_cost").is_null());
  EXPECT_DOUBLE_EQ(alpha.at("metrics").at("interference").get<double>(), 1.2);
  EXPECT_TRUE(alpha.at("phases").at("exclusive").at("window_cv").is_null());
  EXPECT_TRUE(run.at("barrier_skew_s").is_null());  // not set
  // Beta has no metrics at all (null, not an object of nulls) and a crashed colocated worker.
  const auto& beta = run.at("tenants")[1];
  EXPECT_TRUE(beta.at("metrics").is_null());
  EXPECT_EQ(beta.at("phases").at("colocated").at("worker").at("signal"), 11);
  EXPECT_TRUE(beta.at("phases").at("colocated").at("worker").at("exit_code").is_null());
  // The serialized text never contains NaN.
  const std::string text = j.dump();
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  EXPECT_EQ(text.find(":nan"), std::string::npos);
  EXPECT_EQ(text.find(":inf"), std::string::npos);
}

TEST(JsonWriter, EstimateFields) {
  const auto j = results_to_json(sample_results(), true);
  const auto& e = j.at("runs")[0].at("tenants")[0].at("metrics").at("p95_slowdown");
  EXPECT_DOUBLE_EQ(e.at("value").get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(e.at("ci_low").get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(e.at("ci_high").get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(e.at("confidence").get<double>(), 0.95);
  EXPECT_EQ(e.at("resamples"), 100);
  EXPECT_EQ(e.at("seed"), 7);
}

TEST(JsonWriter, RawKeepsPerSampleArrays) {
  const auto j = results_to_json(sample_results(), true);
  const auto& alpha = j.at("runs")[0].at("tenants")[0];
  const auto& c = alpha.at("phases").at("colocated").at("samples");
  ASSERT_EQ(c.at("start_ns").size(), 4u);
  ASSERT_EQ(c.at("duration_s").size(), 4u);
  ASSERT_EQ(c.at("in_window").size(), 4u);
  ASSERT_EQ(c.at("outlier").size(), 4u);
  EXPECT_EQ(c.at("start_ns")[1], 3'000'000);
  EXPECT_DOUBLE_EQ(c.at("duration_s")[3].get<double>(), 0.010);
  EXPECT_EQ(c.at("in_window")[0], 0);
  EXPECT_EQ(c.at("in_window")[1], 1);
  EXPECT_EQ(c.at("outlier")[3], 1);
  EXPECT_EQ(alpha.at("phases").at("colocated").at("outliers"), 1);
  const auto& e = alpha.at("phases").at("exclusive").at("samples");
  EXPECT_EQ(e.at("duration_s").size(), 3u);
  EXPECT_EQ(e.at("start_ns").size(), 3u);
  // No latencies recorded: no latency arrays.
  EXPECT_FALSE(e.contains("latency_s"));
  // The time-slice alone phase repeats no samples even with raw on.
  EXPECT_EQ(alpha.at("phases").at("alone").at("source"), "exclusive");
  EXPECT_FALSE(alpha.at("phases").at("alone").contains("samples"));
}

TEST(JsonWriter, NoRawDropsSamples) {
  const auto j = results_to_json(sample_results(), false);
  EXPECT_EQ(j.at("meta").at("raw_samples"), false);
  for (const auto& t : j.at("runs")[0].at("tenants"))
    for (const char* ph : {"exclusive", "alone", "colocated"}) {
      EXPECT_FALSE(t.at("phases").at(ph).contains("samples")) << ph;
      EXPECT_TRUE(t.at("phases").at(ph).contains("stats")) << ph;
    }
  // Stats survive: alpha's colocated stats.
  const auto& s = j.at("runs")[0].at("tenants")[0].at("phases").at("colocated").at("stats");
  EXPECT_EQ(s.at("n"), 4);
  EXPECT_DOUBLE_EQ(s.at("p95").get<double>(), 0.006);
  EXPECT_EQ(s.at("unit"), "s");
}

TEST(JsonWriter, VerdictNamesAndWarnings) {
  const auto j = results_to_json(sample_results(), true);
  const auto& tenants = j.at("runs")[0].at("tenants");
  EXPECT_EQ(tenants[0].at("verdict"), "pass");
  EXPECT_EQ(tenants[0].at("verdict_reason"), "within");
  EXPECT_EQ(tenants[0].at("warnings"), nlohmann::ordered_json::array({"noisy baseline: test"}));
  EXPECT_EQ(tenants[1].at("verdict"), "error");
  EXPECT_EQ(tenants[0].at("params").at("n"), 64);
  EXPECT_DOUBLE_EQ(tenants[0].at("work_per_sample").at("value").get<double>(), 524288.0);
  EXPECT_EQ(tenants[0].at("work_per_sample").at("unit"), "FLOP");
  EXPECT_EQ(tenants[0].at("phases").at("exclusive").at("throughput").at("unit"), "FLOP/s");
}

TEST(JsonWriter, EveryVerdictName) {
  Results r = sample_results();
  const std::vector<std::pair<Verdict, std::string>> cases = {
      {Verdict::pass, "pass"},         {Verdict::fail, "fail"},     {Verdict::inconclusive, "inconclusive"},
      {Verdict::baseline, "baseline"}, {Verdict::waived, "waived"}, {Verdict::error, "error"}};
  for (const auto& [v, name] : cases) {
    r.runs[0].tenants[1].verdict = v;
    EXPECT_EQ(results_to_json(r, false).at("runs")[0].at("tenants")[1].at("verdict"), name);
  }
}

// ---------------------------------------------------------------- write_file_atomic

TEST(WriteFileAtomic, WritesContentAndLeavesNoTemp) {
  TempDir dir;
  const std::string path = dir.path + "/results.json";
  const std::string text = "{\"schema_version\": \"1.0\"}\nline two\n";
  write_file_atomic(path, text);
  EXPECT_EQ(read_all(path), text);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"results.json"});

  // Overwrites an existing file completely (shorter content, no leftover tail).
  write_file_atomic(path, "x");
  EXPECT_EQ(read_all(path), "x");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"results.json"});

  // Empty content is a valid (empty) file.
  write_file_atomic(path, "");
  EXPECT_EQ(read_all(path), "");
}

TEST(WriteFileAtomic, UnwritablePathThrows) {
  TempDir dir;
  EXPECT_THROW(write_file_atomic(dir.path + "/no/such/dir/results.json", "x"), std::runtime_error);
  // Renaming onto a directory fails: the temp file is removed again.
  const std::string sub = dir.path + "/sub";
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  EXPECT_THROW(write_file_atomic(sub, "x"), std::runtime_error);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"sub"});
  ::rmdir(sub.c_str());
}

// ---------------------------------------------------------------- the writers' files

// A reader that opened results.json before a rewrite (here: a hard link to it, which names the same
// file) keeps the complete old content: the writer replaces the file by a rename, never writes into it.
// Written in place, the link would show the new content (or half of it).
template <typename Writer>
void expect_replaced_not_rewritten(const std::string& name, Writer make, const std::string& first_text,
                                   const std::string& second_text) {
  TempDir dir;
  const std::string path = dir.path + "/" + name, held = dir.path + "/held-" + name;
  auto file = make(path);
  Results first = sample_results();
  first.runs.clear();
  file.runs(first);
  ASSERT_EQ(read_all(path), first_text);
  ASSERT_EQ(::link(path.c_str(), held.c_str()), 0);
  file.runs(sample_results());
  EXPECT_EQ(read_all(held), first_text) << "rewritten in place";
  EXPECT_EQ(read_all(path), second_text);
  ASSERT_EQ(::unlink(held.c_str()), 0);
  ASSERT_EQ(::link(path.c_str(), held.c_str()), 0);
  file.finalize(first);
  EXPECT_EQ(read_all(held), second_text) << "finalize rewrote in place";
  EXPECT_EQ(read_all(path), first_text);
}

TEST(ResultsFiles, ResultsJsonIsReplacedAfterEveryRepetitionNeverWrittenInPlace) {
  Results first = sample_results();
  first.runs.clear();
  expect_replaced_not_rewritten(
      "results.json", [](const std::string& p) { return JsonResultsFile(p, true); },
      results_to_json(first, true).dump(1) + "\n", results_to_json(sample_results(), true).dump(1) + "\n");
}

TEST(ResultsFiles, SummaryMdIsReplacedToo) {
  Results first = sample_results();
  first.runs.clear();
  expect_replaced_not_rewritten(
      "summary.md", [](const std::string& p) { return MarkdownSummaryFile(p); }, markdown_summary(first),
      markdown_summary(sample_results()));
}

TEST(ResultsFiles, TheTerminalGetsTheSummaryOnceAtTheEnd) {
  std::ostringstream terminal;
  ResultsWriters writers;
  writers.add(std::make_unique<TerminalSummary>(terminal, "out/results.json"));
  writers.context(sample_results().meta);
  writers.runs(sample_results());
  EXPECT_EQ(terminal.str(), "");
  writers.finalize(sample_results());
  EXPECT_EQ(terminal.str(), markdown_summary(sample_results()) + "\nresults: out/results.json\n");
}

// ---------------------------------------------------------------- markdown_summary

int count_lines_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.rfind(prefix, 0) == 0;
  return n;
}

TEST(MarkdownWriter, OneAggregateRowPerTenantWithBoldVerdict) {
  const std::string md = markdown_summary(sample_results());
  // The verdicts that count, one row per (scenario, mode, tenant): n 3/3, the CI, median slowdown.
  EXPECT_NE(md.find("| pair | timeslice | alpha | 1 | 3/3 | +25.0% [+10.0%, +40.0%] | +20.0% | n/a | 40% | **pass** |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| pair | timeslice | beta | 1 | n/a | n/a | n/a | n/a | 40% | **error** |"), std::string::npos) << md;
  EXPECT_NE(md.find("- pair (timeslice), beta: error — repetition 1: worker crashed"), std::string::npos) << md;
  // Each repetition's row: blocks counted, P95s, CI.
  EXPECT_NE(md.find("| pair | timeslice | 1/2 | alpha | 0/0, 0/0 | 3.000 | 6.000 | +25.0% [+10.0%, +40.0%] | pass |"),
            std::string::npos)
      << md;
  EXPECT_EQ(count_lines_starting(md, "| pair | timeslice | 1/2 |"), 2) << md;
}

TEST(MarkdownWriter, ExitCodeLineWarningsBlocksAndRounds) {
  const std::string md = markdown_summary(sample_results());
  EXPECT_NE(md.find("**NOT PASS**: 1 pass, 0 fail, 0 inconclusive, 0 baseline, 0 waived, 1 error — exit code 4\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- warning (pair, timeslice, alpha): noisy baseline: test"), std::string::npos) << md;
  EXPECT_NE(md.find("STP 1.50 / ANTT n/a against exclusive, 1.25 / 2.00 against alone"), std::string::npos) << md;
  EXPECT_NE(md.find("Rounds per repetition: 3 (abba)"), std::string::npos) << md;
  EXPECT_NE(md.find("block 0 (colocated, round 1, attempt 1) **excluded**: processes that are not this run's used 0.50 CPUs"),
            std::string::npos)
      << md;

  Results r = sample_results();
  r.summary = RunSummary{};
  r.summary.pass = true;
  r.summary.passed = 2;
  r.summary.exit_code = 0;
  EXPECT_NE(markdown_summary(r).find("**PASS**: 2 pass, 0 fail, 0 inconclusive, 0 baseline, 0 waived, 0 error — exit code 0"),
            std::string::npos);
  r.summary.interrupted = true;
  r.summary.exit_code = 130;
  EXPECT_NE(markdown_summary(r).find("0 error (interrupted) — exit code 130"), std::string::npos);
}

}  // namespace
}  // namespace ib
