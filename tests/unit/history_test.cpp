// The history database (schema, migration, transactions, errors), the trend
// dashboard built from it, and the OpenMetrics / Prometheus exposition.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>

#include "base/error.h"
#include "harness/environment.h"
#include "harness/files.h"
#include "harness/history_backends.h"
#include "history/history_db.h"
#include "history/history_store.h"
#include "history/openmetrics.h"
#include "history/pushgateway.h"
#include "history/trend.h"

namespace perfgate {
namespace {

namespace fs = std::filesystem;

const std::string kScript = "<script>alert(1)</script>";

using TempDir = testing::ScratchDir;

// A run of suite "nightly" whose wall time is `wall_s` (three repetitions
// around it) and whose runqueue latency histogram has one sample.
RunResults SampleRun(const std::string& timestamp, double wall_s, const std::string& scenario = "camera") {
  RunResults r;
  r.suite = "nightly";
  r.environment.timestamp = timestamp;
  r.environment.hostname = "runner";
  ScenarioResult s;
  s.name = scenario;
  for (int i = 0; i < 3; ++i) {
    Repetition rep;
    rep.index = i;
    rep.metrics["workload.wall_time"] = ScalarMetric("workload.wall_time", wall_s * (1 + 0.001 * i), "s");
    LogLinearHistogram h;
    h.Record(1000 + i);
    rep.metrics["sched.runq_latency"] = HistogramMetric("sched.runq_latency", "ns", h, 1.0);
    rep.metrics["sched.switches"] = CounterMetric("sched.switches", "count", 100, 2.0);
    s.repetitions.push_back(rep);
  }
  CheckResult c;
  c.spec.name = "wall";
  c.spec.metric = "workload.wall_time";
  c.statistic = "value";
  c.verdict = Verdict::kPass;
  s.checks.push_back(c);
  r.scenarios.push_back(s);
  return r;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::to_string(static_cast<int>(e.code())) + " " + e.what();
  }
  return "no error";
}

// Every test of the history database runs on both backends.
class History : public ::testing::TestWithParam<testing::HistoryBackend> {
 protected:
  void SetUp() override {
    PERFGATE_REQUIRE_HISTORY_BACKEND(GetParam());
    history_ = std::make_unique<testing::TestHistory>(GetParam());
  }
  const std::string& location() const { return history_->location(); }
  // How the history names itself in messages: for PostgreSQL, its URL.
  std::string name() const { return DisplayLocation(location()); }
  testing::TestHistory& h() { return *history_; }

