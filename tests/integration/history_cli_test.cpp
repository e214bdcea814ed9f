// The nightly and multi-runner commands through the perfgate binary: run
// --shard and merge, history add, trend, and export --push to a real
// Prometheus Pushgateway started for the test, read back through Prometheus.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <vector>

#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/paths.h"
#include "harness/prometheus.h"
#include "metrics/results_json.h"

namespace perfgate::testing {
namespace {

namespace fs = std::filesystem;

// A results file of suite `suite` with one scenario per name, wall time `wall_s`.
std::string WriteResults(const ScratchDir& dir, const std::string& file, const std::string& suite,
                         const std::vector<std::string>& scenarios, double wall_s = 1.0,
                         const std::string& timestamp = "2024-05-01T00:00:00Z") {
  RunResults r;
  r.suite = suite;
  r.environment.timestamp = timestamp;
  r.environment.hostname = "runner-1";
  for (const auto& name : scenarios) {
    ScenarioResult s;
    s.name = name;
    for (int i = 0; i < 3; ++i) {
      Repetition rep;
      rep.index = i;
      rep.metrics["workload.wall_time"] = ScalarMetric("workload.wall_time", wall_s + 0.001 * i, "s");
      s.repetitions.push_back(rep);
    }
    r.scenarios.push_back(s);
  }
  std::string path = dir / file;
  WriteFile(path, ToJson(r).dump(2));
  return path;
}

TEST(MergeCli, MergesShardsAndWritesTheReportsNextToTheOutput) {
  ScratchDir dir;
  std::string a = WriteResults(dir, "a.json", "nightly", {"one", "three"});
  std::string b = WriteResults(dir, "b.json", "nightly", {"two"});
  CliRun merge = RunCli({"merge", a, b, "-o", dir / "merged/results.json"});
  ASSERT_EQ(merge.exit_code, 0) << merge.output;
  RunResults merged = ReadResultsFile(dir / "merged/results.json");
  ASSERT_EQ(merged.scenarios.size(), 3u);
  for (const char* f : {"junit.xml", "summary.md", "report/index.html", "report/report.css"}) {
    EXPECT_TRUE(fs::exists(dir / ("merged/" + std::string(f)))) << f;
  }
}

TEST(MergeCli, MixedSuitesAndDuplicatedScenariosExitTwoWithOneLine) {
  ScratchDir dir;
  std::string a = WriteResults(dir, "a.json", "nightly", {"one"});
  std::string other = WriteResults(dir, "other.json", "presubmit", {"two"});
  std::string again = WriteResults(dir, "again.json", "nightly", {"one"});
  for (const auto& [second, expected] : {std::pair{other, "differs from suite"}, std::pair{again, "is also in"}}) {
    CliRun merge = RunCli({"merge", a, second, "-o", dir / "m/results.json"});
    EXPECT_EQ(merge.exit_code, 2) << merge.output;
    EXPECT_NE(merge.output.find(expected), std::string::npos) << merge.output;
    EXPECT_EQ(std::count(merge.output.begin(), merge.output.end(), '\n'), 1) << merge.output;
    EXPECT_FALSE(fs::exists(dir / "m/results.json"));
  }
  WriteFile(dir / "bad.json", "{\"suite\": 1");
  CliRun corrupt = RunCli({"merge", a, dir / "bad.json", "-o", dir / "m/r.json"});
  EXPECT_EQ(corrupt.exit_code, 2) << corrupt.output;
  EXPECT_NE(corrupt.output.find("bad.json"), std::string::npos) << corrupt.output;
}

TEST(ShardCli, TwoShardsRunDisjointHalvesThatMergeIntoTheWholeSuite) {
  PERFGATE_REQUIRE_ROOT();
  ScratchDir dir;
  std::string scenarios;
  for (const char* name : {"a", "b", "c"}) {
    scenarios += std::string(scenarios.empty() ? "" : ",") + R"({"name": ")" + name +
                 R"(", "workload": {"kind": "command", "argv": ["/bin/true"]}, "warmup": 0, "repetitions": 2,)"
                 R"( "probes": [], "checks": [{"metric": "workload.wall_time", "type": "budget", "max": 60}]})";
  }
  WriteFile(dir / "suite.json", R"({"name": "sharded", "scenarios": [)" + scenarios + "]}");
  for (const char* shard : {"1/2", "2/2"}) {
    CliRun run = RunCli({"run", dir / "suite.json", "--shard", shard, "--quiet", "--baseline-dir", dir / "baselines",
                         "--out", dir / ("shard" + std::string(1, shard[0]))});
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }
  EXPECT_EQ(ReadResultsFile(dir / "shard1/results.json").scenarios.size(), 2u);  // a, c
  EXPECT_EQ(ReadResultsFile(dir / "shard2/results.json").scenarios.size(), 1u);  // b
  CliRun merge = RunCli({"merge", dir / "shard1/results.json", dir / "shard2/results.json", "-o", dir / "all.json",
                         "--baseline-dir", dir / "baselines"});
  ASSERT_EQ(merge.exit_code, 0) << merge.output;
  EXPECT_EQ(ReadResultsFile(dir / "all.json").scenarios.size(), 3u);
  CliRun bad = RunCli({"run", dir / "suite.json", "--shard", "3/2", "--out", dir / "x"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
}

// A suite of `count` cheap pg-smoke scenarios with regression and budget checks.
std::string SmokeSuite(const ScratchDir& dir, int count) {
  std::string scenarios;
  for (int i = 1; i <= count; ++i) {
    scenarios += std::string(scenarios.empty() ? "" : ",") + R"({"name": "s)" + std::to_string(i) +
                 R"(", "workload": {"kind": "command", "argv": [")" + std::string(PERFGATE_SMOKE_BIN) +
                 R"(", "--iterations", ")" + std::to_string(10 + 5 * i) +
                 R"("]}, "warmup": 0, "repetitions": 5, "probes": [], "checks": [)"
                 R"({"metric": "workload.wall_time", "type": "regression", "max_regression_pct": 10},)"
                 R"({"metric": "smoke.loop_time", "type": "regression", "max_regression_pct": 10},)"
                 R"({"metric": "workload.wall_time", "type": "budget", "max": 60, "name": "wall-budget"}]})";
  }
  std::string path = dir / "smoke-suite.json";
  WriteFile(path, R"({"name": "sharded-smoke", "scenarios": [)" + scenarios + "]}");
  return path;
}

// Three shards merged decide as one unsharded run: the unsharded run's
// results split by the shard rule (scenario i to shard i mod 3 + 1) and
// merged against the same baselines give every check the same verdict and
// p-values, and the same exit code; and real shard runs merged hold every
// scenario once. Merging measures nothing, so it decides at once, as a run
// with --no-confirm does: no fresh repetitions confirm a flagged regression.
TEST(ShardCli, ThreeShardsMergedDecideAsOneUnshardedRun) {
  PERFGATE_REQUIRE_ROOT();
  ScratchDir dir;
  const int kScenarios = 5;
  std::string suite = SmokeSuite(dir, kScenarios);
  std::string baselines = dir / "baselines";
  CliRun record = RunCli({"baseline", "record", suite, "--baseline-dir", baselines, "--out", dir / "rec", "--quiet"});
  ASSERT_EQ(record.exit_code, 0) << record.output;
  CliRun whole = RunCli({"run", suite, "--quiet", "--no-confirm", "--baseline-dir", baselines, "--out", dir / "A"});
  ASSERT_TRUE(whole.exit_code == 0 || whole.exit_code == 1) << whole.output;
  RunResults a = ReadResultsFile(dir / "A/results.json");
  ASSERT_EQ(a.scenarios.size(), static_cast<size_t>(kScenarios));

  nlohmann::json a_json = nlohmann::json::parse(ReadFile(dir / "A/results.json"));
  std::vector<std::string> shard_files;
  for (int shard = 0; shard < 3; ++shard) {
    nlohmann::json part = a_json;
    part["scenarios"] = nlohmann::json::array();
    for (size_t i = shard; i < a_json["scenarios"].size(); i += 3) part["scenarios"].push_back(a_json["scenarios"][i]);
    shard_files.push_back(dir / ("split" + std::to_string(shard + 1) + ".json"));
    WriteFile(shard_files.back(), part.dump(2));
  }
  CliRun merge = RunCli({"merge", shard_files[0], shard_files[1], shard_files[2], "-o", dir / "M/results.json",
                         "--baseline-dir", baselines});
  EXPECT_EQ(merge.exit_code, whole.exit_code) << merge.output << "\n" << whole.output;
  RunResults m = ReadResultsFile(dir / "M/results.json");
  EXPECT_EQ(m.exit_code, a.exit_code);
  EXPECT_EQ(m.verdict, a.verdict);
  std::map<std::string, const ScenarioResult*> merged;
  for (const ScenarioResult& s : m.scenarios) merged[s.name] = &s;
  ASSERT_EQ(merged.size(), a.scenarios.size());
  int tested = 0;  // regression checks with a p-value: the comparison below is not vacuous
  for (const ScenarioResult& s : a.scenarios) {
    for (const CheckResult& c : s.checks) tested += c.p_adjusted.has_value();
    ASSERT_TRUE(merged.count(s.name)) << s.name;
    const ScenarioResult& other = *merged[s.name];
    ASSERT_EQ(other.checks.size(), s.checks.size()) << s.name;
    for (size_t c = 0; c < s.checks.size(); ++c) {
      const CheckResult& x = s.checks[c];
      const CheckResult& y = other.checks[c];
      std::string what = s.name + " check " + std::to_string(c) + " (" + x.spec.metric + ")";
      EXPECT_EQ(y.verdict, x.verdict) << what;
      EXPECT_EQ(y.p_value, x.p_value) << what;
      EXPECT_EQ(y.p_adjusted, x.p_adjusted) << what;
      EXPECT_EQ(y.change_pct, x.change_pct) << what;
      EXPECT_EQ(y.message, x.message) << what;
    }
  }
  EXPECT_GE(tested, 2 * kScenarios);

  // Real shard runs: each scenario on exactly one runner.
  std::vector<std::string> shard_results;
  for (const char* shard : {"1/3", "2/3", "3/3"}) {
    std::string out = dir / ("shard" + std::string(1, shard[0]));
    CliRun run = RunCli({"run", suite, "--shard", shard, "--quiet", "--baseline-dir", baselines, "--out", out});
    ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.output;
    shard_results.push_back(out + "/results.json");
  }
  CliRun real = RunCli({"merge", shard_results[0], shard_results[1], shard_results[2], "-o", dir / "R/results.json",
                        "--baseline-dir", baselines});
  ASSERT_TRUE(real.exit_code == 0 || real.exit_code == 1) << real.output;
  std::multiset<std::string> names;
  for (const ScenarioResult& s : ReadResultsFile(dir / "R/results.json").scenarios) names.insert(s.name);
  EXPECT_EQ(names, (std::multiset<std::string>{"s1", "s2", "s3", "s4", "s5"}));
  EXPECT_EQ(ReadResultsFile(shard_results[0]).scenarios.size(), 2u);  // s1, s4
}

TEST(HistoryCli, AddsRunsAndDrawsTheTrendWithItsChangePoint) {
  ScratchDir dir;
  std::string db = dir / "history.sqlite";
  for (int i = 0; i < 16; ++i) {
    char timestamp[32];
    std::snprintf(timestamp, sizeof timestamp, "2024-05-%02dT00:00:00Z", i + 1);
    std::string file =
        WriteResults(dir, "r" + std::to_string(i) + ".json", "nightly", {"camera"}, i < 9 ? 1.0 : 1.25, timestamp);
    CliRun add =
        RunCli({"history", "add", file, "--db", db, "--commit", "sha" + std::to_string(i), "--branch", "main"});
    ASSERT_EQ(add.exit_code, 0) << add.output;
  }
  CliRun again = RunCli({"history", "add", dir / "r0.json", "--db", db, "--commit", "sha0", "--branch", "main"});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("already in the history"), std::string::npos) << again.output;

