// The history in PostgreSQL, where a pool of runners writes at once: many
// writers, a writer killed or cut off mid-add, credentials and servers that
// refuse, and copying histories between the backends.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "harness/environment.h"
#include "harness/history_backends.h"
#include "history/history_db.h"

namespace perfgate {
namespace {

using testing::HistoryBackend;
using testing::PostgresQuery;
using testing::TestHistory;

// A run of suite `suite` with `scenarios` scenarios of `metrics` scalar
// metrics, three repetitions each: 3 * scenarios * metrics values.
RunResults PoolRun(const std::string& suite, const std::string& timestamp, int scenarios = 2, int metrics = 5) {
  RunResults r;
  r.suite = suite;
  r.environment.timestamp = timestamp;
  r.environment.hostname = "runner";
  for (int s = 0; s < scenarios; ++s) {
    ScenarioResult scenario;
    scenario.name = "scenario" + std::to_string(s);
    for (int i = 0; i < 3; ++i) {
      Repetition rep;
      rep.index = i;
      for (int m = 0; m < metrics; ++m) {
        const std::string name = "workload.metric" + std::to_string(m);
        rep.metrics[name] = ScalarMetric(name, 1.0 + m + 0.01 * i, "s");
      }
      scenario.repetitions.push_back(rep);
    }
    r.scenarios.push_back(scenario);
  }
  return r;
}

std::string Timestamp(int writer, int run) {
  char text[40];
  std::snprintf(text, sizeof text, "2026-%02d-%02dT%02d:00:00Z", 1 + writer % 12, 1 + run % 28, run / 28);
  return text;
}

std::string ErrorLine(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::to_string(static_cast<int>(e.code())) + " " + e.what();
  }
  return "no error";
}

class PostgresHistory : public ::testing::Test {
 protected:
  void SetUp() override { PERFGATE_REQUIRE_HISTORY_BACKEND(HistoryBackend::kPostgres); }
};

// The backend pid of the one other session on `database` that is inside a
// write transaction; 0 while there is none.
int WritingBackend(const std::string& database) {
  const std::string pid =
      PostgresQuery("postgres", "SELECT pid FROM pg_stat_activity WHERE datname = '" + database +
                                    "' AND backend_xid IS NOT NULL AND pid <> pg_backend_pid() LIMIT 1");
  return pid.empty() ? 0 : std::stoi(pid);
}

int SessionsOn(const std::string& database) {
  return std::stoi(
      PostgresQuery("postgres", "SELECT count(*) FROM pg_stat_activity WHERE datname = '" + database + "'"));
}

TEST_F(PostgresHistory, SixteenWritersAddingFiftyRunsEachStoreEightHundredWholeRunsOnce) {
  TestHistory history(HistoryBackend::kPostgres);
  constexpr int kWriters = 16, kRuns = 50;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Each writer migrates the fresh database at once with the others,
      // adds its runs, and adds three of its neighbour's again.
      int failed = 0;
      try {
        HistoryDb db = HistoryDb::Open(history.location());
        for (int run = 0; run < kRuns; ++run) {
          db.AddRun(PoolRun("pool", Timestamp(w, run)), {"c" + std::to_string(w) + "-" + std::to_string(run), "main"});
          if (run < 3) {
            const int other = (w + 1) % kWriters;
            db.AddRun(PoolRun("pool", Timestamp(other, run)),
                      {"c" + std::to_string(other) + "-" + std::to_string(run), "main"});
          }
        }
      } catch (const Error& e) {
        std::fprintf(stderr, "writer %d: %s\n", w, e.what());
        failed = 1;
      }
      _exit(failed);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed";
  }
  EXPECT_EQ(history.Count("runs"), kWriters * kRuns);
  EXPECT_EQ(history.Sql("SELECT count(*) FROM (SELECT suite, commit_sha, branch, run_timestamp FROM runs GROUP BY 1, "
                        "2, 3, 4 HAVING count(*) > 1) d"),
            "0");
  // Whole: every run has all its values, its scenarios and nothing else.
  EXPECT_EQ(history.Count("metric_values"), kWriters * kRuns * 3 * 2 * 5);
  EXPECT_EQ(history.Sql("SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM metric_values v WHERE v.run_id = "
                        "r.id) <> 30 OR (SELECT count(*) FROM scenario_results s WHERE s.run_id = r.id) <> 2"),
            "0");
  EXPECT_EQ(history.Count("series"), 2 * 5);
  EXPECT_EQ(history.Sql("SELECT version FROM perfgate_schema"), std::to_string(kHistorySchemaVersion));
}

