// The rules of the nightly alerts (history/alerts.h): grouping change points
// per commit range, the states perfgate sets by itself, and what a baseline
// from the history counts as passing.
#include "history/alerts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "history/trend.h"

namespace perfgate {
namespace {

// A series of `n` nightly runs of commits c0, c1, … with change points at `steps`.
TrendSeries Series(const std::string& scenario, const std::string& metric, Better better,
                   const std::vector<std::pair<size_t, double>>& steps, size_t n = 30) {
  TrendSeries t;
  t.series.suite = "nightly";
  t.series.scenario = scenario;
  t.series.metric = metric;
  t.series.statistic = "value";
  t.series.unit = "s";
  t.series.better = better;
  double level = 1.0;
  for (size_t i = 0; i < n; ++i) {
    for (const auto& [at, factor] : steps) {
      if (i == at) {
        t.change_points.push_back({at, level, level * factor, 1e-6});
        level *= factor;
      }
    }
    char ts[64];
    std::snprintf(ts, sizeof ts, "2026-11-%02zuT02:00:00Z", i + 1);
    t.series.points.push_back({static_cast<int64_t>(i + 1), "c" + std::to_string(i), "main", ts, {level}});
    t.medians.push_back(level);
  }
  return t;
}

AlertGroup WithId(AlertGroup g, int64_t id, AlertState state = AlertState::kNew) {
  g.id = id;
  g.state = state;
  return g;
}

TEST(Alerts, GroupsEverySeriesThatMovedAtOneCommitRangeIntoOneGroup) {
  const std::vector<TrendSeries> trends = {
      Series("camera", "workload.wall_time", Better::kLower, {{10, 1.2}}),
      Series("camera", "sched.runq_latency", Better::kLower, {{10, 1.5}, {20, 0.9}}),
      Series("fio", "fio.read.iops", Better::kHigher, {{20, 1.1}}),
  };
  const std::vector<AlertGroup> groups = GroupChangePoints(trends, "main");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].commit_before, "c9");
  EXPECT_EQ(groups[0].commit_after, "c10");
  EXPECT_EQ(groups[0].timestamp_before, "2026-11-10T02:00:00Z");
  EXPECT_EQ(groups[0].branch, "main");
  ASSERT_EQ(groups[0].metrics.size(), 2u);
  EXPECT_EQ(groups[0].metrics[0].metric, "sched.runq_latency");  // sorted by scenario, metric
  EXPECT_TRUE(groups[0].metrics[0].for_the_worse);
  EXPECT_NEAR(groups[0].metrics[1].change_pct, 20, 1e-9);
  ASSERT_EQ(groups[1].metrics.size(), 2u);
  EXPECT_EQ(groups[1].commit_after, "c20");
  // Lower latency and more IOPS: both for the better.
  EXPECT_FALSE(groups[1].metrics[0].for_the_worse);
  EXPECT_FALSE(groups[1].metrics[1].for_the_worse);
}

TEST(Alerts, ExpectedOnlyWhenEverySeriesForTheWorseWasAccepted) {
  const AlertGroup g = GroupChangePoints({Series("camera", "workload.wall_time", Better::kLower, {{10, 1.2}}),
                                          Series("camera", "sched.runq_latency", Better::kLower, {{10, 1.5}})},
                                         "main")[0];
  EXPECT_FALSE(AcceptedInRange(g, {}));
  EXPECT_FALSE(AcceptedInRange(g, {{"camera", "workload.wall_time", "value", "c10"}}));
  EXPECT_FALSE(AcceptedInRange(
      g, {{"other", "workload.wall_time", "value", "c10"}, {"camera", "sched.runq_latency", "p99", "c10"}}));
  // Any statistic of the metric: the check accepted the metric's change.
  EXPECT_TRUE(AcceptedInRange(
      g, {{"camera", "workload.wall_time", "value", "c10"}, {"camera", "sched.runq_latency", "p99", "c10"}}));
  // A group that only improved needs no acceptance and is not expected.
  const AlertGroup better =
      GroupChangePoints({Series("camera", "workload.wall_time", Better::kLower, {{10, 0.8}})}, "")[0];
  EXPECT_FALSE(AcceptedInRange(better, {{"camera", "workload.wall_time", "value", "c10"}}));
}