 private:
  std::unique_ptr<testing::TestHistory> history_;
};
INSTANTIATE_TEST_SUITE_P(Backends, History,
                         ::testing::Values(testing::HistoryBackend::kSqlite, testing::HistoryBackend::kPostgres),
                         testing::BackendName);

TEST_P(History, CreatesTheCurrentSchemaAndStoresEveryStatistic) {
  HistoryDb db = HistoryDb::Open(location());
  EXPECT_EQ(db.SchemaVersion(), kHistorySchemaVersion);
  EXPECT_TRUE(db.AddRun(SampleRun("2024-05-01T00:00:00Z", 1.0), {"abc", "main"}));
  EXPECT_EQ(db.RunCount(), 1);
  // 3 repetitions x (1 scalar statistic + 7 histogram statistics + 2 counter statistics without ops).
  EXPECT_EQ(h().Count("metric_values"), 3 * (1 + 7 + 2));
  EXPECT_EQ(h().Count("check_results"), 1);
  EXPECT_EQ(h().Count("scenario_results"), 1);  // the scenario whole, for baselines
}

TEST_P(History, TrendChangePointsReplaceThoseOfTheSameSeriesAndBranch) {
  HistoryDb db = HistoryDb::Open(location());
  db.ReplaceChangePoints(
      {{"nightly", "camera", "workload.wall_time", "value", "", {{"c1", "c2", "t2", 12.5, 1e-5, true}}},
       {"nightly", "camera", "workload.wall_time", "value", "main", {}}});
  db.ReplaceChangePoints(
      {{"nightly", "camera", "workload.wall_time", "value", "", {{"c3", "c4", "t4", -5, 1e-6, false}}}});
  const std::vector<SeriesChangePoints> stored = db.ChangePoints();
  ASSERT_EQ(stored.size(), 1u);
  ASSERT_EQ(stored[0].change_points.size(), 1u);
  EXPECT_EQ(stored[0].change_points[0].commit_after, "c4");
  EXPECT_DOUBLE_EQ(stored[0].change_points[0].change_pct, -5);
  EXPECT_FALSE(stored[0].change_points[0].for_the_worse);
}

TEST(HistorySchema, EachVersionHasOneMigrationInEachDialect) {
  EXPECT_EQ(HistoryMigrations().size(), static_cast<size_t>(kHistorySchemaVersion));
  const std::regex ddl("(CREATE|ALTER) (TABLE|INDEX)");
  for (const HistoryMigration& m : HistoryMigrations()) {
    EXPECT_TRUE(std::regex_search(m.sqlite, ddl)) << m.sqlite;
    EXPECT_TRUE(std::regex_search(m.postgres, ddl)) << m.postgres;
  }
}

TEST_P(History, AddingTheSameRunTwiceStoresItOnce) {
  HistoryDb db = HistoryDb::Open(location());
  EXPECT_TRUE(db.AddRun(SampleRun("2024-05-01T00:00:00Z", 1.0), {"abc", "main"}));
  EXPECT_FALSE(db.AddRun(SampleRun("2024-05-01T00:00:00Z", 1.0), {"abc", "main"}));
  EXPECT_TRUE(db.AddRun(SampleRun("2024-05-01T00:00:00Z", 1.0), {"abc", "release"}));
  EXPECT_EQ(db.RunCount(), 2);
}

TEST_P(History, SeriesAreOrderedByRunTimeAndFilteredByBranchAndSuite) {
  HistoryDb db = HistoryDb::Open(location());
  db.AddRun(SampleRun("2024-05-03T00:00:00Z", 3.0), {"c3", "main"});
  db.AddRun(SampleRun("2024-05-01T00:00:00Z", 1.0), {"c1", "main"});
  db.AddRun(SampleRun("2024-05-02T00:00:00Z", 2.0), {"c2", "feature"});
  std::vector<HistorySeries> all = db.Series({"", {"value"}, ""});
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].metric, "workload.wall_time");
  EXPECT_EQ(all[0].unit, "s");
  ASSERT_EQ(all[0].points.size(), 3u);
  EXPECT_EQ(all[0].points[0].commit, "c1");
  EXPECT_EQ(all[0].points[1].commit, "c2");
  EXPECT_EQ(all[0].points[2].values.size(), 3u);
  EXPECT_DOUBLE_EQ(all[0].points[2].values[1], 3.0 * 1.001);
  std::vector<HistorySeries> main = db.Series({"main", {"value", "p99"}, ""});
  ASSERT_EQ(main.size(), 2u);
  EXPECT_EQ(main[0].points.size(), 2u);
  EXPECT_EQ(db.Series({"", {"value"}, "nightly"}).size(), 1u);
  EXPECT_TRUE(db.Series({"", {"value"}, "presubmit"}).empty());
}

TEST_P(History, SeriesOfInterleavedSuitesStayApartEachInTimeOrder) {
  HistoryDb db = HistoryDb::Open(location());
  // Added out of time order, the suites' runs between each other, and the
  // wall time's unit changed (ms, then s) between the oldest run and the rest.
  const std::vector<std::tuple<std::string, std::string, double>> runs = {{"nightly", "2024-05-03T00:00:00Z", 3.0},
                                                                          {"presubmit", "2024-05-02T00:00:00Z", 20.0},
                                                                          {"nightly", "2024-05-01T00:00:00Z", 1.0},
                                                                          {"presubmit", "2024-05-01T00:00:00Z", 10.0},
                                                                          {"nightly", "2024-05-02T00:00:00Z", 2.0}};
  int commit = 0;
  for (const auto& [suite, timestamp, wall] : runs) {
    RunResults r = SampleRun(timestamp, wall, "camera");
    r.suite = suite;
    if (timestamp == "2024-05-01T00:00:00Z" && suite == "nightly")
      for (Repetition& rep : r.scenarios[0].repetitions) rep.metrics["workload.wall_time"].unit = "ms";
    ASSERT_TRUE(db.AddRun(r, {"c" + std::to_string(++commit), "main"}));
  }
  const std::vector<HistorySeries> all = db.Series({"", {"value"}, ""});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].suite, "nightly");
  EXPECT_EQ(all[0].unit, "ms");  // the oldest run's
  ASSERT_EQ(all[0].points.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(all[0].points[i].timestamp, "2024-05-0" + std::to_string(i + 1) + "T00:00:00Z");
    ASSERT_EQ(all[0].points[i].values.size(), 3u);
    for (size_t rep = 0; rep < 3; ++rep)
      EXPECT_DOUBLE_EQ(all[0].points[i].values[rep], (1.0 + static_cast<double>(i)) * (1 + 0.001 * rep));
  }
  EXPECT_EQ(all[1].suite, "presubmit");
  EXPECT_EQ(all[1].unit, "s");
  ASSERT_EQ(all[1].points.size(), 2u);
  EXPECT_EQ(all[1].points[0].commit, "c4");
  EXPECT_DOUBLE_EQ(all[1].points[1].values[0], 20.0);
}