  CliRun trend = RunCli({"trend", "--db", db, "--out", dir / "trend"});
  ASSERT_EQ(trend.exit_code, 0) << trend.output;
  EXPECT_NE(trend.output.find("change point: nightly/camera workload.wall_time.value +25.0% at sha9"),
            std::string::npos)
      << trend.output;
  std::string html = ReadFile(dir / "trend/index.html");
  EXPECT_NE(html.find("<code>sha8..sha9</code>"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "trend/trend.css"));
}

TEST(HistoryCli, ConcurrentAddsWaitForEachOtherAndAllLand) {
  ScratchDir dir;
  std::string db = dir / "history.sqlite";
  std::string script;
  for (int i = 0; i < 6; ++i) {
    std::string file = WriteResults(dir, "r" + std::to_string(i) + ".json", "nightly", {"camera", "fio"});
    script += ShellQuote(PERFGATE_BIN) + " history add " + ShellQuote(file) + " --db " + ShellQuote(db) +
              " --commit c" + std::to_string(i) + " --branch main > /dev/null || echo failed & ";
  }
  std::string out = dir / "out.txt";
  ASSERT_EQ(std::system(("{ " + script + "wait; } > " + ShellQuote(out)).c_str()), 0);
  EXPECT_EQ(ReadFile(out), "");
  CliRun trend = RunCli({"trend", "--db", db, "--out", dir / "trend", "--statistic", "value"});
  ASSERT_EQ(trend.exit_code, 0) << trend.output;
  EXPECT_NE(trend.output.find("2 series, 0 change points"), std::string::npos) << trend.output;
  EXPECT_NE(ReadFile(dir / "trend/index.html").find("6 runs \u00b7 2 series"), std::string::npos);
}

