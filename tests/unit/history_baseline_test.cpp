// Baselines from the history (perfgate run --baseline-from-history): a
// temporary database of several hosts and branches, and which runs a run of
// this host is compared with.
#include "history/history_baseline.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "compare/compare.h"
#include "harness/files.h"
#include "harness/history_backends.h"
#include "history/history_db.h"

namespace perfgate {
namespace {

using TempDir = testing::ScratchDir;

struct Host {
  std::string name, kernel, cpu_model;
  int cpus;
};
const Host kThisHost = {"runner-a", "6.1.0-18-amd64", "AMD EPYC 7B13", 2};
const Host kTwinHost = {"runner-b", "6.1.0-18-amd64", "AMD EPYC 7B13", 2};  // same fingerprint, other name
const Host kOtherHost = {"arm-box", "6.5.0-arm64", "Neoverse-N1", 4};

Environment Fingerprint(const Host& h) {
  Environment e;
  e.hostname = h.name;
  e.kernel = h.kernel;
  e.cpu_model = h.cpu_model;
  e.cpu_count = h.cpus;
  return e;
}

// A run of suite "nightly" on `host`: scenarios with three repetitions of a
// wall time near `wall_s` and a runqueue latency histogram.
RunResults HostRun(const Host& host, const std::string& timestamp, double wall_s, Verdict verdict = Verdict::kPass,
                   const std::vector<std::string>& scenarios = {"camera"}) {
  RunResults r;
  r.suite = "nightly";
  r.environment = Fingerprint(host);
  r.environment.timestamp = timestamp;
  r.verdict = verdict;
  for (const std::string& name : scenarios) {
    ScenarioResult s;
    s.name = name;
    for (int i = 0; i < 3; ++i) {
      Repetition rep;
      rep.index = i;
      rep.metrics["workload.wall_time"] = ScalarMetric("workload.wall_time", wall_s * (1 + 0.01 * i), "s");
      LogLinearHistogram h;
      for (int k = 1; k <= 50; ++k) h.Record(1000 * k + i);
      rep.metrics["sched.runq_latency"] = HistogramMetric("sched.runq_latency", "ns", h, 1.0);
      s.repetitions.push_back(rep);
    }
    r.scenarios.push_back(s);
  }
  return r;
}

std::string CodeAndMessage(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::to_string(static_cast<int>(e.code())) + " " + e.what();
  }
  return "no error";
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Three hosts, two branches; on this host's fingerprint the newest run of
// main failed and the one before could not run its scenario.
// On both backends.
class HistoryBaselineTest : public ::testing::TestWithParam<testing::HistoryBackend> {
 protected:
  void SetUp() override {
    PERFGATE_REQUIRE_HISTORY_BACKEND(GetParam());
    history_ = std::make_unique<testing::TestHistory>(GetParam());
    file_ = history_->location();
    HistoryDb db = HistoryDb::Open(file_);
    db.AddRun(HostRun(kThisHost, "2026-11-20T02:00:00Z", 1.00, Verdict::kPass, {"camera", "fio"}), {"c1", "main"});
    db.AddRun(HostRun(kTwinHost, "2026-11-21T02:00:00Z", 1.10), {"c2", "main"});
    RunResults broken = HostRun(kThisHost, "2026-11-22T02:00:00Z", 1.20);
    broken.scenarios[0].error = "workload timed out after 30 s";
    db.AddRun(broken, {"c3", "main"});
    db.AddRun(HostRun(kThisHost, "2026-11-23T02:00:00Z", 1.30, Verdict::kRegression), {"c4", "main"});
    db.AddRun(HostRun(kOtherHost, "2026-11-24T02:00:00Z", 1.40), {"c5", "main"});
    db.AddRun(HostRun(kThisHost, "2026-11-24T12:00:00Z", 1.50), {"f1", "feature"});
  }
  HistoryBaselines Choose(const std::string& branch, const Host& now = kThisHost,
                          const std::vector<std::string>& scenarios = {"camera"}) {
    HistoryDb db = HistoryDb::OpenForReading(file_);
    return ChooseHistoryBaselines(db, "nightly.sqlite", {"nightly", scenarios, branch, Fingerprint(now)});
  }
  static double FirstWallTime(const ScenarioResult& s) {
    return s.repetitions.at(0).metrics.at("workload.wall_time").value;
  }

