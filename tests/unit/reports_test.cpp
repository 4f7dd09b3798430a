// JSON and Markdown writers (reports/): formatting only, on hand-built results.
#include "harness/core/files.h"
#include "reports/html/results_html.h"
#include "reports/json/comparison_json.h"
#include "reports/json/results_json.h"
#include "reports/junit/platform_junit.h"
#include "reports/junit/results_junit.h"
#include "reports/markdown/comparison_markdown.h"
#include "reports/markdown/results_markdown.h"
#include "reports/prometheus/prometheus_common.h"
#include "reports/prometheus/results_prometheus.h"
#include "tests/unit/sample_results.h"

#include "reports/writer_common.h"

#include <gtest/gtest.h>
#include <pugixml.hpp>

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
  EXPECT_EQ(j.at("schema_version"), "2.9");
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
  EXPECT_EQ(tenants[0].at("warning_kinds"), nlohmann::ordered_json::array({"noisy_baseline"}));
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
  first.summary.exit_code = 130;  // another content than sample_results()'s
  first.summary.interrupted = true;
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
  first.summary.exit_code = 130;
  first.summary.interrupted = true;
  expect_replaced_not_rewritten(
      "results.json", [](const std::string& p) { return JsonResultsFile(p, true); },
      results_to_json(first, true).dump(1) + "\n", results_to_json(sample_results(), true).dump(1) + "\n");
}

TEST(ResultsFiles, SummaryMdIsReplacedToo) {
  Results first = sample_results();
  first.summary.exit_code = 130;
  first.summary.interrupted = true;
  expect_replaced_not_rewritten(
      "summary.md", [](const std::string& p) { return MarkdownSummaryFile(p); }, markdown_summary(first),
      markdown_summary(sample_results()));
}

// Files for machines are written only once they hold a run (a run stopped before its first one
// leaves none a nightly job could take for an empty pass); summary.md says what happened anyway.
TEST(ResultsFiles, NoResultsFileBeforeTheFirstRunButASummary) {
  TempDir dir;
  Results none = sample_results();
  none.runs.clear();
  none.aggregates.clear();
  JsonResultsFile json(dir.path + "/results.json", true);
  JunitResultsFile junit(dir.path + "/junit.xml");
  MarkdownSummaryFile md(dir.path + "/summary.md");
  for (ResultsWriter* w : std::initializer_list<ResultsWriter*>{&json, &junit, &md}) {
    w->runs(none);
    w->finalize(none);
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"summary.md"});
  json.runs(sample_results());
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"results.json", "summary.md"}));
}

TEST(ResultsFiles, TheTerminalGetsTheSummaryOnceAtTheEnd) {
  std::ostringstream terminal;
  ResultsWriters writers;
  writers.add(std::make_unique<TerminalSummary>(terminal, "out/results.json"));
  writers.context(sample_results().meta);
  writers.runs(sample_results());
  EXPECT_EQ(terminal.str(), "");
  writers.finalize(sample_results());
  EXPECT_EQ(terminal.str(), terminal_summary(sample_results()) + "\nresults: out/results.json\n");
}