TEST(HistoryCli, BadInputExitsTwoNamingTheFile) {
  ScratchDir dir;
  WriteFile(dir / "bad.json", "{\"schema_version\": 1, \"suite\": 3}");
  CliRun add = RunCli({"history", "add", dir / "bad.json", "--db", dir / "h.sqlite", "--commit", "c", "--branch", "b"});
  EXPECT_EQ(add.exit_code, 2) << add.output;
  EXPECT_NE(add.output.find("bad.json: $.suite"), std::string::npos) << add.output;

  WriteFile(dir / "notdb.sqlite", std::string(4096, 'x'));
  std::string ok = WriteResults(dir, "ok.json", "nightly", {"camera"});
  add = RunCli({"history", "add", ok, "--db", dir / "notdb.sqlite", "--commit", "c", "--branch", "b"});
  EXPECT_EQ(add.exit_code, 2) << add.output;
  EXPECT_NE(add.output.find("notdb.sqlite"), std::string::npos) << add.output;

  CliRun trend = RunCli({"trend", "--db", dir / "missing.sqlite", "--out", dir / "t"});
  EXPECT_EQ(trend.exit_code, 2) << trend.output;
  EXPECT_NE(trend.output.find("missing.sqlite"), std::string::npos) << trend.output;
}

// ---- Pushgateway ----

