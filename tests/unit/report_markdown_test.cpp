// The Markdown reporter (report/markdown_reporter.h): summary.md's verdict
// line, its tables and its bounds.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/text.h"
#include "report/html_reporter.h"
#include "report/markdown_reporter.h"
#include "report_fixtures.h"

namespace perfgate {
namespace {

using testing::Count;
using testing::Explained;
using testing::HostileResults;
using testing::MakeCheck;
using testing::ReportTest;

TEST_F(ReportTest, MarkdownOpensWithTheVerdictLine) {
  std::string md = MarkdownReporter().Render(results_);
  EXPECT_EQ(md.rfind("**perfgate: ERROR** \u2014 1 regression, 1 over budget, 2 errors, 1 inconclusive, "
                     "1 improvement, 3 passed\n",
                     0),
            0u)
      << md.substr(0, 200);
}

TEST(Markdown, VerdictLineOfARegression) {
  RunResults r = HostileResults();
  r.scenarios.pop_back();
  r.scenarios[0].checks.erase(r.scenarios[0].checks.begin() + 2, r.scenarios[0].checks.end());
  std::string md = MarkdownReporter().Render(r);
  EXPECT_EQ(md.rfind("**perfgate: FAIL** \u2014 1 regression, 0 inconclusive, 1 passed\n", 0), 0u) << md;
}

// A kernel A/B: what differs between the kernels, named in both reports
// (escaped: the names come from probes and workloads).
TEST(Markdown, TwoKernelsGetWhatDiffersBetweenThem) {
  RunResults r = HostileResults();
  r.environment.kernel = "6.12.118+deb12-amd64";
  r.baseline_environment = r.environment;
  r.baseline_environment->kernel = "6.1.0-57-cloud-amd64";
  r.scenarios[0].kernel_differences.push_back(KernelShift{.metric = "syscalls.time.<mmap>",
                                                          .statistic = "per_op",
                                                          .unit = "ns/op",
                                                          .baseline_median = 2000,
                                                          .candidate_median = 1400,
                                                          .change_pct = -30});
  const std::string md = MarkdownReporter().Render(r);
  EXPECT_NE(md.find("**What differs between the kernels** (6.1.0-57-cloud-amd64 \u2192 6.12.118+deb12-amd64"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("syscalls.time.&lt;mmap&gt;.per\\_op -30.0% (2.00 \u00b5s/op \u2192 1.40 \u00b5s/op)"),
            std::string::npos)
      << md;
  const std::string html = HtmlReporter().Render(r);
  EXPECT_NE(html.find("<h2>What differs between the kernels</h2>"), std::string::npos);
  EXPECT_NE(html.find("syscalls.time.&lt;mmap&gt;.per_op"), std::string::npos);
  // One kernel: no such section.
  r.baseline_environment->kernel = r.environment.kernel;
  r.scenarios[0].kernel_differences.clear();
  EXPECT_EQ(MarkdownReporter().Render(r).find("What differs between the kernels"), std::string::npos);
}

TEST_F(ReportTest, MarkdownTablesKeepTheirShapeAndFoldDetailsAway) {
  std::string md = MarkdownReporter().Render(results_);
  // Every table row has exactly the header's 10 unescaped pipes.
  std::istringstream lines(md);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("| ", 0) != 0) continue;
    ++rows;
    int pipes = 0;
    for (size_t i = 0; i < line.size(); ++i) pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    EXPECT_EQ(pipes, 10) << line;
  }
  EXPECT_EQ(rows, 2 + 5 + 9);  // two headers, 5 findings, 9 checks in <details>
  EXPECT_NE(md.find("<details><summary>All 9 checks</summary>"), std::string::npos);
  EXPECT_NE(md.find("</details>"), std::string::npos);
  EXPECT_NE(md.find("fio\\|randread \\*\\_\\[x\\]\\` \"q\""), std::string::npos);
}

TEST(Markdown, StaysUnderOneMebibyteWithFiftyThousandChecks) {
  RunResults r;
  r.suite = "huge";
  ScenarioResult s;
  s.name = "many";
  for (int i = 0; i < 50000; ++i) {
    CheckResult c = MakeCheck("workload.metric_" + std::to_string(i) + std::string(40, '_'), "value",
                              i % 2 ? Verdict::kRegression : Verdict::kInconclusive, {1, 2, 3}, {2, 3, 4}, 50);
    c.message = std::string(200, '*');
    s.checks.push_back(c);
  }
  r.scenarios.push_back(s);
  std::string md = MarkdownReporter().Render(r);
  EXPECT_LT(md.size(), 1024u * 1024u);
  EXPECT_GT(md.size(), 900u * 1024u);  // truncated near the limit, not far below it
  EXPECT_NE(md.find("more lines not shown"), std::string::npos);
  EXPECT_EQ(md.rfind("**perfgate: FAIL**", 0), 0u);

  std::string comment = MarkdownReporter(65536).Render(r);
  EXPECT_LE(comment.size(), 65536u);
  EXPECT_NE(comment.find("more lines not shown"), std::string::npos);
}

TEST_F(ReportTest, MarkdownUnderATinyLimitKeepsTheVerdictLine) {
  results_.scenarios[1].error = std::string(5 << 20, 'e');  // a 5 MiB error message
  results_.environment.kernel = std::string(1 << 20, 'k');
  for (size_t limit : {size_t{200}, size_t{1500}, size_t{4096}}) {
    std::string md = MarkdownReporter(limit).Render(results_);
    EXPECT_LE(md.size(), limit);
    EXPECT_EQ(md.rfind("**perfgate: ERROR**", 0), 0u) << limit << ": " << md;
  }
  EXPECT_LT(MarkdownReporter().Render(results_).size(), 1024u * 1024u);
}

}  // namespace
}  // namespace perfgate