TEST(TerminalSummary, KeyWarningsPerTenantTheRestCounted) {
  Results r = sample_results();
  r.aggregates[0].warnings = {{WarningKind::noisy_baseline, "noisy baseline: a"},
                              {WarningKind::blocks_not_counted, "2 of 10 exclusive block(s) not counted"},
                              {WarningKind::outliers, "3 outlier sample(s)"},
                              {WarningKind::drift, "drift: the exclusive median changed by 12%"},
                              {WarningKind::tail_burst, "colocated block 7 (round 3) drove the tail"}};
  const std::string t = terminal_summary(r), md = markdown_summary(r);
  // Grouped under the tenant, in the order the analysis gave them, the rest counted by kind.
  EXPECT_NE(t.find("- pair (timeslice), alpha: pass\n  - 2 of 10 exclusive block(s) not counted\n  - drift: the exclusive "
                   "median changed by 12%\n  - colocated block 7 (round 3) drove the tail\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("- 2 more warning(s) in summary.md (1 noisy_baseline, 1 outliers)"), std::string::npos) << t;
  EXPECT_EQ(t.find("noisy baseline: a"), std::string::npos) << t;
  EXPECT_NE(t.find("- pair (timeslice), beta: error — repetition 1: worker crashed"), std::string::npos) << t;
  // summary.md keeps every warning, and the repetitions.
  for (const auto& w : r.aggregates[0].warnings) EXPECT_NE(md.find(w.text), std::string::npos) << w.text;
  EXPECT_NE(md.find("### Repetitions"), std::string::npos);
  EXPECT_EQ(t.find("### Repetitions"), std::string::npos);
  // A quiet pass takes no line beyond its row.
  r.aggregates[0].warnings.clear();
  EXPECT_EQ(terminal_summary(r).find("- pair (timeslice), alpha"), std::string::npos);
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
  // The interval's level and the slowdown it resolves (its half-width), and how far the verdict got.
  EXPECT_NE(md.find("| pair | timeslice | alpha | 1 | 3/3 | +25.0% [+10.0%, +40.0%] | 95% | 15.0 pts | +20.0% | n/a | 40% | "
                    "**pass** | decided: 12 rounds, 31 s |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| pair | timeslice | beta | 1 | n/a | n/a | n/a | n/a | n/a | n/a | 40% | **error** | n/a |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- pair (timeslice), beta: error — repetition 1: worker crashed"), std::string::npos) << md;
  // Each repetition's row: blocks counted, P95s, CI.
  EXPECT_NE(md.find("| pair | timeslice | 1/2 | alpha | 0/0, 0/0 | 3.000 | 6.000 | +25.0% [+10.0%, +40.0%] | pass |"),
            std::string::npos)
      << md;
  EXPECT_EQ(count_lines_starting(md, "| pair | timeslice | 1/2 |"), 2) << md;
}

// A tenant judged on time per unit of work (an interval reporter): its repetition's P95s are that, at their own
// scale with their unit, never its seconds in ms (pv's 2e-10 s per byte printed 0.000).
TEST(MarkdownWriter, ATenantJudgedPerWorkShowsItsP95sPerUnitOfWork) {
  Results r = sample_results();
  TenantResult& t = r.runs[0].tenants[0];
  t.exclusive.value_unit = t.colocated.value_unit = "s/B";
  t.exclusive.stats.p95 = 2.103e-10;
  t.colocated.stats.p95 = 4.5e-6;
  const std::string md = markdown_summary(r);
  EXPECT_NE(md.find("| pair | timeslice | 1/2 | alpha | 0/0, 0/0 | 0.2103 ns/B | 4.5 us/B | +25.0%"), std::string::npos) << md;
  EXPECT_EQ(phase_value_text(0.012, "s"), "12.000");
  EXPECT_EQ(phase_value_text(1.5, "s/token"), "1.5 s/token");
  EXPECT_EQ(phase_value_text(0.0125, "s/it"), "12.5 ms/it");
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


// ---------------------------------------------------------------- devices in the JSON and the summary

TEST(JsonWriter, DevicesAreWrittenWithNullsForWhatWasNotRead) {
  Results r = sample_results();
  DeviceRecord d;
  d.kind = DeviceKind::host;
  d.name = "Some CPU";
  d.node = "n1";
  d.cores_online = 4;
  r.meta.devices = {d};
  const auto j = results_to_json(r, true).at("meta").at("devices");
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0].at("kind"), "host");
  EXPECT_EQ(j[0].at("name"), "Some CPU");
  EXPECT_TRUE(j[0].at("uuid").is_null());
  EXPECT_TRUE(j[0].at("pcie").at("gen_max").is_null());
  EXPECT_EQ(j[0].at("cores").at("online"), 4);
  EXPECT_TRUE(j[0].at("cores").at("usable").is_null());
  EXPECT_NE(markdown_summary(r).find("Device: host CPU Some CPU on n1\n"), std::string::npos) << markdown_summary(r);
}

// ---------------------------------------------------------------- JUnit

struct Testcase {
  std::string classname, name, outcome, message, text;
};

std::vector<Testcase> testcases(const std::string& xml) {
  pugi::xml_document doc;
  EXPECT_TRUE(doc.load_string(xml.c_str())) << xml;
  std::vector<Testcase> out;
  for (pugi::xml_node tc : doc.child("testsuites").child("testsuite").children("testcase")) {
    Testcase t{tc.attribute("classname").value(), tc.attribute("name").value(), "pass", "", ""};
    for (const char* kind : {"failure", "error", "skipped"})
      if (pugi::xml_node n = tc.child(kind)) {
        t.outcome = kind;
        t.message = n.attribute("message").value();
        t.text = n.text().get();
      }
    out.push_back(t);
  }
  return out;
}

// The first testsuite's tests, failures and skipped attributes.
std::vector<int> suite_counts(const std::string& xml) {
  pugi::xml_document doc;
  EXPECT_TRUE(doc.load_string(xml.c_str())) << xml;
  const pugi::xml_node suite = doc.child("testsuites").child("testsuite");
  return {suite.attribute("tests").as_int(-1), suite.attribute("failures").as_int(-1), suite.attribute("skipped").as_int(-1)};
}

// Waived tenants are skipped testcases, and the suite counts them with the inconclusive ones.
TEST(JunitWriter, TheSuiteCountsWaivedTenantsAsSkipped) {
  Results r = sample_results();
  TenantAggregate w = r.aggregates[0];
  w.tenant = "delta";
  w.verdict = Verdict::waived;
  w.verdict_reason = "needs 2 GPUs";
  r.aggregates.push_back(w);
  r.summary.waived = 1;
  const std::string xml = junit_xml(r);
  const auto tcs = testcases(xml);
  ASSERT_EQ(tcs.size(), 3u);
  EXPECT_EQ(tcs[2].outcome, "skipped");
  EXPECT_EQ(suite_counts(xml)[2], 1);
}

TEST(JunitWriter, OneTestcasePerTenantVerdict) {
  Results r = sample_results();
  r.aggregates[0].verdict = Verdict::fail;
  r.aggregates[0].verdict_reason = "the whole CI lies above the cutoff";
  TenantAggregate c = r.aggregates[0];
  c.tenant = "gamma";
  c.verdict = Verdict::inconclusive;
  c.verdict_reason = "CI straddles the cutoff";
  r.aggregates.push_back(c);
  r.summary.failed = 1;
  r.summary.inconclusive = 1;
  const std::string xml = junit_xml(r);
  const auto tcs = testcases(xml);
  ASSERT_EQ(tcs.size(), 3u);
  EXPECT_EQ(tcs[0].classname, "interference-bench.pair.timeslice");
  EXPECT_EQ(tcs[0].name, "alpha (host-compute)");
  EXPECT_EQ(tcs[0].outcome, "failure");
  EXPECT_EQ(tcs[0].message, "p95_slowdown 0.25 [0.1, 0.4] against cutoff 0.4: the whole CI lies above the cutoff");
  EXPECT_NE(tcs[0].text.find("metric: p95_slowdown\nvalue: 0.25\nci: [0.1, 0.4]\n"), std::string::npos) << tcs[0].text;
  EXPECT_NE(tcs[0].text.find("stopped: decided after 12 rounds, 31.4 s (look 2 of 11)\nresolves: +/-0.15"), std::string::npos) << tcs[0].text;
  EXPECT_NE(tcs[0].text.find("threshold: 0.4"), std::string::npos);
  EXPECT_EQ(tcs[1].outcome, "error");
  EXPECT_EQ(tcs[1].message, "repetition 1: worker crashed");
  EXPECT_EQ(tcs[2].outcome, "skipped");
  EXPECT_EQ(tcs[2].message, "inconclusive: CI straddles the cutoff");
  pugi::xml_document doc;
  doc.load_string(xml.c_str());
  const pugi::xml_node suite = doc.child("testsuites").child("testsuite");
  EXPECT_EQ(suite.attribute("tests").as_int(), 3);
  EXPECT_EQ(suite.attribute("failures").as_int(), 1);
  EXPECT_EQ(suite.attribute("errors").as_int(), 1);
  EXPECT_EQ(suite.attribute("skipped").as_int(), 1);
}

TEST(JunitWriter, MarkupInANameIsEscaped) {
  Results r = sample_results();
  r.aggregates[0].tenant = "v<&\"'>x";
  r.aggregates[0].verdict_reason = "a <b> & \"c\"";
  const std::string xml = junit_xml(r);
  EXPECT_EQ(xml.find("v<&"), std::string::npos) << xml;
  const auto tcs = testcases(xml);
  ASSERT_EQ(tcs.size(), 2u);
  EXPECT_EQ(tcs[0].name, "v<&\"'>x (host-compute)");
}

TEST(JunitWriter, VetChecksAreTestcases) {
  const std::vector<CheckResult> checks = {
      {"pcie", "PCIe link", CheckOutcome::warn, "Gen4 x16 of Gen5 x16", "current = max", "docs/design.md section 6"},
      {"neighbours", "Neighbours", CheckOutcome::fail, "pid 4242 uses 1 GiB", "no foreign process", "seed 001"},
      {"h2d", "H2D bandwidth", CheckOutcome::unknown, "not measured", "pinned >= 50% of the link", "seed 001"}};
  const std::string xml = checks_junit_xml("interference-bench vet", checks);
  const auto tcs = testcases(xml);
  ASSERT_EQ(tcs.size(), 3u);
  EXPECT_EQ(tcs[0].name, "pcie (PCIe link)");
  EXPECT_EQ(tcs[0].outcome, "pass");
  EXPECT_EQ(tcs[1].outcome, "failure");
  EXPECT_EQ(tcs[1].message, "pid 4242 uses 1 GiB (threshold: no foreign process)");
  EXPECT_NE(tcs[1].text.find("check: neighbours\nstatus: fail\n"), std::string::npos) << tcs[1].text;
  EXPECT_EQ(tcs[2].outcome, "skipped");
  EXPECT_EQ(tcs[2].message, "unknown: not measured");
  // The suite's counts: a warn passes (it is not skipped), an unknown is skipped.
  const std::vector<CheckResult> more = {checks[0], checks[1], checks[2],
                                         {"ecc", "ECC", CheckOutcome::warn, "off", "on", "docs/design.md section 6"}};
  EXPECT_EQ(suite_counts(checks_junit_xml("interference-bench vet", more)), (std::vector<int>{4, 1, 1}));
}

// An inconclusive sustained-load test is a skipped testcase and counted so by its suite; a fail a failure.
TEST(JunitWriter, SustainCountsItsOneTestcase) {
  SustainReport r;
  r.verdict = LoadVerdict::inconclusive;
  r.evidence = {"too few windows"};
  EXPECT_EQ(suite_counts(sustain_junit_xml(r)), (std::vector<int>{1, 0, 1}));
  r.verdict = LoadVerdict::fail;
  EXPECT_EQ(suite_counts(sustain_junit_xml(r)), (std::vector<int>{1, 1, 0}));
  r.verdict = LoadVerdict::pass;
  EXPECT_EQ(suite_counts(sustain_junit_xml(r)), (std::vector<int>{1, 0, 0}));
}

// ---------------------------------------------------------------- Prometheus

TEST(PrometheusWriter, LabelValuesAreEscaped) {
  EXPECT_EQ(prometheus_label_value("plain"), "plain");
  EXPECT_EQ(prometheus_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

// Sample values are the shortest text that reads back as the same double: 0.1343642 as written (not
// a rounded "0.134364", nor the 17 digits "0.13436419999999999"), 0.1 + 0.2 with the 17 it needs.
TEST(PrometheusWriter, ValuesAreTheShortestExactText) {
  Results r = sample_results();
  ASSERT_TRUE(r.aggregates[0].metrics.has_value());
  r.aggregates[0].metrics->p95_slowdown.value = 0.1343642;
  r.aggregates[0].metrics->median_slowdown = 0.1 + 0.2;
  const std::string text = prometheus_text(r);
  EXPECT_NE(text.find("} 0.1343642\n"), std::string::npos) << text;
  EXPECT_NE(text.find("} 0.30000000000000004\n"), std::string::npos) << text;
}

// Issue 35: a collective tenant's figures per repetition, in Prometheus (families of their own) and in its
// JUnit testcase's evidence; a run without one writes none of those families.
Results with_a_collective() {
  Results r = sample_results();
  TenantResult& t = r.runs.at(0).tenants.at(0);
  EXPECT_TRUE(t.metrics.has_value());
  t.metrics->collective = TenantMetrics::Collective{4, 2, 0.1, 1.5, 600.0, 400.0};
  t.colocated.rank_figures = PhaseResult::RankFigures{4, 3, 0.75};
  return r;
}

TEST(PrometheusWriter, ACollectivesRanksBlastRadiusStallAndStraggler) {
  EXPECT_EQ(prometheus_text(sample_results()).find("interference_bench_collective"), std::string::npos);
  const std::string text = prometheus_text(with_a_collective());
  const std::string rep = ",repetition=\"" + std::to_string(with_a_collective().runs[0].repetition) + "\"";
  for (const std::string& line : {"interference_bench_collective_ranks{", "interference_bench_collective_blast_radius{",
                                  "interference_bench_collective_stall_margin{"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  EXPECT_NE(text.find(rep + "} 2\n"), std::string::npos) << text;    // the blast radius
  EXPECT_NE(text.find(rep + "} 400\n"), std::string::npos) << text;  // the stall margin
  EXPECT_NE(text.find(rep + ",rank=\"3\"} 0.75\n"), std::string::npos) << text;
}

TEST(JunitWriter, ACollectivesFiguresAreInItsEvidence) {
  Results r = with_a_collective();
  r.aggregates[0].verdict = Verdict::fail;  // the evidence is the failure's text
  const auto tcs = testcases(junit_xml(r));
  ASSERT_FALSE(tcs.empty());
  EXPECT_NE(tcs[0].text.find("): 4 ranks, blast radius 2 (threshold 0.1), longest stall 1.5 s of a 600 s timeout "
                             "(margin 400), straggler rank 3 (last to arrive in 0.75 of samples)"),
            std::string::npos)
      << tcs[0].text;
  r = sample_results();
  r.aggregates[0].verdict = Verdict::fail;
  EXPECT_EQ(testcases(junit_xml(r))[0].text.find("collective"), std::string::npos);
}

TEST(HtmlWriter, ACollectivesFiguresHaveATable) {
  EXPECT_EQ(html_report(sample_results()).find("<h2>Collectives</h2>"), std::string::npos);
  const std::string page = html_report(with_a_collective());
  EXPECT_NE(page.find("<h2>Collectives</h2>"), std::string::npos);
  EXPECT_NE(page.find("<td>4</td><td>2 (slowed &gt; 10%)</td><td>rank 3 (75%)</td><td>1.500 s of 600 s</td>"),
            std::string::npos);
}

TEST(PrometheusWriter, FamiliesWithHelpTypeAndTheResultsValues) {
  Results r = sample_results();
  r.meta.host = "node7";
  DeviceRecord gpu;
  gpu.kind = DeviceKind::gpu;
  gpu.index = 0;
  gpu.uuid = "GPU-1";
  r.meta.devices = {gpu};
  const std::string text = prometheus_text(r);
  const std::string labels =
      "{scenario=\"pair\",mode=\"timeslice\",tenant=\"alpha\",workload=\"host-compute\",gpu_uuid=\"GPU-1\",node=\"node7\"";
  EXPECT_NE(text.find("# HELP interference_bench_p95_slowdown "), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE interference_bench_p95_slowdown gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find("interference_bench_p95_slowdown" + labels + "} 0.25\n"), std::string::npos) << text;
  EXPECT_NE(text.find("interference_bench_median_slowdown" + labels + "} 0.2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("interference_bench_verdict" + labels + ",verdict=\"pass\"} 1\n"), std::string::npos) << text;
  // How far the verdict got.
  EXPECT_NE(text.find("interference_bench_p95_slowdown_resolution" + labels + "} 0.15\n"), std::string::npos) << text;
  EXPECT_NE(text.find("interference_bench_p95_slowdown_ci_high" + labels + "} 0.4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("interference_bench_rounds" + labels + "} 12\n"), std::string::npos) << text;
  EXPECT_NE(text.find("interference_bench_decided" + labels + "} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("interference_bench_verdict" + labels + ",verdict=\"fail\"} 0\n"), std::string::npos) << text;
  // Per repetition and phase; window_cv is NaN (null in the JSON): no sample.
  EXPECT_NE(text.find("interference_bench_throughput" + labels + ",repetition=\"1\",phase=\"exclusive\"} "),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("interference_bench_window_cv{"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE interference_bench_throttled_fraction gauge\n"), std::string::npos) << text;
  // beta has no metrics: no slowdown sample, but a verdict.
  EXPECT_EQ(text.find("interference_bench_p95_slowdown{scenario=\"pair\",mode=\"timeslice\",tenant=\"beta\""),
            std::string::npos);
  EXPECT_NE(text.find("tenant=\"beta\",workload=\"host-copy\",gpu_uuid=\"GPU-1\",node=\"node7\",verdict=\"error\"} 1\n"),
            std::string::npos)
      << text;
}

// ---------------------------------------------------------------- compare

TEST(CompareWriter, MarkdownAndJsonSayWhatTheStructsSay) {
  Comparison c;
  c.base_file = "a.json";
  c.next_file = "b.json";
  TenantComparison t;
  t.id = {"pair", "timeslice", "victim", "host-compute", "{\"n\":64}"};
  t.base_exclusive_n = t.base_colocated_n = t.next_exclusive_n = t.next_colocated_n = 100;
  MetricChange p95;
  p95.metric = ComparedMetric::p95_slowdown;
  p95.base = 0.1;
  p95.next = 0.6;
  p95.change = Estimate{0.5, 0.45, 0.55, 0.95, 1000, 1};
  p95.verdict = ChangeClass::worse;
  p95.reason = "why";
  p95.resolution = 0.05;
  p95.base_resolution = 0.03;
  p95.next_resolution = 0.04;
  MetricChange median = p95, thr = p95;
  median.metric = ComparedMetric::median_slowdown;
  thr.metric = ComparedMetric::throughput;
  thr.change = Estimate{-0.25, -0.3, -0.2, 0.95, 1000, 1};
  t.metrics = {p95, median, thr};
  t.verdict = ChangeClass::worse;
  t.reason = "p95 worse";
  c.tenants = {t};
  c.only_in_next = {{"pair", "timeslice", "new-one", "host-copy", "{}"}};
  c.worse = 1;
  c.exit_code = 1;
  const std::string md = comparison_markdown(c);
  EXPECT_NE(md.find("| pair | timeslice | victim | 100/100, 100/100 | +10.0% → +60.0% | +50.0 [+45.0, +55.0] worse | 5.0 | "
                    "+50.0 [+45.0, +55.0] worse | -25.0% [-30.0%, -20.0%] worse | **worse** |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- pair (timeslice), victim [host-compute {\"n\":64}]: worse — p95 worse\n"), std::string::npos) << md;
  EXPECT_NE(md.find("- only in NEW: pair (timeslice), new-one"), std::string::npos) << md;
  EXPECT_NE(md.find("**0 better, 0 same, 1 worse, 0 inconclusive** (0 only in BASE, 1 only in NEW) — exit code 1"),
            std::string::npos)
      << md;
  const auto j = comparison_to_json(c);
  EXPECT_EQ(j.at("tenants")[0].at("params").at("n"), 64);
  EXPECT_EQ(j.at("tenants")[0].at("metrics").at("throughput").at("ci_high"), -0.2);
  EXPECT_EQ(j.at("tenants")[0].at("metrics").at("p95_slowdown").at("resolution"), 0.05);
  EXPECT_EQ(j.at("tenants")[0].at("metrics").at("p95_slowdown").at("new_resolution"), 0.04);
  EXPECT_EQ(j.at("tenants")[0].at("verdict"), "worse");
  EXPECT_EQ(j.at("only_in_new")[0].at("tenant"), "new-one");
  EXPECT_EQ(j.at("summary").at("exit_code"), 1);
}

}  // namespace
}  // namespace ib