TEST(Alerts, FixedWhenEverySeriesForTheWorseMovedBackLater) {
  const std::vector<AlertGroup> found =
      GroupChangePoints({Series("camera", "workload.wall_time", Better::kLower, {{10, 1.2}, {20, 0.85}}),
                         Series("camera", "sched.runq_latency", Better::kLower, {{10, 1.5}})},
                        "main");
  ASSERT_EQ(found.size(), 2u);
  std::vector<AlertGroup> groups = {WithId(found[0], 1), WithId(found[1], 2)};
  // runq latency never came back: not fixed.
  EXPECT_FALSE(MovedBack(groups[0], groups));
  const std::vector<AlertGroup> both =
      GroupChangePoints({Series("camera", "workload.wall_time", Better::kLower, {{10, 1.2}, {20, 0.85}}),
                         Series("camera", "sched.runq_latency", Better::kLower, {{10, 1.5}, {25, 0.7}})},
                        "main");
  groups = {WithId(both[0], 1), WithId(both[1], 2), WithId(both[2], 3)};
  const AlertGroup* later = nullptr;
  EXPECT_TRUE(MovedBack(groups[0], groups, &later));
  ASSERT_NE(later, nullptr);
  EXPECT_EQ(later->id, 3);  // the last of them moved back there
  // Another branch's change point is not this series moving back.
  groups[1].branch = groups[2].branch = "release";
  EXPECT_FALSE(MovedBack(groups[0], groups));
}

TEST(Alerts, PerfgateSetsExpectedAndFixedButNeverOverrulesAPerson) {
  const std::vector<AlertGroup> found =
      GroupChangePoints({Series("camera", "workload.wall_time", Better::kLower, {{10, 1.2}, {20, 0.8}}),
                         Series("fio", "fio.read.clat", Better::kLower, {{15, 1.3}})},
                        "main");
  ASSERT_EQ(found.size(), 3u);
  auto accepted = [](const AlertGroup& g) {
    return g.commit_after == "c15" ? std::vector<AcceptedCheck>{{"fio", "fio.read.clat", "p99", "c15"}}
                                   : std::vector<AcceptedCheck>{};
  };
  std::vector<AlertTransition> changes =
      AutomaticAlertChanges({WithId(found[0], 1), WithId(found[1], 2), WithId(found[2], 3)}, accepted);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].id, 1);
  EXPECT_EQ(changes[0].update.state, AlertState::kFixed);
  EXPECT_NE(changes[0].update.note.find("alert 3"), std::string::npos) << changes[0].update.note;
  EXPECT_EQ(changes[1].id, 2);
  EXPECT_EQ(changes[1].update.state, AlertState::kExpected);
  EXPECT_EQ(changes[1].update.by, "perfgate");
  EXPECT_EQ(changes[1].update.only_from, std::vector<AlertState>{AlertState::kNew});
  // Acknowledged still becomes fixed; invalid and expected stay what a person made them.
  changes = AutomaticAlertChanges(
      {WithId(found[0], 1, AlertState::kAcknowledged), WithId(found[1], 2, AlertState::kInvalid), WithId(found[2], 3)},
      accepted);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].update.state, AlertState::kFixed);
  changes = AutomaticAlertChanges(
      {WithId(found[0], 1, AlertState::kInvalid), WithId(found[1], 2, AlertState::kFixed), WithId(found[2], 3)},
      accepted);
  EXPECT_TRUE(changes.empty());
}

TEST(Alerts, ANightIsPassingOnlyWhenTheNewestGroupOfEachRegressedMetricIsExpected) {
  const std::vector<AlertGroup> found =
      GroupChangePoints({Series("camera", "workload.wall_time", Better::kLower, {{10, 1.2}, {20, 1.2}}),
                         Series("fio", "fio.read.clat", Better::kLower, {{15, 1.3}})},
                        "main");
  std::vector<AlertGroup> groups = {WithId(found[0], 1, AlertState::kExpected), WithId(found[1], 2),
                                    WithId(found[2], 3)};
  const std::vector<RegressedCheck> wall = {{"camera", "workload.wall_time"}};
  EXPECT_TRUE(OnlyExpectedRegressions(wall, "2026-11-12T02:00:00Z", "main", groups));
  EXPECT_FALSE(OnlyExpectedRegressions(wall, "2026-11-05T02:00:00Z", "main", groups));  // before the step
  // After the second, unexpected step of the same metric: that one decides.
  EXPECT_FALSE(OnlyExpectedRegressions(wall, "2026-11-25T02:00:00Z", "main", groups));
  EXPECT_FALSE(OnlyExpectedRegressions({{"camera", "workload.wall_time"}, {"fio", "fio.read.clat"}},
                                       "2026-11-18T02:00:00Z", "main", groups));
  groups[1].state = AlertState::kExpected;
  EXPECT_TRUE(OnlyExpectedRegressions({{"camera", "workload.wall_time"}, {"fio", "fio.read.clat"}},
                                      "2026-11-18T02:00:00Z", "main", groups));
  EXPECT_FALSE(OnlyExpectedRegressions({{"camera", "workload.wall_time"}}, "2026-11-18T02:00:00Z", "release", groups));
  EXPECT_FALSE(OnlyExpectedRegressions({}, "2026-11-18T02:00:00Z", "main", groups));
}

