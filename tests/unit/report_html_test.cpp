// The HTML reporter (report/html_reporter.h): no script, no inline style,
// failures first, the why, the probes, charts and the environment.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/text.h"
#include "report/html_reporter.h"
#include "report_fixtures.h"

namespace perfgate {
namespace {

using testing::Count;
using testing::Explained;
using testing::HostileResults;
using testing::Lower;
using testing::MakeCheck;
using testing::ReportTest;
using testing::ScenarioWithBaselineRepetitions;

// ---- HTML ----

TEST_F(ReportTest, HtmlHasNoScriptAndNoInlineStyle) {
  std::string html = Lower(HtmlReporter().Render(results_));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("style="), std::string::npos);
  EXPECT_EQ(html.find("<style"), std::string::npos);
  EXPECT_EQ(html.find("javascript:"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex("\\son[a-z]+\\s*=")));
  EXPECT_NE(html.find("<link rel=\"stylesheet\" href=\"report.css\"/>"), std::string::npos);
  EXPECT_NE(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
}

TEST_F(ReportTest, HtmlListsTheAdaptersWarningsEscaped) {
  std::string html = HtmlReporter().Render(results_);
  EXPECT_NE(html.find("<ul class=\"warnings\">\n<li>benchmark BM_&lt;b&gt;: error_occurred: "), std::string::npos);
}

TEST_F(ReportTest, HtmlShowsFailedChecksFirst) {
  std::string html = HtmlReporter().Render(results_);
  size_t attention = html.find("id=\"attention\"");
  size_t first_scenario = html.find("id=\"scenario-0\"");
  ASSERT_NE(attention, std::string::npos);
  ASSERT_NE(first_scenario, std::string::npos);
  EXPECT_LT(attention, first_scenario);
  size_t regression = html.find("row-regressed", attention);
  size_t budget = html.find("row-over-budget", attention);
  size_t error = html.find("row-error", attention);
  size_t inconclusive = html.find("row-inconclusive", attention);
  EXPECT_LT(regression, budget);
  EXPECT_LT(budget, error);
  EXPECT_LT(error, inconclusive);
  EXPECT_LT(inconclusive, first_scenario);
}

TEST_F(ReportTest, HtmlWhySaysWhenNoKernelMetricClearlyGrew) {
  std::string html = HtmlReporter().Render(results_);
  size_t why = html.find("id=\"why\"");
  ASSERT_NE(why, std::string::npos);
  size_t end = html.find("id=\"scenario-0\"");
  std::string part = html.substr(why, end - why);
  // runq p99 55 -> 57 in three noisy repetitions is no cause; max_rss is an outcome.
  EXPECT_NE(part.find("No kernel-side metric of this scenario clearly grew"), std::string::npos) << part;
  EXPECT_EQ(part.find("sched.runq_latency"), std::string::npos);
  EXPECT_EQ(part.find("workload.max_rss"), std::string::npos);
}

TEST(Html, ShowsBaselineAndCandidateDistributionsAndRanksKernelMetrics) {
  RunResults r;
  r.suite = "s";
  r.scenarios.push_back(ScenarioWithBaselineRepetitions());
  CheckResult wall = MakeCheck("workload.wall_time", "value", Verdict::kRegression, {1, 1, 1}, {1.3, 1.3, 1.3}, 30);
  r.scenarios[0].checks.push_back(wall);
  r = Explained(std::move(r));
  std::string html = HtmlReporter().Render(r);
  EXPECT_NE(html.find("sched.runq_latency: baseline vs candidate"), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"distribution of sched.runq_latency\""), std::string::npos);
  EXPECT_NE(html.find("<polygon points="), std::string::npos);          // the baseline's area
  EXPECT_NE(html.find("stroke-dasharray=\"5 3\""), std::string::npos);  // the baseline's CDF
  size_t why = html.find("id=\"why\"");
  ASSERT_NE(why, std::string::npos);
  // Priced first, then the unpriced reclaim count; the noisy run-queue latency is no cause.
  EXPECT_LT(html.find("syscalls.count.per_op", why), html.find("mm.reclaim.count", why));
  EXPECT_EQ(html.find("sched.runq_latency.sum", why), std::string::npos);
  std::string md = MarkdownReporter().Render(r);
  EXPECT_NE(md.find("- camera / workload.wall\\_time.value +30.0%: syscalls.count.per\\_op +1.0%"), std::string::npos)
      << md;
  EXPECT_NE(md.find("; mm.reclaim.count +900.0% (10.0 count \u2192 100 count), not priced"), std::string::npos) << md;
}

TEST_F(ReportTest, HtmlHasProbesChartsAndEnvironment) {
  std::string html = HtmlReporter().Render(results_);
  EXPECT_NE(html.find("<span class=\"attach\">raw_tp</span>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">50.0</td>"), std::string::npos);  // 5000 ns / 100 events
  EXPECT_NE(html.find("<td class=\"num warn\">2</td>"), std::string::npos);
  EXPECT_NE(html.find("cumulative distribution of sched.runq_latency"), std::string::npos);
  EXPECT_NE(html.find("candidate against its budget"), std::string::npos);
  EXPECT_NE(html.find("<tr class=\"differs\"><th>Kernel</th>"), std::string::npos);
}

TEST(Html, StylesheetStylesEveryOutcome) {
  std::string css = HtmlReporter::Stylesheet();
  for (Outcome o :
       {Outcome::kRegressed, Outcome::kOverBudget, Outcome::kInconclusive, Outcome::kImproved, Outcome::kPassed}) {
    EXPECT_NE(css.find(".pill." + Slug(o)), std::string::npos) << Slug(o);
  }
}

// ---- files on disk and external validators ----

}  // namespace
}  // namespace perfgate
