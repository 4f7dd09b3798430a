// The HTML report (reports/html/results_html.h, vet's page reports/html/platform_html.h): one self-contained page, text from the results escaped, the
// data block the page's script draws from. (That every chart is drawn is tested in a browser:
// tests/e2e/test_history_html.py.)
#include "reports/html/chartjs.h"
#include "reports/html/html_common.h"
#include "reports/html/platform_html.h"
#include "reports/html/results_html.h"
#include "tests/unit/sample_results.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace ib {
namespace {

using namespace ib::test;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlReport, EscapesTheFiveCharacters) {
  EXPECT_EQ(html_escape(R"(<a href="x">&'</a>)"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
}

TEST(HtmlReport, ATenantNamedScriptIsInertEverywhere) {
  Results r = sample_results();
  const std::string evil = "</script><script>alert(1)</script>";
  r.runs[0].tenants[0].name = evil;
  r.aggregates[0].tenant = evil;
  r.aggregates[0].verdict_reason = "<img src=x onerror=alert(2)>";
  r.meta.host = "<b>host</b>";
  const std::string page = html_report(r);
  EXPECT_EQ(page.find("alert(1)</script>"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("<b>"), std::string::npos);
  EXPECT_NE(page.find("&lt;/script&gt;&lt;script&gt;alert(1)"), std::string::npos);                // the table
  EXPECT_NE(page.find(R"(\u003c/script\u003e\u003cscript\u003ealert(1))"), std::string::npos);      // the data block
  // Exactly the three script elements the writer makes: the data block, Chart.js, the page's script.
  EXPECT_EQ(count(page, "<script"), 3u);
  EXPECT_EQ(count(page, "</script>"), 3u);
}

TEST(HtmlReport, FetchesNothing) {
  const std::string page = html_report(sample_results());
  EXPECT_FALSE(std::regex_search(page, std::regex(R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase)));
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);  // and the page's policy forbids it
  if (chartjs_available()) {
    EXPECT_TRUE(html_report_available());
    EXPECT_NE(page.find(chartjs_source()), std::string::npos);  // inlined whole
    EXPECT_GT(std::string(chartjs_source()).size(), 100000u);
  }
}

TEST(HtmlReport, TheDataBlockCarriesWhatThePageDraws) {
  Results r = sample_results();
  r.runs[0].tenants[0].colocated.counted = {0, 1, 1, 1};
  const auto d = html_report_data(r);
  ASSERT_EQ(d.at("aggregates").size(), 2u);
  const auto& a = d.at("aggregates")[0];
  EXPECT_EQ(a.at("p95_slowdown"), 0.25);
  EXPECT_EQ(a.at("ci_low"), 0.1);
  EXPECT_EQ(a.at("ci_high"), 0.4);
  EXPECT_EQ(a.at("cutoff"), 0.4);
  EXPECT_EQ(a.at("verdict"), "pass");
  EXPECT_TRUE(d.at("aggregates")[1].at("p95_slowdown").is_null());
  const auto& run = d.at("runs")[0];
  EXPECT_EQ(run.at("blocks")[0].at("phase"), "colocated");
  EXPECT_EQ(run.at("tenants")[0].at("basis"), "sample_time");
  EXPECT_TRUE(run.at("tenants")[1].at("basis").is_null());  // no metrics
  const auto& alpha = run.at("tenants")[0].at("phases");
  EXPECT_EQ(alpha.at("exclusive").at("p95"), 0.003);
  EXPECT_EQ(alpha.at("colocated").at("samples").at("duration_s").size(), 4u);
  EXPECT_EQ(alpha.at("colocated").at("samples").at("counted")[0], 0);
  EXPECT_TRUE(alpha.at("alone").at("samples").is_null());  // repeats exclusive under time-slicing
  EXPECT_EQ(alpha.at("alone").at("note"), "the same as exclusive in this mode");
  EXPECT_TRUE(alpha.at("exclusive").at("telemetry").is_null());
  const auto& beta = run.at("tenants")[1].at("phases");
  EXPECT_TRUE(beta.at("colocated").at("p95").is_null());
  EXPECT_EQ(beta.at("colocated").at("note"), "not measured (crashed)");
}

TEST(HtmlReport, TelemetrySeriesKeepMissingFieldsAsNull) {
  Results r = sample_results();
  TelemetrySample s;
  s.t_ns = 5;
  s.r.sm_clock_mhz = 1980;
  s.r.temperature_c = 70;
  r.runs[0].tenants[0].exclusive.telemetry = {s};
  const auto t = html_report_data(r).at("runs")[0].at("tenants")[0].at("phases").at("exclusive").at("telemetry");
  EXPECT_EQ(t.at("t_ns")[0], 5);
  EXPECT_EQ(t.at("sm_clock_mhz")[0], 1980);
  EXPECT_TRUE(t.at("power_w")[0].is_null());
  EXPECT_EQ(t.at("temperature_c")[0], 70);
}

TEST(HtmlReport, TheVetChecklistShowsEveryCheckWithItsEvidenceEscaped) {
  VetReport r;
  r.device = 1;
  r.verdict = CheckOutcome::warn;
  r.checks = {{"memory_total", "Memory", CheckOutcome::pass, "141 GiB <script>x</script>", ">= 95%", "seed 004"},
              {"stability:copy", "Stability (copy)", CheckOutcome::warn, "CV 3.1%", "<= 1.5%", "seed 003"}};
  const std::string page = vet_html_report(r);
  EXPECT_NE(page.find("GPU 1: <span class=\"warn\">warn</span>"), std::string::npos);
  EXPECT_NE(page.find("<td>141 GiB &lt;script&gt;x&lt;/script&gt;</td>"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"warn\">warn</td><td>CV 3.1%</td><td>&lt;= 1.5%</td><td>seed 003</td>"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
}

}  // namespace
}  // namespace ib