  std::unique_ptr<testing::TestHistory> history_;
  std::string file_;  // the history's location
};
INSTANTIATE_TEST_SUITE_P(Backends, HistoryBaselineTest,
                         ::testing::Values(testing::HistoryBackend::kSqlite, testing::HistoryBackend::kPostgres),
                         testing::BackendName);

TEST_P(HistoryBaselineTest, PicksTheNewestPassingRunOfThisFingerprintOnTheBranch) {
  HistoryBaselines h = Choose("main");
  ASSERT_EQ(h.scenarios.count("camera"), 1u);
  // c4 regressed, c3's scenario failed: c2, from a twin of this host (same kernel, CPU model and count).
  EXPECT_DOUBLE_EQ(FirstWallTime(h.scenarios.at("camera")), 1.10);
  EXPECT_EQ(h.scenarios.at("camera").repetitions.size(), 3u);
  EXPECT_EQ(h.scenarios.at("camera").repetitions[2].metrics.at("sched.runq_latency").hist.count(), 50u);
  EXPECT_TRUE(h.foreign.empty());
  EXPECT_TRUE(h.warnings.empty());
  EXPECT_EQ(h.environments.at("camera").git_commit, "c2");
  EXPECT_TRUE(Contains(h.source,
                       "the history in nightly.sqlite (branch main): commit c2 of 2026-11-21T02:00:00Z on "
                       "runner-b (6.1.0-18-amd64, AMD EPYC 7B13 x 2) for camera"))
      << h.source;
  EXPECT_TRUE(Contains(h.source,
                       "newer runs skipped: camera: commit c4 of 2026-11-23T02:00:00Z (its verdict was "
                       "regression), camera: commit c3 of 2026-11-22T02:00:00Z (the scenario failed)"))
      << h.source;
}

TEST_P(HistoryBaselineTest, WithoutABranchTheNewestOfEveryBranchCounts) {
  HistoryBaselines h = Choose("");
  EXPECT_DOUBLE_EQ(FirstWallTime(h.scenarios.at("camera")), 1.50);
  EXPECT_TRUE(Contains(h.source, "commit f1 of 2026-11-24T12:00:00Z")) << h.source;
}

TEST_P(HistoryBaselineTest, EachScenarioTakesTheNewestRunThatRanIt) {
  HistoryBaselines h = Choose("main", kThisHost, {"camera", "fio"});
  EXPECT_DOUBLE_EQ(FirstWallTime(h.scenarios.at("camera")), 1.10);
  EXPECT_DOUBLE_EQ(FirstWallTime(h.scenarios.at("fio")), 1.00);
  EXPECT_TRUE(Contains(h.source, "x 2) for camera; commit c1 of 2026-11-20T02:00:00Z on runner-a")) << h.source;
  EXPECT_TRUE(Contains(h.source, "for fio")) << h.source;
}

TEST_P(HistoryBaselineTest, NoRunOfThisFingerprintDecidesNoRegressionCheck) {
  const Host elsewhere = {"new-runner", "6.12.0-amd64", "Intel Xeon", 8};
  HistoryBaselines h = Choose("main", elsewhere);
  // The newest good run of another machine, said to be one, and foreign.
  ASSERT_EQ(h.foreign.count("camera"), 1u);
  EXPECT_TRUE(Contains(h.foreign.at("camera"), "kernel: 6.5.0-arm64 (baseline) vs 6.12.0-amd64 (now)"));
  EXPECT_TRUE(Contains(h.source, "commit c5 of 2026-11-24T02:00:00Z on arm-box")) << h.source;
  EXPECT_TRUE(Contains(h.source, "another machine than this one: its numbers are not this host's")) << h.source;

  // Compared as the pipeline compares: 50 % slower, yet no verdict from another machine's numbers.
  RunResults candidate = HostRun(elsewhere, "2026-11-25T02:00:00Z", 2.10);
  CheckResult check;
  check.spec.metric = "workload.wall_time";
  check.spec.name = "wall";
  check.spec.max_regression_pct = 5;
  candidate.scenarios[0].checks.push_back(check);
  CompareOptions options;
  options.foreign_baselines = h.foreign;
  EvaluateChecks(candidate, h.scenarios, options);
  const CheckResult& judged = candidate.scenarios[0].checks[0];
  EXPECT_EQ(judged.verdict, Verdict::kInconclusive);
  EXPECT_TRUE(Contains(judged.message, "recorded on another machine")) << judged.message;
}

TEST_P(HistoryBaselineTest, NoPassingRunAtAllIsSaidAndLeavesTheChecksInconclusive) {
  {
    HistoryDb db = HistoryDb::Open(file_);
    db.AddRun(HostRun(kThisHost, "2026-11-25T02:00:00Z", 1.0, Verdict::kError, {"gbench"}), {"c6", "main"});
  }
  HistoryBaselines h = Choose("main", kThisHost, {"gbench", "unixbench"});
  EXPECT_TRUE(h.scenarios.empty());
  ASSERT_EQ(h.warnings.size(), 2u);
  EXPECT_EQ(h.warnings[0],
            "nightly.sqlite: no passing run of nightly/gbench on branch main to compare with; its regression checks "
            "are inconclusive");
  EXPECT_TRUE(Contains(h.source, "no passing run of nightly for gbench, unixbench (inconclusive)")) << h.source;
  EXPECT_TRUE(Contains(h.source,
                       "newer runs skipped: gbench: commit c6 of 2026-11-25T02:00:00Z (its verdict was "
                       "error)"))
      << h.source;

  RunResults candidate = HostRun(kThisHost, "2026-11-26T02:00:00Z", 1.0, Verdict::kPass, {"gbench"});
  CheckResult check;
  check.spec.metric = "workload.wall_time";
  candidate.scenarios[0].checks.push_back(check);
  EvaluateChecks(candidate, h.scenarios, {});
  EXPECT_EQ(candidate.scenarios[0].checks[0].verdict, Verdict::kInconclusive);
  EXPECT_TRUE(Contains(candidate.scenarios[0].checks[0].message, "no baseline"));
}

TEST_P(HistoryBaselineTest, AnUnknownBranchIsBadInputNamingTheBranches) {
  EXPECT_EQ(CodeAndMessage([&] { Choose("mian"); }),
            "2 nightly.sqlite: no run of branch \"mian\" in the history (branches: feature, main)");
}

TEST_P(HistoryBaselineTest, ACorruptStoredResultIsBadInputNamingTheDatabaseAndRun) {
  history_->Sql("UPDATE scenario_results SET result_bytes = result_bytes + 1");
  EXPECT_EQ(CodeAndMessage([&] { Choose("main"); }).rfind("2 " + DisplayLocation(file_) + ": run ", 0), 0u)
      << CodeAndMessage([&] { Choose("main"); });
  EXPECT_NE(CodeAndMessage([&] { Choose("main"); }).find("scenario camera: the stored result is corrupt"),
            std::string::npos);
}

TEST(HistoryBaselineDb, OpeningForReadingRefusesWhatIsNoPerfgateHistoryAndChangesNothing) {
  TempDir dir;
  EXPECT_EQ(CodeAndMessage([&] { HistoryDb::OpenForReading(dir / "missing.sqlite"); }),
            "2 " + std::string(dir / "missing.sqlite") + ": no such history database");
  EXPECT_FALSE(std::filesystem::exists(dir / "missing.sqlite"));

  const std::string text = dir / "notes.txt";
  std::ofstream(text) << "this is not a database, not even close, but long enough to have a header page\n";
  EXPECT_EQ(CodeAndMessage([&] { HistoryDb::OpenForReading(text); }).rfind("2 " + text + ": ", 0), 0u);

  const std::string other = dir / "other.sqlite";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &raw), SQLITE_OK);
  sqlite3_exec(raw, "CREATE TABLE t (x)", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  EXPECT_EQ(CodeAndMessage([&] { HistoryDb::OpenForReading(other); }),
            "2 " + other + ": not a perfgate history database");
}

TEST_P(HistoryBaselineTest, RunsStoredBeforeRepetitionsWereKeptWholeAreSkippedAndSaid) {
  testing::TestHistory old(GetParam());
  const std::string file = old.location();
  {
    HistoryDb db = HistoryDb::Open(file);
    db.AddRun(HostRun(kThisHost, "2026-11-20T02:00:00Z", 1.0), {"c1", "main"});
  }
  // What schema 2 left: statistics only. Read as it is, without migrating.
  old.Sql(old.postgres()
              ? "DROP TABLE alert_changes; DROP TABLE alert_metrics; DROP TABLE alert_groups; "
                "DROP TABLE change_points; DROP TABLE scenario_results; DROP INDEX runs_suite_time; "
                "ALTER TABLE runs DROP COLUMN kept_whole; ALTER TABLE runs DROP COLUMN reference_commit; "
                "ALTER TABLE check_results DROP COLUMN change_low_pct; "
                "ALTER TABLE check_results DROP COLUMN change_high_pct; UPDATE perfgate_schema SET version = 2;"
              : "DROP TABLE alert_changes; DROP TABLE alert_metrics; DROP TABLE alert_groups; "
                "DROP TABLE change_points; DROP TABLE scenario_results; ALTER TABLE runs DROP COLUMN "
                "kept_whole; ALTER TABLE runs DROP COLUMN reference_commit; ALTER TABLE check_results DROP "
                "COLUMN change_low_pct; ALTER TABLE check_results DROP COLUMN change_high_pct; PRAGMA "
                "user_version = 2;");
  {
    HistoryDb db = HistoryDb::OpenForReading(file);
    EXPECT_EQ(db.SchemaVersion(), 2);
    HistoryBaselines h = ChooseHistoryBaselines(db, "old.sqlite", {"nightly", {"camera"}, "", Fingerprint(kThisHost)});
    EXPECT_TRUE(h.scenarios.empty());
    EXPECT_TRUE(Contains(h.source,
                         "commit c1 of 2026-11-20T02:00:00Z (stored before the history kept repetitions "
                         "whole)"))
        << h.source;
  }
  // Migrated, the old run stays skipped and a new one is used.
  HistoryDb db = HistoryDb::Open(file);
  EXPECT_EQ(db.SchemaVersion(), kHistorySchemaVersion);
  db.AddRun(HostRun(kThisHost, "2026-11-21T02:00:00Z", 1.2), {"c2", "main"});
  HistoryBaselines h = ChooseHistoryBaselines(db, "old.sqlite", {"nightly", {"camera"}, "", Fingerprint(kThisHost)});
  ASSERT_EQ(h.scenarios.count("camera"), 1u);
  EXPECT_EQ(h.environments.at("camera").git_commit, "c2");
}

}  // namespace
}  // namespace perfgate
