// The history commands through the perfgate binary on PostgreSQL: --db and
// PERFGATE_HISTORY take a postgresql:// URL, a history written by the last
// SQLite-only perfgate migrates and copies between the backends without loss,
// and a server that refuses or cannot be reached is one line without the
// password and exit 2 or 3.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/history_backends.h"
#include "harness/paths.h"
#include "history/history_db.h"
#include "metrics/results_json.h"

namespace perfgate::testing {
namespace {

namespace fs = std::filesystem;

const std::string kSchema3 = std::string(PERFGATE_FIXTURES) + "/history/schema3.sqlite";

int LineCount(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

class HistoryPostgresCli : public ::testing::Test {
 protected:
  void SetUp() override { PERFGATE_REQUIRE_HISTORY_BACKEND(HistoryBackend::kPostgres); }
  ScratchDir dir_;
};

// A results file of suite "nightly", one scenario whose wall time is `wall_s`.
std::string Results(const ScratchDir& dir, const std::string& timestamp, double wall_s) {
  RunResults r;
  r.suite = "nightly";
  r.environment.timestamp = timestamp;
  r.environment.hostname = "runner-1";
  ScenarioResult s;
  s.name = "camera";
  for (int i = 0; i < 3; ++i) {
    Repetition rep;
    rep.index = i;
    rep.metrics["workload.wall_time"] = ScalarMetric("workload.wall_time", wall_s * (1 + 0.001 * i), "s");
    s.repetitions.push_back(rep);
  }
  r.scenarios.push_back(s);
  const std::string path = dir / ("results-" + timestamp + ".json");
  WriteFile(path, ToJson(r).dump());
  return path;
}

TEST_F(HistoryPostgresCli, AddAndTrendTakeAUrlFromDbOrTheEnvironment) {
  TestHistory history(HistoryBackend::kPostgres);
  for (int day = 1; day <= 12; ++day) {
    const std::string ts = "2026-11-" + std::string(day < 10 ? "0" : "") + std::to_string(day) + "T02:00:00Z";
    const std::string file = Results(dir_, ts, day <= 6 ? 1.0 : 1.5);
    // Half through --db, half through PERFGATE_HISTORY.
    CliRun add = day % 2 ? RunCli({"history", "add", file, "--db", history.location(), "--commit",
                                   "c" + std::to_string(day), "--branch", "main"})
                         : RunCli({"history", "add", file, "--commit", "c" + std::to_string(day), "--branch", "main"},
                                  {"PERFGATE_HISTORY=" + ShellQuote(history.location())});
    ASSERT_EQ(add.exit_code, 0) << add.output;
    EXPECT_NE(add.output.find("(" + std::to_string(day) + " runs)"), std::string::npos) << add.output;
  }
  CliRun again = RunCli({"history", "add", Results(dir_, "2026-11-01T02:00:00Z", 1.0), "--db", history.location(),
                         "--commit", "c1", "--branch", "main"});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("already in the history; nothing added"), std::string::npos) << again.output;

  CliRun trend = RunCli({"trend", "--out", dir_ / "trend", "--suite", "nightly", "--change-points", dir_ / "cp.json"},
                        {"PERFGATE_HISTORY=" + ShellQuote(history.location())});
  ASSERT_EQ(trend.exit_code, 0) << trend.output;
  EXPECT_NE(trend.output.find("change point: nightly/camera workload.wall_time.value +50.0% at c7"), std::string::npos)
      << trend.output;
  EXPECT_TRUE(fs::exists(dir_ / "trend/index.html"));
  // Kept in the database for the Grafana dashboard.
  EXPECT_EQ(history.Sql("SELECT commit_after || ' ' || for_the_worse FROM change_points"), "c7 1");

  CliRun none = RunCli({"trend", "--out", dir_ / "t2"});
  EXPECT_EQ(none.exit_code, 2) << none.output;
}

TEST_F(HistoryPostgresCli, ATodaysSqliteHistoryMigratesAndCopiesBothWaysWithoutLoss) {
  // Migrated in place by the next add: every run, value, check and whole
  // scenario of schema 3 is still there.
  const std::string old = dir_ / "old.sqlite";
  fs::copy_file(kSchema3, old);
  CliRun add = RunCli({"history", "add", Results(dir_, "2026-11-20T02:00:00Z", 1.0), "--db", old, "--commit", "new",
                       "--branch", "main"});
  ASSERT_EQ(add.exit_code, 0) << add.output;
  {
    const HistoryDb migrated = HistoryDb::OpenForReading(old);
    EXPECT_EQ(migrated.SchemaVersion(), kHistorySchemaVersion);
    EXPECT_EQ(migrated.RunCount(), 10);
  }

  // The untouched fixture, read without migrating, copied to PostgreSQL and back.
  TestHistory postgres(HistoryBackend::kPostgres);
  CliRun there = RunCli({"history", "copy", kSchema3, postgres.location()});
  ASSERT_EQ(there.exit_code, 0) << there.output;
  EXPECT_NE(there.output.find("copied 9 runs"), std::string::npos) << there.output;
  EXPECT_EQ(postgres.Count("metric_values"), 540);
  EXPECT_EQ(postgres.Count("check_results"), 18);
  EXPECT_EQ(postgres.Count("scenario_results"), 18);
  CliRun twice = RunCli({"history", "copy", kSchema3, postgres.location()});
  EXPECT_NE(twice.output.find("copied 0 runs"), std::string::npos) << twice.output;
  EXPECT_NE(twice.output.find("9 already there"), std::string::npos) << twice.output;

  const std::string back = dir_ / "back.sqlite";
  CliRun home = RunCli({"history", "copy", postgres.location(), back});
  ASSERT_EQ(home.exit_code, 0) << home.output;
  const HistoryDb fixture = HistoryDb::OpenForReading(kSchema3), copied = HistoryDb::OpenForReading(back);
  EXPECT_EQ(copied.RunCount(), 9);
  const auto a = fixture.Series({}), b = copied.Series({});
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].points.size(), b[i].points.size()) << a[i].metric;
    for (size_t j = 0; j < a[i].points.size(); ++j) {
      EXPECT_EQ(a[i].points[j].commit, b[i].points[j].commit);
      EXPECT_EQ(a[i].points[j].values, b[i].points[j].values);
    }
  }
  const auto runs = copied.ScenarioRuns("nightly", "fio", "main");
  ASSERT_EQ(runs.size(), 8u);
  ASSERT_TRUE(runs[0].scenario.has_value());
  EXPECT_EQ(runs[0].scenario->repetitions.size(), 3u);
  EXPECT_EQ(runs[0].environment.hostname, "runner-b");
}