TEST_P(History, TheLastRunIsTheNewestByRunTimeOfItsBranchAndSuite) {
  HistoryDb db = HistoryDb::Open(location());
  EXPECT_FALSE(db.LastRun("", "main"));
  db.AddRun(SampleRun("2024-05-02T00:00:00Z", 2.0), {"c2", "main"});
  db.AddRun(SampleRun("2024-05-01T00:00:00Z", 1.0), {"c1", "main"});  // added later, measured earlier
  db.AddRun(SampleRun("2024-05-03T00:00:00Z", 3.0), {"c3", "feature"});
  RunResults other = SampleRun("2024-05-04T00:00:00Z", 4.0);
  other.suite = "presubmit";
  db.AddRun(other, {"c4", "main"});
  EXPECT_EQ(db.LastRun("nightly", "main")->environment.git_commit, "c2");
  EXPECT_EQ(db.LastRun("", "main")->environment.git_commit, "c4");
  EXPECT_EQ(db.LastRun("nightly", "")->environment.git_commit, "c3");
  EXPECT_FALSE(db.LastRun("nightly", "release"));
  EXPECT_FALSE(db.LastRun("gone", ""));
}

TEST_P(History, TheRunsOfSeveralScenariosAndTheirResultsAreReadAtOnce) {
  HistoryDb db = HistoryDb::Open(location());
  RunResults both = SampleRun("2024-05-02T00:00:00Z", 2.0, "camera");
  both.scenarios.push_back(SampleRun("2024-05-02T00:00:00Z", 5.0, "fio").scenarios[0]);
  db.AddRun(SampleRun("2024-05-01T00:00:00Z", 1.0, "camera"), {"c1", "main"});
  db.AddRun(both, {"c2", "main"});
  db.AddRun(SampleRun("2024-05-03T00:00:00Z", 3.0, "camera"), {"c3", "feature"});
  const auto runs = db.RunHeadersByScenario("nightly", {"camera", "fio", "gone"}, "main");
  ASSERT_EQ(runs.size(), 3u);
  for (const auto& [scenario, of] : runs) {
    ASSERT_EQ(of.size(), 2u) << scenario;
    EXPECT_EQ(of[0].environment.git_commit, "c2");  // newest first, only main
    EXPECT_EQ(of[1].environment.git_commit, "c1");
    EXPECT_EQ(of[0].has_scenario, scenario != "gone") << scenario;
    EXPECT_EQ(of[1].has_scenario, scenario == "camera") << scenario;
    EXPECT_FALSE(of[0].scenario.has_value());
  }
  EXPECT_EQ(db.RunHeadersByScenario("nightly", {"camera"}, "main", 1).at("camera").size(), 1u);
  const std::map<std::string, ScenarioResult> loaded =
      db.LoadScenarios(runs.at("fio")[0].run_id, {"camera", "fio", "gone"});
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_DOUBLE_EQ(loaded.at("fio").repetitions.at(0).metrics.at("workload.wall_time").value, 5.0);
  EXPECT_DOUBLE_EQ(loaded.at("camera").repetitions.at(0).metrics.at("workload.wall_time").value, 2.0);
  EXPECT_TRUE(db.LoadScenarios(runs.at("fio")[1].run_id, {"fio"}).empty());
}

TEST_P(History, MigratesAVersionOneDatabaseKeepingItsRuns) {
  {
    HistoryDb db = HistoryDb::Open(location());
    db.AddRun(SampleRun("2024-05-01T00:00:00Z", 1.0), {"abc", "main"});
  }
  // What a perfgate of schema version 1 left: no check_results table, no results kept whole.
  if (h().postgres()) {
    h().Sql(
        "DROP TABLE alert_changes; DROP TABLE alert_metrics; DROP TABLE alert_groups; DROP TABLE change_points; "
        "DROP TABLE check_results; DROP TABLE scenario_results; DROP INDEX "
        "runs_suite_time; ALTER TABLE runs DROP COLUMN kept_whole; ALTER TABLE runs DROP COLUMN reference_commit; "
        "UPDATE perfgate_schema SET version = 1;");
  } else {
    h().Sql(
        "DROP TABLE alert_changes; DROP TABLE alert_metrics; DROP TABLE alert_groups; DROP TABLE change_points; "
        "DROP TABLE check_results; DROP TABLE scenario_results; ALTER TABLE runs DROP "
        "COLUMN kept_whole; ALTER TABLE runs DROP COLUMN reference_commit; PRAGMA user_version = 1;");
  }
  HistoryDb db = HistoryDb::Open(location());
  EXPECT_EQ(db.SchemaVersion(), kHistorySchemaVersion);
  EXPECT_EQ(db.RunCount(), 1);
  EXPECT_TRUE(db.AddRun(SampleRun("2024-05-02T00:00:00Z", 1.0), {"def", "main"}));
  EXPECT_EQ(h().Count("check_results"), 1);
}