// A run large enough that adding it takes a while: 30 scenarios x 400 metrics x 3 repetitions.
RunResults LargeRun() { return PoolRun("large", "2026-11-27T02:00:00Z", 30, 400); }

TEST_F(PostgresHistory, AWriterKilledMidAddLeavesNoPartialRun) {
  TestHistory history(HistoryBackend::kPostgres);
  HistoryDb::Open(history.location());
  const RunResults large = LargeRun();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      HistoryDb db = HistoryDb::Open(history.location());
      db.AddRun(large, {"abc", "main"});
    } catch (const Error&) {
    }
    _exit(0);
  }
  int backend = 0;
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       backend == 0 && std::chrono::steady_clock::now() < until;) {
    backend = WritingBackend(history.database());
  }
  ASSERT_NE(backend, 0) << "the writer never began its transaction";
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer finished before it was killed";
  // The server notices the lost client and rolls its transaction back.
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       SessionsOn(history.database()) > 0 && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(history.Count("runs"), 0);
  EXPECT_EQ(history.Count("metric_values"), 0);
  EXPECT_EQ(history.Count("scenario_results"), 0);
  HistoryDb db = HistoryDb::Open(history.location());
  EXPECT_TRUE(db.AddRun(large, {"abc", "main"}));
  EXPECT_EQ(history.Count("metric_values"), 30 * 400 * 3);
}

TEST_F(PostgresHistory, AConnectionCutMidAddIsAnInfrastructureErrorThatStoredNothing) {
  TestHistory history(HistoryBackend::kPostgres);
  HistoryDb::Open(history.location());
  const RunResults large = LargeRun();
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  // With a password in the URL: the message must not carry it.
  const std::string url = testing::PostgresUrl(history.database(), "perfgate_password", "right-password");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(report[0]);
    std::string said = ErrorLine([&] {
      HistoryDb db = HistoryDb::Open(url);
      db.AddRun(large, {"abc", "main"});
    });
    (void)!write(report[1], said.data(), said.size());
    _exit(0);
  }
  close(report[1]);
  int backend = 0;
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       backend == 0 && std::chrono::steady_clock::now() < until;) {
    backend = WritingBackend(history.database());
  }
  ASSERT_NE(backend, 0) << "the writer never began its transaction";
  PostgresQuery("postgres", "SELECT pg_terminate_backend(" + std::to_string(backend) + ")");
  std::string said;
  char buffer[4096];
  for (ssize_t n; (n = read(report[0], buffer, sizeof buffer)) > 0;) said.append(buffer, static_cast<size_t>(n));
  close(report[0]);
  waitpid(pid, nullptr, 0);
  EXPECT_EQ(said.rfind("3 " + DisplayLocation(url) +
                           ": the connection to the server was lost while adding the run; "
                           "nothing of it was stored",
                       0),
            0u)
      << said;
  EXPECT_EQ(said.find("right-password"), std::string::npos) << said;
  EXPECT_EQ(said.find('\n'), std::string::npos) << said;
  EXPECT_EQ(history.Count("runs"), 0);
  EXPECT_EQ(history.Count("metric_values"), 0);
}