TEST_F(HistoryPostgresCli, RefusedOrUnreachableServersAreOneLineWithoutThePasswordAndExitTwoOrThree) {
  TestHistory history(HistoryBackend::kPostgres), foreign(HistoryBackend::kPostgres);
  foreign.Sql("CREATE TABLE invoices (id integer)");
  const std::string results = Results(dir_, "2026-11-01T02:00:00Z", 1.0);
  struct Case {
    std::string url;
    int exit_code;
    std::string said;
  };
  const std::string wrong = PostgresUrl(history.database(), "perfgate_password", "wrong-password");
  const std::string unreachable = "postgresql://ci:wrong-password@127.0.0.1:1/history";
  for (const Case& c :
       {Case{wrong, 2, DisplayLocation(wrong) + ": cannot connect: "},
        Case{unreachable, 3, "postgresql://ci@127.0.0.1:1/history: cannot connect: "},
        Case{foreign.location(), 2,
             DisplayLocation(foreign.location()) + ": a PostgreSQL database, but not a perfgate history"}}) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"history", "add", results, "--db", c.url, "--commit", "c", "--branch", "main"},
          std::vector<std::string>{"trend", "--db", c.url, "--out", dir_ / "t"},
          std::vector<std::string>{"history", "copy", kSchema3, c.url}}) {
      CliRun run = RunCli(args);
      EXPECT_EQ(run.exit_code, c.exit_code) << args[1] << " " << run.output;
      EXPECT_NE(run.output.find(c.said), std::string::npos) << run.output;
      EXPECT_EQ(run.output.find("wrong-password"), std::string::npos) << run.output;
      EXPECT_EQ(LineCount(run.output), 1) << run.output;
    }
  }
  EXPECT_EQ(foreign.Sql("SELECT to_regclass('runs') IS NULL"), "t");
  // The right password from PGPASSWORD, never on the command line.
  CliRun right = RunCli({"history", "add", results, "--db", PostgresUrl(history.database(), "perfgate_password"),
                         "--commit", "c", "--branch", "main"},
                        {"PGPASSWORD=right-password"});
  EXPECT_EQ(right.exit_code, 0) << right.output;
}

}  // namespace
}  // namespace perfgate::testing