// A paired night (ci/nightly.sh): the commit it ran against and each check's
// change with its interval, beside the absolute values; kept by a copy.
TEST_P(History, APairedRunKeepsItsReferenceAndEachChecksInterval) {
  RunResults paired = SampleRun("2024-05-03T00:00:00Z", 1.0);
  CheckResult& c = paired.scenarios[0].checks[0];
  c.baseline_values = {0.97, 0.98};
  c.change_pct = 2.5;
  c.change_ci_low_pct = 1.0;
  c.change_ci_high_pct = 4.0;
  HistoryDb db = HistoryDb::Open(location());
  ASSERT_TRUE(db.AddRun(SampleRun("2024-05-02T00:00:00Z", 1.0), {"night1", "main"}));
  ASSERT_TRUE(db.AddRun(paired, {"night2", "main", "night1"}));
  EXPECT_EQ(h().Sql("SELECT reference_commit FROM runs WHERE commit_sha = 'night2'"), "night1");
  EXPECT_EQ(h().Sql("SELECT reference_commit FROM runs WHERE commit_sha = 'night1'"), "");
  std::vector<StoredRun> runs;
  db.ForEachStoredRun([&](const StoredRun& r) { runs.push_back(r); });
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].reference_commit, "night1");
  ASSERT_EQ(runs[1].checks.size(), 1u);
  EXPECT_EQ(runs[1].checks[0].change_pct, 2.5);
  EXPECT_EQ(runs[1].checks[0].change_low_pct, 1.0);
  EXPECT_EQ(runs[1].checks[0].change_high_pct, 4.0);
  EXPECT_FALSE(runs[0].checks[0].change_low_pct.has_value());
  // The series carry the paired change beside the absolute values; the trend page shows both.
  const std::vector<HistorySeries> series = db.Series({"main", {"value"}, ""});
  const auto wall = std::find_if(series.begin(), series.end(),
                                 [](const HistorySeries& s) { return s.metric == "workload.wall_time"; });
  ASSERT_NE(wall, series.end());
  ASSERT_EQ(wall->points.size(), 2u);
  EXPECT_FALSE(wall->points[0].paired.has_value());
  ASSERT_TRUE(wall->points[1].paired.has_value());
  EXPECT_EQ(wall->points[1].paired->reference, "night1");
  EXPECT_EQ(wall->points[1].paired->change_pct, 2.5);
  EXPECT_EQ(wall->points[1].paired->high_pct, 4.0);
  const std::string page = RenderTrendDashboard(AnalyzeTrends(series, {}), {"h", "main", {}});
  EXPECT_NE(page.find("paired with night1: +2.5"), std::string::npos);
  testing::TestHistory other(GetParam());
  HistoryDb copy = HistoryDb::Open(other.location());
  for (const StoredRun& r : runs) copy.AddStoredRun(r);
  EXPECT_EQ(other.Sql("SELECT reference_commit FROM runs WHERE commit_sha = 'night2'"), "night1");
  EXPECT_EQ(std::stod(other.Sql("SELECT change_high_pct FROM check_results WHERE change_high_pct IS NOT NULL")), 4.0);
}

TEST_P(History, RefusesANewerSchemaAndAForeignDatabase) {
  if (h().postgres()) {
    HistoryDb::Open(location());
    h().Sql("UPDATE perfgate_schema SET version = 99");
  } else {
    h().Sql("PRAGMA user_version = 99;");
  }
  EXPECT_EQ(ErrorOf([&] { HistoryDb::Open(location()); }).rfind("2 " + name() + ": history schema version 99", 0), 0u);

  testing::TestHistory foreign(GetParam());
  foreign.Sql("CREATE TABLE t (x integer);");
  EXPECT_EQ(ErrorOf([&] { HistoryDb::Open(foreign.location()); }),
            "2 " + DisplayLocation(foreign.location()) +
                (foreign.postgres() ? ": a PostgreSQL database, but not a perfgate history (it has tables of its own)"
                                    : ": an SQLite database, but not a perfgate history"));
  EXPECT_EQ(foreign.Count("t"), 0);
}

