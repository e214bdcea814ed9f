// perfgate run --baseline-from-history through the perfgate binary: a run
// added to the history on this host is the next run's baseline, with its
// repetitions; a failed run is skipped; another machine's run decides
// nothing; and bad input is one line and exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/history_backends.h"
#include "history/history_db.h"

namespace perfgate::testing {
namespace {

namespace fs = std::filesystem;

// Suite "t", scenario "s": `seconds` of sleep, six repetitions (enough for
// the rank test to reach 1 % with a baseline of six), wall time must not
// grow beyond 50 %.
std::string SleepSuite(const ScratchDir& dir, const std::string& file, const std::string& seconds) {
  const std::string path = dir / file;
  WriteFile(path, R"({"name": "t", "scenarios": [{"name": "s", "workload": {"kind": "command", "argv": ["sleep", ")" +
                      seconds + R"("]}, "warmup": 0, "repetitions": 6, "timeout_s": 30, "probes": [],
      "checks": [{"metric": "workload.wall_time", "max_regression_pct": 50}]}]})");
  return path;
}

// The results.json a run wrote; the run's output when it wrote none.
nlohmann::json ResultsOf(const fs::path& out_dir, const CliRun& run) {
  nlohmann::json j = nlohmann::json::parse(ReadFile(out_dir / "results.json"), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    ADD_FAILURE() << out_dir << ": no results.json; exit " << run.exit_code << ":\n" << run.output;
    return {{"baseline_source", ""}, {"scenarios", {{{"checks", {nlohmann::json::object()}}}}}};
  }
  return j;
}

int Lines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// On both history backends.
class BaselineFromHistoryTest : public ::testing::TestWithParam<HistoryBackend> {
 protected:
  void SetUp() override {
    PERFGATE_REQUIRE_ROOT();
    PERFGATE_REQUIRE_HISTORY_BACKEND(GetParam());
    history_ = std::make_unique<TestHistory>(GetParam());
    db_ = history_->location();
    fast_ = SleepSuite(dir_, "fast.json", "0.02");
    slow_ = SleepSuite(dir_, "slow.json", "0.2");
    CliRun nightly = RunCli({"run", fast_, "--baseline-dir", dir_ / "none", "--out", dir_ / "nightly", "--quiet"});
    ASSERT_EQ(nightly.exit_code, 0) << nightly.output;
    nightly_ = ResultsOf(dir_ / "nightly", nightly);
  }
  // Adds `results` to the history as `commit` of `branch`.
  void Add(const nlohmann::json& results, const std::string& commit, const std::string& branch = "main") {
    const std::string file = dir_ / ("add-" + commit + ".json");
    WriteFile(file, results.dump());
    CliRun add = RunCli({"history", "add", file, "--db", db_, "--commit", commit, "--branch", branch});
    ASSERT_EQ(add.exit_code, 0) << add.output;
  }
  // The nightly results, later and with another verdict.
  nlohmann::json Later(const std::string& timestamp, const std::string& verdict) const {
    nlohmann::json j = nightly_;
    j["environment"]["timestamp"] = timestamp;
    j["verdict"] = verdict;
    return j;
  }

  ScratchDir dir_;
  std::unique_ptr<TestHistory> history_;
  std::string fast_, slow_, db_;
  nlohmann::json nightly_;
};
INSTANTIATE_TEST_SUITE_P(Backends, BaselineFromHistoryTest,
                         ::testing::Values(HistoryBackend::kSqlite, HistoryBackend::kPostgres), BackendName);

TEST_P(BaselineFromHistoryTest, ComparesWithTheNewestPassingRunAndNamesIt) {
  Add(nightly_, "aaaa1111");
  Add(Later("2099-01-01T00:00:00Z", "regression"), "bbbb2222");
  Add(Later("2099-01-02T00:00:00Z", "pass"), "cccc3333", "feature");

  CliRun run = RunCli({"run", slow_, "--baseline-from-history", db_, "--branch", "main", "--out", dir_ / "o"});
  nlohmann::json results = ResultsOf(dir_ / "o", run);
  const std::string source = results["baseline_source"];
  EXPECT_NE(source.find("the history in " + DisplayLocation(db_) + " (branch main): commit aaaa1111 of "),
            std::string::npos)
      << source;
  EXPECT_NE(source.find(nightly_["environment"]["hostname"].get<std::string>()), std::string::npos) << source;
  EXPECT_NE(source.find("newer runs skipped: s: commit bbbb2222 of 2099-01-01T00:00:00Z (its verdict was regression)"),
            std::string::npos)
      << source;
  // Ten times slower than the six repetitions of aaaa1111: a regression, or
  // inconclusive when the host had no CPU to spare, never a pass.
  const nlohmann::json& check = results["scenarios"][0]["checks"][0];
  EXPECT_EQ(check["baseline_values"].size(), 6u) << check.dump();
  EXPECT_LT(check["baseline_median"].get<double>(), 0.1) << check.dump();
  EXPECT_NE(check["verdict"], "pass") << check.dump();
  EXPECT_EQ(run.exit_code, check["verdict"] == "regression" ? 1 : 0) << run.output;
  EXPECT_NE(run.output.find("compared against the history in"), std::string::npos) << run.output;
  EXPECT_NE(ReadFile(dir_ / "o/summary.md").find("commit aaaa1111"), std::string::npos);
  EXPECT_NE(ReadFile(dir_ / "o/report/index.html").find("commit aaaa1111"), std::string::npos);
  EXPECT_NE(ReadFile(dir_ / "o/junit.xml").find("commit aaaa1111"), std::string::npos);
}