TEST_F(PushgatewayTest, EachScenarioGoesToItsOwnGroup) {
  std::string results = WriteResults(dir_, "results.json", "nightly/arm64", {"camera \"cold\"", "fio"}, 1.5);
  CliRun push = RunCli({"export", "--openmetrics", results, "--push", PushUrl()});
  ASSERT_EQ(push.exit_code, 0) << push.output;
  EXPECT_NE(push.output.find("/metrics/job/perfgate/suite@base64/bmlnaHRseS9hcm02NA==/scenario/fio/host/runner-1"),
            std::string::npos)
      << push.output;
  std::string metrics = HttpGet(port_, "/metrics");
  // The Pushgateway adds the grouping labels (job, suite, scenario, host) and sorts labels by name.
  EXPECT_NE(metrics.find("perfgate_workload_wall_time_value_seconds{host=\"runner-1\",instance=\"\",job=\"perfgate\","
                         "scenario=\"camera \\\"cold\\\"\",suite=\"nightly/arm64\"} 1.501"),
            std::string::npos)
      << metrics;
  for (const char* scenario : {"camera \\\"cold\\\"", "fio"}) {
    std::string labels = "{host=\"runner-1\",instance=\"\",job=\"perfgate\",scenario=\"" + std::string(scenario) +
                         "\",suite=\"nightly/arm64\"}";
    EXPECT_NE(metrics.find("perfgate_exit_code" + labels + " 0"), std::string::npos) << scenario << "\n" << metrics;
    EXPECT_NE(metrics.find("push_time_seconds" + labels), std::string::npos) << scenario << "\n" << metrics;
  }

  // A later push of one scenario (a shard, a rerun) replaces only its group.
  std::string fio = WriteResults(dir_, "fio.json", "nightly/arm64", {"fio"}, 2.5);
  push = RunCli({"export", "--openmetrics", fio, "--push", PushUrl()});
  ASSERT_EQ(push.exit_code, 0) << push.output;
  metrics = HttpGet(port_, "/metrics");
  EXPECT_NE(metrics.find("scenario=\"fio\",suite=\"nightly/arm64\"} 2.501"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("scenario=\"camera \\\"cold\\\"\",suite=\"nightly/arm64\"} 1.501"), std::string::npos)
      << metrics;
}

TEST_F(PrometheusTest, PushedValuesComeBackThroughTheQueryApi) {
  std::string results = WriteResults(dir_, "results.json", "nightly/arm64", {"camera \"cold\"", "fio"}, 1.5);
  CliRun push = RunCli({"export", "--openmetrics", results, "--push", PushUrl()});
  ASSERT_EQ(push.exit_code, 0) << push.output;

  nlohmann::json found = Query(R"(perfgate_workload_wall_time_value_seconds{suite="nightly/arm64"})", 30);
  ASSERT_EQ(found.size(), 2u) << found.dump();
  std::set<std::string> scenarios;
  for (const auto& series : found) {
    EXPECT_EQ(series["metric"]["job"], "perfgate") << series.dump();
    EXPECT_EQ(series["metric"]["suite"], "nightly/arm64") << series.dump();
    EXPECT_EQ(series["value"][1], "1.501") << series.dump();
    scenarios.insert(series["metric"]["scenario"].get<std::string>());
  }
  EXPECT_EQ(scenarios, (std::set<std::string>{"camera \"cold\"", "fio"}));

  found = Query(R"(perfgate_exit_code{suite="nightly/arm64",scenario="fio"})", 10);
  ASSERT_EQ(found.size(), 1u) << found.dump();
  EXPECT_EQ(found[0]["value"][1], "0") << found.dump();
}

TEST_F(PushgatewayTest, APushNobodyAcceptsExitsThree) {
  std::string results = WriteResults(dir_, "results.json", "nightly", {"camera"});
  CliRun push =
      RunCli({"export", "--openmetrics", results, "--push", "http://127.0.0.1:" + std::to_string(FreeTcpPort())});
  EXPECT_EQ(push.exit_code, 3) << push.output;
  EXPECT_NE(push.output.find("cannot connect"), std::string::npos) << push.output;
}

TEST(ExportCli, PrintsOpenMetricsEndingInEof) {
  ScratchDir dir;
  CliRun run = RunCli({"export", "--openmetrics", WriteResults(dir, "r.json", "nightly", {"camera"})});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("# UNIT perfgate_workload_wall_time_value_seconds seconds"), std::string::npos);
  EXPECT_EQ(run.output.substr(run.output.size() - 6), "# EOF\n");
}

}  // namespace
}  // namespace perfgate::testing