TEST(HistoryDb, RefusesAFileThatIsNoDatabaseAndAMissingOne) {
  TempDir dir;
  std::string text = dir / "text.sqlite";
  std::ofstream(text) << "this is not a database, not even close, but long enough to have a header page\n";
  EXPECT_EQ(ErrorOf([&] { HistoryDb::Open(text); }).rfind("2 " + text + ": ", 0), 0u);

  EXPECT_EQ(ErrorOf([&] { HistoryDb::OpenExisting(dir / "missing.sqlite"); }).rfind("2 ", 0), 0u);
  EXPECT_FALSE(fs::exists(dir / "missing.sqlite"));
}

TEST_P(History, RefusesPartialRunsAndEmptyIdentityStoringNothing) {
  HistoryDb db = HistoryDb::Open(location());
  RunResults partial = SampleRun("2024-05-01T00:00:00Z", 1.0);
  partial.partial = true;
  EXPECT_EQ(ErrorOf([&] { db.AddRun(partial, {"abc", "main"}); }).rfind("2 ", 0), 0u);
  EXPECT_EQ(ErrorOf([&] { db.AddRun(SampleRun("t", 1.0), {"", "main"}); }).rfind("2 --commit", 0), 0u);
  EXPECT_EQ(ErrorOf([&] { db.AddRun(SampleRun("t", 1.0), {"abc", ""}); }).rfind("2 --branch", 0), 0u);
  EXPECT_EQ(db.RunCount(), 0);
}

TEST_P(History, AFailedAddRollsBackTheWholeRun) {
  HistoryDb db = HistoryDb::Open(location());
  // Make the check insert fail after the run and its values were inserted.
  if (h().postgres()) {
    h().Sql(
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused' "
        "USING ERRCODE = '23514'; END $$; CREATE TRIGGER no_checks BEFORE INSERT ON check_results FOR EACH ROW "
        "EXECUTE FUNCTION refuse();");
  } else {
    h().Sql("CREATE TRIGGER no_checks BEFORE INSERT ON check_results BEGIN SELECT RAISE(ABORT, 'refused'); END;");
  }
  const std::string error = ErrorOf([&] { db.AddRun(SampleRun("2024-05-01T00:00:00Z", 1.0), {"abc", "main"}); });
  EXPECT_EQ(error.rfind("2 " + name() + ": refused", 0), 0u) << error;
  EXPECT_EQ(h().Count("runs"), 0);
  EXPECT_EQ(h().Count("metric_values"), 0);
  EXPECT_EQ(h().Count("scenario_results"), 0);
  // The history is still usable after the failure.
  h().Sql("DROP TRIGGER no_checks" + std::string(h().postgres() ? " ON check_results" : ""));
  EXPECT_TRUE(db.AddRun(SampleRun("2024-05-01T00:00:00Z", 1.0), {"abc", "main"}));
}

std::vector<TrendSeries> PlantedTrend(const std::string& scenario) {
  std::vector<HistorySeries> series(1);
  HistorySeries& s = series[0];
  s.suite = "nightly";
  s.scenario = scenario;
  s.metric = "workload.wall_time";
  s.statistic = "value";
  s.unit = "s";
  for (int i = 0; i < 30; ++i) {
    double level = i < 18 ? 1.0 : 1.2;
    double wiggle = 0.002 * ((i * 7) % 5 - 2);
    s.points.push_back({i + 1,
                        "commit" + std::to_string(i) + kScript,
                        "main",
                        "2024-05-" + std::to_string(10 + i),
                        {level + wiggle, level + wiggle * 2, level}});
  }
  return AnalyzeTrends(series, {});
}

TEST(Trend, FindsThePlantedChangeAndCallsItARegression) {
  std::vector<TrendSeries> trends = PlantedTrend("camera");
  ASSERT_EQ(trends[0].change_points.size(), 1u);
  EXPECT_EQ(trends[0].change_points[0].index, 18u);
  EXPECT_TRUE(IsRegression(trends[0], trends[0].change_points[0]));
  trends[0].series.better = Better::kHigher;
  EXPECT_FALSE(IsRegression(trends[0], trends[0].change_points[0]));
}