TEST(Alerts, StatesParseByNameAndBadOnesAreRefused) {
  for (const char* name : {"new", "acknowledged", "expected", "invalid", "fixed"})
    EXPECT_EQ(ToString(*ParseAlertState(name)), name);
  EXPECT_FALSE(ParseAlertState("Fixed"));
  EXPECT_FALSE(ParseAlertState(""));
  EXPECT_EQ(AlertStateNames(), "new, acknowledged, expected, invalid, fixed");
}

TEST(Alerts, BugLinksAreWebAddressesAndNamesHaveNoControlCharacters) {
  EXPECT_NO_THROW(CheckBugLink("https://bugs.example.org/show_bug.cgi?id=12", "--bug"));
  for (const char* bad :
       {"javascript:alert(1)", "https://", "https://a b", "ftp://x", "https://x\"onclick=1", "https://x\n"}) {
    try {
      CheckBugLink(bad, "--bug");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
  EXPECT_NO_THROW(CheckAlertName("Ana Lima", "--owner"));
  EXPECT_THROW(CheckAlertName("", "--by"), Error);
  EXPECT_THROW(CheckAlertName("a\x1b[31m", "--owner"), Error);
}

TEST(Alerts, MarkdownEscapesEverythingStored) {
  AlertGroup g =
      WithId(GroupChangePoints({Series("camera", "workload.wall_time", Better::kLower, {{10, 1.2}})}, "main")[0], 7,
             AlertState::kAcknowledged);
  g.suite = "<script>alert(1)</script>";
  g.owner = "a|b";
  g.metrics[0].scenario = "cam*era";
  g.changes.push_back({1, "2026-11-27T10:00:00Z", "<img src=x>", AlertState::kAcknowledged, "a|b", "", "looking"});
  const std::string md = AlertMarkdown(g, "history.sqlite");
  EXPECT_EQ(md.find("<script>"), std::string::npos) << md;
  EXPECT_EQ(md.find("<img"), std::string::npos) << md;
  EXPECT_EQ(md.find("a|b"), std::string::npos) << md;
  EXPECT_NE(md.find("perfgate alert #7"), std::string::npos) << md;
  EXPECT_NE(md.find("**State:** acknowledged"), std::string::npos) << md;
  EXPECT_NE(md.find("+20.0%"), std::string::npos) << md;
  const nlohmann::json j = AlertToJson(g);
  EXPECT_EQ(j["state"], "acknowledged");
  EXPECT_EQ(j["metrics"][0]["scenario"], "cam*era");
  EXPECT_EQ(j["changes"][0]["by"], "<img src=x>");
}

TEST(Alerts, TheTrendPageShowsEachGroupsStateEscaped) {
  const std::vector<TrendSeries> trends = {Series("camera", "workload.wall_time", Better::kLower, {{10, 1.2}})};
  AlertGroup g = WithId(GroupChangePoints(trends, "main")[0], 7, AlertState::kAcknowledged);
  g.owner = "<script>alert(1)</script>";
  g.bug = "https://bugs.example.org/1?a=1&b=\"2\"";
  std::string html = RenderTrendDashboard(trends, {"h.sqlite", "main", {g}});
  EXPECT_NE(html.find("<span class=\"pill alert-acknowledged\">#7 acknowledged</span>"), std::string::npos);
  // In the alerts table and beside the change point it groups.
  EXPECT_EQ(html.find("#7 acknowledged", html.find("#7 acknowledged") + 1) != std::string::npos, true);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.find("href=\"https://bugs.example.org/1?a=1&amp;b=&quot;2&quot;\""), std::string::npos) << html;
  // A stored bug that is no web address (written by hand) is text, not a link.
  g.bug = "javascript:alert(1)";
  html = RenderTrendDashboard(trends, {"h.sqlite", "main", {g}});
  EXPECT_EQ(html.find("href=\"javascript"), std::string::npos);
  EXPECT_NE(html.find(">javascript:alert(1)<"), std::string::npos);
}

}  // namespace
}  // namespace perfgate
