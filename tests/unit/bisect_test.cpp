// The bisection's search (which commit next, what a skipped commit leaves in
// doubt) and its reports (every string from git and the workloads escaped).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "bisect/bisect_report.h"
#include "bisect/search.h"

namespace perfgate {
namespace {

// Runs a search where the first bad commit is `culprit` and the commits in
// `broken` cannot be judged; returns the suspects and counts the steps.
std::vector<size_t> Bisect(size_t count, size_t culprit, const std::vector<size_t>& broken, int* steps) {
  BisectSearch search(count);
  *steps = 0;
  while (auto next = search.Next()) {
    ++*steps;
    const bool skipped = std::find(broken.begin(), broken.end(), *next) != broken.end();
    search.Record(*next, skipped ? CommitState::kSkipped : *next >= culprit ? CommitState::kBad : CommitState::kGood);
  }
  return search.Suspects();
}

TEST(BisectSearch, FindsEveryCulpritInCeilLog2Steps) {
  for (size_t count : {1u, 2u, 3u, 7u, 8u, 23u, 24u, 100u}) {
    for (size_t culprit = 0; culprit < count; ++culprit) {
      int steps = 0;
      EXPECT_EQ(Bisect(count, culprit, {}, &steps), std::vector<size_t>{culprit}) << count << " " << culprit;
      EXPECT_LE(steps, ExpectedSteps(count)) << count << " " << culprit;
    }
  }
  EXPECT_EQ(ExpectedSteps(1), 0);
  EXPECT_EQ(ExpectedSteps(23), 5);
  EXPECT_EQ(ExpectedSteps(24), 5);
  EXPECT_EQ(ExpectedSteps(32), 5);
  EXPECT_EQ(ExpectedSteps(33), 6);
}

TEST(BisectSearch, TestsTheMiddleFirstAndTheOlderOfTwoMiddles) {
  BisectSearch search(23);
  EXPECT_EQ(search.Next(), 10u);
  BisectSearch two(2);
  EXPECT_EQ(two.Next(), 0u);
}

TEST(BisectSearch, ASkippedCommitIsStepMoreAndItsNeighbourIsTried) {
  int steps = 0;
  // The acceptance test's repository: 23 commits, the slow one at 15, the broken one at 10.
  EXPECT_EQ(Bisect(23, 15, {10}, &steps), std::vector<size_t>{15});
  EXPECT_EQ(steps, 6);
}

TEST(BisectSearch, ASkippedCommitNextToTheCulpritLeavesBothAsSuspects) {
  int steps = 0;
  // Commit 6 cannot be built and 7 is the first bad one: either may be.
  EXPECT_EQ(Bisect(16, 7, {6}, &steps), (std::vector<size_t>{6, 7}));
}

TEST(BisectSearch, StopsWhenOnlySkippedCommitsRemain) {
  int steps = 0;
  EXPECT_EQ(Bisect(4, 3, {0, 1, 2}, &steps), (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(steps, 3);
}

BisectResult HostileResult() {
  const std::string evil = "<script>alert(1)</script> | `x` *y* & \"z\" \x01";
  BisectResult r;
  r.outcome = BisectOutcome::kCulprit;
  r.summary = "first bad commit: " + evil;
  r.repo = "/repo";
  r.suite_file = "suite.json";
  r.checks = {"work/" + evil};
  r.good = {"1111111111111111111111111111111111111111", "good " + evil, evil, "2026-01-01"};
  r.bad = {"2222222222222222222222222222222222222222", "bad " + evil, evil, "2026-01-02"};
  r.range = {r.bad};
  r.expected_steps = 0;
  BisectStep step;
  step.number = 0;
  step.index = 1;
  step.commit = r.bad;
  step.verdict = StepVerdict::kBad;
  step.reason = "regressed: " + evil;
  step.checks.push_back({"work", evil, Verdict::kRegression, "s", 1.0, 1.15, 15.0, 0.001, 12, evil});
  step.why = {evil};
  step.report_dir = "steps/00-\"><a href=x>";
  r.confirmation = step;
  r.suspects = {r.bad};
  r.why = {evil};
  r.culprit_report_dir = step.report_dir;
  return r;
}

TEST(BisectReport, EscapesEveryStringInHtml) {
  const std::string html = BisectHtml(HostileResult());
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("<a href=x>"), std::string::npos);
  EXPECT_EQ(html.find('\x01'), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.find("2222222222222222222222222222222222222222"), std::string::npos);
}

TEST(BisectReport, EscapesEveryStringInMarkdown) {
  const std::string md = BisectMarkdown(HostileResult());
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  // A '|' of a subject cannot open a table cell.
  EXPECT_EQ(md.find(" | `x`"), std::string::npos);
  EXPECT_NE(md.find("2222222222222222222222222222222222222222"), std::string::npos);
  EXPECT_NE(md.find("| endpoints |"), std::string::npos);
}

TEST(BisectReport, JsonCarriesTheCulpritAndEveryStep) {
  const nlohmann::json j = BisectJson(HostileResult());
  EXPECT_EQ(j["outcome"], "culprit");
  EXPECT_EQ(j["culprit"]["sha"], "2222222222222222222222222222222222222222");
  EXPECT_EQ(j["confirmation"]["checks"][0]["change_pct"], 15.0);
  EXPECT_EQ(j["confirmation"]["checks"][0]["repetitions"], 12);
  EXPECT_TRUE(j["steps"].empty());
}

}  // namespace
}  // namespace perfgate