TEST(Trend, ManySeriesAnalyzedAtOnceEachGetTheirOwnChangePoints) {
  // Enough series to be shared out among threads, each with its step elsewhere.
  std::vector<HistorySeries> series(300);
  for (size_t k = 0; k < series.size(); ++k) {
    series[k].scenario = "s" + std::to_string(k);
    const size_t step = 10 + k % 20;
    for (size_t i = 0; i < 40; ++i) {
      const double level = i < step ? 1.0 : 1.5 + 0.01 * static_cast<double>(k % 7);
      series[k].points.push_back({static_cast<int64_t>(i), "c", "main", "t", {level, level + 0.001, level - 0.001}});
    }
  }
  const std::vector<TrendSeries> trends = AnalyzeTrends(series, {});
  ASSERT_EQ(trends.size(), series.size());
  for (size_t k = 0; k < series.size(); ++k) {
    EXPECT_EQ(trends[k].series.scenario, series[k].scenario);
    std::vector<double> medians;
    for (const HistoryPoint& p : series[k].points) medians.push_back(p.values[0]);
    EXPECT_EQ(trends[k].medians, medians);
    const std::vector<stats::ChangePoint> alone = stats::FindChangePoints(medians, {});
    ASSERT_EQ(trends[k].change_points.size(), alone.size()) << k;
    ASSERT_EQ(alone.size(), 1u) << k;
    EXPECT_EQ(trends[k].change_points[0].index, 10 + k % 20);
    EXPECT_EQ(trends[k].change_points[0].p_value, alone[0].p_value);
  }
}

TEST(Trend, DashboardIsEscapedScriptFreeAndStyleFree) {
  std::string html = RenderTrendDashboard(PlantedTrend("cam " + kScript + " \"q\" 'a'"), {"h.sqlite", "main", {}});
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("style="), std::string::npos);
  EXPECT_EQ(html.find("<style"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.find("href=\"report.css\""), std::string::npos);
  EXPECT_NE(html.find("href=\"trend.css\""), std::string::npos);
  // The change point: in the table with its commit range, and dashed on the chart.
  EXPECT_NE(html.find("<code>commit17&lt;scr..commit18&lt;scr</code>"), std::string::npos) << html;
  EXPECT_NE(html.find("stroke-dasharray"), std::string::npos);
  EXPECT_NE(html.find("+20.0%"), std::string::npos);
  EXPECT_EQ(html.find("on"
                      "load"),
            std::string::npos);
}

// Within a scenario the page opens on what moved, then the workload's own
// numbers, the kernel's, and the host's noise last; not alphabetically.
TEST(Trend, ChartsGoWhatMovedFirstThenWorkloadKernelHost) {
  std::vector<HistorySeries> series;
  for (const char* metric :
       {"host.cpu_pressure", "sched.runq_latency", "workload.wall_time", "mm.page_alloc", "zz.moved"}) {
    HistorySeries s;
    s.suite = "suite";
    s.scenario = "cam";
    s.metric = metric;
    s.statistic = "value";
    for (size_t i = 0; i < 30; ++i) {
      const double level = std::string(metric) == "zz.moved" && i >= 15 ? 2.0 : 1.0;
      s.points.push_back(
          {static_cast<int64_t>(i), "c" + std::to_string(i), "main", "t", {level, level * 1.001, level * 0.999}});
    }
    series.push_back(std::move(s));
  }
  TrendPage page{"h.sqlite", "main", {}};
  page.role_of = [](std::string_view metric) {
    if (metric.starts_with("host.")) return MetricRole::kHost;
    if (metric.starts_with("sched.") || metric.starts_with("mm.")) return MetricRole::kKernel;
    return MetricRole::kOutcome;
  };
  const std::string html = RenderTrendDashboard(AnalyzeTrends(series, {}), page);
  std::vector<size_t> at;
  for (const char* metric :
       {"zz.moved", "workload.wall_time", "sched.runq_latency", "mm.page_alloc", "host.cpu_pressure"})
    at.push_back(html.find("<figcaption>" + std::string(metric)));
  for (size_t i = 0; i < at.size(); ++i) ASSERT_NE(at[i], std::string::npos) << i;
  // sched before mm: kernel series keep the order they came in.
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << ::testing::PrintToString(at);
}

TEST(Trend, EmptyHistoryRendersAPage) {
  std::string html = RenderTrendDashboard({}, {"h.sqlite", "", {}});
  EXPECT_NE(html.find("no runs yet"), std::string::npos);
}