TEST_P(BaselineFromHistoryTest, AnotherMachinesRunDecidesNothingUnlessAllowed) {
  nlohmann::json elsewhere = nightly_;
  elsewhere["environment"]["kernel"] = "2.6.32-other";
  Add(elsewhere, "dddd4444");

  CliRun run = RunCli({"run", slow_, "--baseline-from-history", db_, "--out", dir_ / "o", "--quiet"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("no passing run of t/s on a host like this one"), std::string::npos) << run.output;
  nlohmann::json results = ResultsOf(dir_ / "o", run);
  const nlohmann::json& check = results["scenarios"][0]["checks"][0];
  EXPECT_EQ(check["verdict"], "inconclusive") << check.dump();
  EXPECT_NE(check["message"].get<std::string>().find("recorded on another machine"), std::string::npos);
  EXPECT_NE(results["baseline_source"].get<std::string>().find("another machine than this one"), std::string::npos);

  CliRun strict = RunCli({"run", slow_, "--baseline-from-history", db_, "--out", dir_ / "o2", "--require-same-env"});
  EXPECT_EQ(strict.exit_code, 2) << strict.output;
  EXPECT_EQ(Lines(strict.output), 1) << strict.output;

  // Opted in, the other machine's repetitions are judged.
  CliRun allowed =
      RunCli({"run", slow_, "--baseline-from-history", db_, "--out", dir_ / "o3", "--allow-other-host", "--quiet"});
  nlohmann::json judged = ResultsOf(dir_ / "o3", allowed)["scenarios"][0]["checks"][0];
  EXPECT_EQ(judged["baseline_values"].size(), 6u) << judged.dump();
  EXPECT_EQ(judged["message"].get<std::string>().find("recorded on another machine"), std::string::npos)
      << judged.dump();
  EXPECT_NE(judged["verdict"], "pass") << judged.dump();
}

TEST_P(BaselineFromHistoryTest, OnlyFailedRunsLeaveTheChecksInconclusiveAndSaySo) {
  Add(Later("2099-01-01T00:00:00Z", "error"), "eeee5555");
  CliRun run = RunCli({"run", slow_, "--baseline-from-history", db_, "--out", dir_ / "o", "--quiet"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("no passing run of t/s to compare with"), std::string::npos) << run.output;
  nlohmann::json results = ResultsOf(dir_ / "o", run);
  EXPECT_EQ(results["scenarios"][0]["checks"][0]["verdict"], "inconclusive");
  EXPECT_NE(results["baseline_source"].get<std::string>().find("(its verdict was error)"), std::string::npos);
}

TEST_P(BaselineFromHistoryTest, BadDatabasesAndBranchesAreOneLineAndExitTwo) {
  Add(nightly_, "aaaa1111");
  WriteFile(dir_ / "notes.sqlite", "this is not a database, not even close, but long enough to have a header page\n");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--baseline-from-history", dir_ / "missing.sqlite"}, "missing.sqlite: no such history database"},
      {{"--baseline-from-history", dir_ / "notes.sqlite"}, "notes.sqlite: "},
      {{"--baseline-from-history", db_, "--branch", "mian"},
       "no run of branch \"mian\" in the history (branches: main)"},
      {{"--branch", "main"}, "--branch requires --baseline-from-history"},
  };
  for (const auto& [options, expected] : cases) {
    std::vector<std::string> args = {"run", slow_, "--out", dir_ / "o"};
    args.insert(args.end(), options.begin(), options.end());
    CliRun run = RunCli(args);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find(expected), std::string::npos) << expected << "\n" << run.output;
    EXPECT_EQ(Lines(run.output), 1) << run.output;
  }
  EXPECT_FALSE(fs::exists(dir_ / "missing.sqlite"));
}

}  // namespace
}  // namespace perfgate::testing