TEST_F(PostgresHistory, RefusedCredentialsAndUnreachableServersAreOneLineWithoutThePassword) {
  TestHistory history(HistoryBackend::kPostgres);
  struct Case {
    std::string url;
    std::string expected;  // the start of "code message"
  };
  const std::string wrong = testing::PostgresUrl(history.database(), "perfgate_password", "wrong-password");
  const std::string missing = testing::PostgresUrl("no_such_database");
  const std::string refused = "postgresql://perfgate:secret-password@127.0.0.1:1/history?connect_timeout=5";
  const std::string param = testing::PostgresUrl(history.database(), "perfgate_password") + "&password=wrong-password";
  for (const Case& c :
       {Case{wrong, "2 " + DisplayLocation(wrong) + ": cannot connect: "},
        Case{param, "2 " + DisplayLocation(param) + ": cannot connect: "},
        Case{missing, "2 " + DisplayLocation(missing) + ": cannot connect: "},
        Case{refused, "3 postgresql://perfgate@127.0.0.1:1/history?connect_timeout=5: cannot connect: "}}) {
    for (auto open : {&HistoryDb::Open, &HistoryDb::OpenForReading}) {
      const std::string said = ErrorLine([&] { open(c.url); });
      EXPECT_EQ(said.rfind(c.expected, 0), 0u) << said;
      EXPECT_EQ(said.find("password=wrong"), std::string::npos) << said;
      EXPECT_EQ(said.find(":wrong-password"), std::string::npos) << said;
      EXPECT_EQ(said.find("secret-password"), std::string::npos) << said;
      EXPECT_EQ(said.find('\n'), std::string::npos) << said;
    }
  }
  // The right password, from the URL or from PGPASSWORD, is accepted.
  EXPECT_EQ(
      HistoryDb::Open(testing::PostgresUrl(history.database(), "perfgate_password", "right-password")).SchemaVersion(),
      kHistorySchemaVersion);
  setenv("PGPASSWORD", "right-password", 1);
  EXPECT_EQ(HistoryDb::OpenForReading(testing::PostgresUrl(history.database(), "perfgate_password")).RunCount(), 0);
  unsetenv("PGPASSWORD");
}

TEST_F(PostgresHistory, ReadingADatabaseWithoutAHistoryIsBadInputAndCreatesNothing) {
  TestHistory empty(HistoryBackend::kPostgres);
  EXPECT_EQ(ErrorLine([&] { HistoryDb::OpenForReading(empty.location()); }),
            "2 " + DisplayLocation(empty.location()) + ": not a perfgate history database");
  EXPECT_EQ(ErrorLine([&] { HistoryDb::OpenExisting(empty.location()); }),
            "2 " + DisplayLocation(empty.location()) + ": not a perfgate history database");
  EXPECT_EQ(empty.Sql("SELECT to_regclass('perfgate_schema') IS NULL"), "t");
}

TEST(HistoryLocation, PasswordsAreLeftOutOfTheNamesOfDatabases) {
  EXPECT_EQ(DisplayLocation("postgresql://ci:s3cr%40t@db.example:5432/perf?sslmode=require"),
            "postgresql://ci@db.example:5432/perf?sslmode=require");
  EXPECT_EQ(DisplayLocation("postgres://ci@db/perf?password=s3cret&sslmode=require"),
            "postgres://ci@db/perf?sslmode=require");
  EXPECT_EQ(DisplayLocation("postgresql://ci@db/perf?sslmode=require&password=s3cret"),
            "postgresql://ci@db/perf?sslmode=require");
  EXPECT_EQ(DisplayLocation("postgresql:///perf?host=/run/postgresql"), "postgresql:///perf?host=/run/postgresql");
  EXPECT_EQ(DisplayLocation("history/nightly.sqlite"), "history/nightly.sqlite");
  EXPECT_TRUE(IsPostgresLocation("postgres://db/perf"));
  EXPECT_FALSE(IsPostgresLocation("postgresql.sqlite"));
}