TEST(Trend, WritesTheDashboardAndItsStylesheets) {
  TempDir dir;
  WriteTrendDashboard(PlantedTrend("camera"), {"h.sqlite", "", {}}, dir / "out/trend");
  for (const char* f : {"index.html", "report.css", "trend.css"})
    EXPECT_TRUE(fs::exists(dir / ("out/trend/" + std::string(f)))) << f;
}

TEST(OpenMetrics, NamesUnitsLabelsAndEof) {
  RunResults r = SampleRun("t", 1.5, "cam\"era\\\nx");
  std::string text = RenderMetrics(r, ExpositionFormat::kOpenMetrics);
  EXPECT_NE(text.find("# TYPE perfgate_workload_wall_time_value_seconds gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# UNIT perfgate_workload_wall_time_value_seconds seconds\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# HELP perfgate_workload_wall_time_value_seconds "), std::string::npos) << text;
  EXPECT_NE(text.find("perfgate_workload_wall_time_value_seconds{suite=\"nightly\",scenario=\"cam\\\"era\\\\\\nx\","
                      "host=\"runner\"} 1.501"),
            std::string::npos)
      << text;
  // Histogram statistics in ns become seconds.
  EXPECT_NE(text.find("perfgate_sched_runq_latency_p99_9_seconds{"), std::string::npos) << text;
  EXPECT_NE(text.find("perfgate_sched_switches_rate{"), std::string::npos) << text;
  EXPECT_NE(text.find("perfgate_check_failed{suite=\"nightly\",scenario="), std::string::npos) << text;
  EXPECT_NE(text.find("perfgate_exit_code{suite=\"nightly\",host=\"runner\"} 0\n"), std::string::npos) << text;
  ASSERT_GE(text.size(), 6u);
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
  // Every sample line: name{labels} value.
  std::regex sample(R"(^[a-zA-Z_:][a-zA-Z0-9_:]*\{[^\n]*\} \S+$)");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#", 0) == 0) continue;
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
  }
}

using testing::RunningInCi;

// Runs python3 `script` with `file` as its argument; its output, and whether it exited 0.
std::pair<bool, std::string> RunPython(const std::string& script, const std::string& file) {
  setenv("PERFGATE_PY", script.c_str(), 1);
  FILE* pipe = popen(("/usr/bin/python3 -c \"$PERFGATE_PY\" '" + file + "' 2>&1").c_str(), "r");
  std::string output;
  char buffer[512];
  while (pipe && fgets(buffer, sizeof buffer, pipe)) output += buffer;
  int status = pipe ? pclose(pipe) : -1;
  return {WIFEXITED(status) && WEXITSTATUS(status) == 0, output};
}

// The Python Prometheus client's parsers (python3-prometheus-client): the
// OpenMetrics one is strict about names, UNIT suffixes, escaping and # EOF.
TEST(OpenMetrics, ThePrometheusClientParsersReadBothFormats) {
  if (!RunPython("import prometheus_client", "").first) {
    if (RunningInCi()) FAIL() << "python3-prometheus-client is missing (CI=true)";
    GTEST_SKIP() << "python3-prometheus-client is not installed";
  }
  TempDir dir;
  RunResults r = SampleRun("t", 1.5, "cam\"era\\\n" + kScript);
  r.scenarios[0].checks.push_back(r.scenarios[0].checks[0]);  // two checks named alike
  for (auto [format, parser] : {std::pair{ExpositionFormat::kOpenMetrics, "prometheus_client.openmetrics.parser"},
                                std::pair{ExpositionFormat::kPrometheus, "prometheus_client.parser"}}) {
    std::string file = dir / "metrics.txt";
    std::ofstream(file) << RenderMetrics(r, format);
    auto [ok, output] = RunPython(std::string("import sys, ") + parser +
                                      " as p\n"
                                      "families = list(p.text_string_to_metric_families(open(sys.argv[1]).read()))\n"
                                      "print(len(families), sum(len(f.samples) for f in families))\n",
                                  file);
    ASSERT_TRUE(ok) << parser << ": " << output;
    // 10 metric statistics, check_failed (two checks) and exit_code.
    EXPECT_EQ(output, "12 13\n") << parser;
  }
}

TEST(OpenMetrics, PrometheusTextHasNoUnitOrEofLines) {
  std::string text = RenderMetrics(SampleRun("t", 1.5), ExpositionFormat::kPrometheus);
  EXPECT_EQ(text.find("# UNIT"), std::string::npos);
  EXPECT_EQ(text.find("# EOF"), std::string::npos);
  EXPECT_NE(text.find("# TYPE perfgate_workload_wall_time_value_seconds gauge"), std::string::npos);
}

TEST(OpenMetrics, NamesAndLabelValuesAreSanitized) {
  EXPECT_EQ(MetricFamilyName("fio.job-1.read.clat_p99.9"), "fio_job_1_read_clat_p99_9");
  EXPECT_EQ(MetricFamilyName("9lives"), "_9lives");
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(Pushgateway, ParsesUrlsAndBuildsTheGroupingPath) {
  HttpUrl u = ParseHttpUrl("http://push.example:9091/prefix/");
  EXPECT_EQ(u.host, "push.example");
  EXPECT_EQ(u.port, "9091");
  EXPECT_EQ(u.path, "/prefix");
  EXPECT_EQ(ParseHttpUrl("http://[::1]:9091").host, "::1");
  EXPECT_EQ(ParseHttpUrl("http://localhost").port, "80");
  for (const char* bad : {"https://x", "x:9091", "http://", "http://h:port", "http://u@h:1"}) {
    EXPECT_THROW(ParseHttpUrl(bad), Error) << bad;
  }
  EXPECT_EQ(Base64Url("a/b"), "YS9i");
  EXPECT_EQ(Base64Url("ab?"), "YWI_");
  EXPECT_EQ(Base64Url("nightly"), "bmlnaHRseQ==");
  EXPECT_EQ(PushPath("nightly", "camera-cold_1.x", "runner-1"),
            "/metrics/job/perfgate/suite/nightly/scenario/camera-cold_1.x/host/runner-1");
  EXPECT_EQ(PushPath("nightly/arm64", "a b", ""),
            "/metrics/job/perfgate/suite@base64/bmlnaHRseS9hcm02NA==/scenario@base64/YSBi/host@base64/=");
  EXPECT_EQ(GroupingSegment("scenario", ""), "scenario@base64/=");
  EXPECT_EQ(GroupingSegment("scenario", ".."), "scenario@base64/Li4=");
  EXPECT_EQ(GroupingSegment("suite", "ab?"), "suite@base64/YWI_");
}

TEST(OpenMetrics, AScenarioGroupHoldsOnlyThatScenarioAndTheExitCode) {
  RunResults r = SampleRun("t", 1.5);
  r.scenarios.push_back(SampleRun("t", 2.5, "fio").scenarios[0]);
  r.exit_code = 1;
  std::string text = RenderScenarioMetrics(r, 1, ExpositionFormat::kPrometheus);
  EXPECT_NE(
      text.find("perfgate_workload_wall_time_value_seconds{suite=\"nightly\",scenario=\"fio\",host=\"runner\"} 2.50"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("camera"), std::string::npos) << text;
  EXPECT_NE(text.find("perfgate_exit_code{suite=\"nightly\",scenario=\"fio\",host=\"runner\"} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("perfgate_check_failed{suite=\"nightly\",scenario=\"fio\",host=\"runner\",check=\"wall\""),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("# EOF"), std::string::npos);
  EXPECT_THROW(RenderScenarioMetrics(r, 2, ExpositionFormat::kPrometheus), std::out_of_range);
}

TEST(OpenMetrics, EachAttachedProbesCostIsExportedWithItsName) {
  RunResults r = SampleRun("t", 1.5);
  ProbeReport runqlat;
  runqlat.name = "runqlat";
  runqlat.run_count = 4000;
  runqlat.run_time_ns = 2000000;
  runqlat.workload_cpu_ns = 400000000;
  runqlat.drops = 3;
  ProbeReport off;  // not attached: it cost nothing and is not a series
  off.name = "biolat";
  off.not_attached = "no block device";
  r.scenarios[0].probes = {runqlat, off};
  std::string text = RenderMetrics(r, ExpositionFormat::kOpenMetrics);
  const std::string labels = "{suite=\"nightly\",scenario=\"camera\",host=\"runner\",probe=\"runqlat\"}";
  EXPECT_NE(text.find("perfgate_probe_events" + labels + " 4000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# UNIT perfgate_probe_run_time_seconds seconds\n"), std::string::npos) << text;
  EXPECT_NE(text.find("perfgate_probe_run_time_seconds" + labels + " 0.002\n"), std::string::npos) << text;
  EXPECT_NE(text.find("perfgate_probe_cpu_share" + labels + " 0.005\n"), std::string::npos) << text;
  EXPECT_NE(text.find("perfgate_probe_drops" + labels + " 3\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("biolat"), std::string::npos) << text;
}

}  // namespace
}  // namespace perfgate