// Every stored run of `db`, row for row, as comparable text.
std::vector<std::string> Dump(const HistoryDb& db) {
  std::vector<std::string> out;
  db.ForEachStoredRun([&](const StoredRun& r) {
    std::string text = r.suite + "|" + r.commit + "|" + r.branch + "|" + r.run_timestamp + "|" + r.added_at + "|" +
                       r.hostname + "|" + r.kernel + "|" + r.cpu_model + "|" + std::to_string(r.cpu_count) + "|" +
                       r.perfgate_version + "|" + r.verdict + "|" + std::to_string(r.kept_whole);
    std::vector<std::string> values;
    for (const auto& v : r.values) {
      char number[40];
      std::snprintf(number, sizeof number, "%.17g", v.value);
      values.push_back(v.series[0] + "/" + v.series[1] + "/" + v.series[2] + "/" + v.series[3] + "/" + v.series[4] +
                       "#" + std::to_string(v.repetition) + "=" + number);
    }
    std::sort(values.begin(), values.end());
    for (const auto& v : values) text += "\n  " + v;
    for (const auto& c : r.checks)
      text += "\n  check " + c.scenario + "/" + c.name + " " + c.metric + "." + c.statistic + " " + c.verdict + " " +
              (c.change_pct ? std::to_string(*c.change_pct) : "null");
    for (const auto& w : r.wholes)
      text += "\n  whole " + w.scenario + " " + std::to_string(w.result_bytes) + " " +
              std::to_string(w.result_zlib.size()) +
              (w.result_zlib.empty() ? "" : std::to_string(std::hash<std::string>{}(w.result_zlib)));
    out.push_back(text);
  });
  return out;
}

TEST_F(PostgresHistory, CopyingBetweenTheBackendsKeepsEveryRowAndAddsEachRunOnce) {
  TestHistory sqlite(HistoryBackend::kSqlite), postgres(HistoryBackend::kPostgres), back(HistoryBackend::kSqlite);
  {
    HistoryDb db = HistoryDb::Open(sqlite.location());
    RunResults run = PoolRun("nightly", "2026-11-01T02:00:00Z");
    CheckResult check;
    check.spec.name = "wall";
    check.spec.metric = "workload.metric0";
    check.statistic = "value";
    check.verdict = Verdict::kPass;
    check.baseline_values = {1.0};
    check.change_pct = 2.5;
    run.scenarios[0].checks.push_back(check);
    ASSERT_TRUE(db.AddRun(run, {"c1", "main"}));
    ASSERT_TRUE(db.AddRun(PoolRun("nightly", "2026-11-02T02:00:00Z"), {"c2", "main"}));
    ASSERT_TRUE(db.AddRun(PoolRun("presubmit", "2026-11-02T03:00:00Z"), {"c3", "feature\ttab \"quoted\""}));
  }
  const HistoryDb source = HistoryDb::OpenForReading(sqlite.location());
  HistoryDb there = HistoryDb::Open(postgres.location());
  int added = 0;
  source.ForEachStoredRun([&](const StoredRun& r) { added += there.AddStoredRun(r); });
  EXPECT_EQ(added, 3);
  source.ForEachStoredRun([&](const StoredRun& r) { EXPECT_FALSE(there.AddStoredRun(r)); });
  HistoryDb again = HistoryDb::Open(back.location());
  there.ForEachStoredRun([&](const StoredRun& r) { again.AddStoredRun(r); });
  EXPECT_EQ(Dump(source), Dump(there));
  EXPECT_EQ(Dump(source), Dump(again));
  ASSERT_EQ(Dump(source).size(), 3u);
  EXPECT_EQ(there.Series({}).size(), source.Series({}).size());
  const auto runs = there.ScenarioRuns("nightly", "scenario0", "main");
  ASSERT_EQ(runs.size(), 2u);
  ASSERT_TRUE(runs[0].scenario.has_value());
  EXPECT_EQ(runs[0].scenario->repetitions.size(), 3u);
}

}  // namespace
}  // namespace perfgate
