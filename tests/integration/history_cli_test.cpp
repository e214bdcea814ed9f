// The nightly and multi-runner commands through the perfgate binary: run
// --shard and merge, history add, trend, and export --push to a real
// Prometheus Pushgateway started for the test.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "cli_harness.h"
#include "metrics/results_json.h"
#include "privilege.h"

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

int FreeTcpPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// GET http://127.0.0.1:port/path; the whole response, "" when nothing answers.
std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, 0)) > 0;) response.append(buffer, static_cast<size_t>(n));
    }
  }
  close(fd);
  return response;
}

std::string FindPushgateway() {
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/usr/sbin"}) {
    std::string path = std::string(dir) + "/prometheus-pushgateway";
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

// A Pushgateway on a free loopback port with its storage in a scratch
// directory, stopped (by its pid) when the test ends.
class PushgatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string binary = FindPushgateway();
    if (binary.empty()) {
      if (RunningInCi()) FAIL() << "prometheus-pushgateway is not installed (CI=true; ci/install-deps.sh installs it)";
      GTEST_SKIP() << "prometheus-pushgateway is not installed";
    }
    port_ = FreeTcpPort();
    std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
    std::string storage = "--persistence.file=" + (dir_ / "pushgateway.data");
    std::string log = dir_ / "pushgateway.log";
    pid_ = fork();
    if (pid_ == 0) {
      FILE* out = freopen(log.c_str(), "w", stdout);
      (void)out;
      dup2(fileno(stdout), STDERR_FILENO);
      execl(binary.c_str(), binary.c_str(), listen.c_str(), storage.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    ASSERT_GT(pid_, 0);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (HttpGet(port_, "/-/ready").find(" 200 ") == std::string::npos) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "pushgateway did not start:\n" << ReadFile(log);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  void TearDown() override {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  ScratchDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

TEST_F(PushgatewayTest, PushedMetricsComeBackFromItsMetricsPage) {
  std::string results = WriteResults(dir_, "results.json", "nightly/arm64", {"camera \"cold\""}, 1.5);
  CliRun push = RunCli({"export", "--openmetrics", results, "--push", "http://127.0.0.1:" + std::to_string(port_)});
  ASSERT_EQ(push.exit_code, 0) << push.output;
  std::string metrics = HttpGet(port_, "/metrics");
  // The Pushgateway adds the grouping labels (job, suite) and sorts labels by name.
  EXPECT_NE(metrics.find("perfgate_workload_wall_time_value_seconds{instance=\"\",job=\"perfgate\","
                         "scenario=\"camera \\\"cold\\\"\",suite=\"nightly/arm64\"} 1.501"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("perfgate_exit_code{instance=\"\",job=\"perfgate\",suite=\"nightly/arm64\"} 0"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("push_time_seconds{instance=\"\",job=\"perfgate\",suite=\"nightly/arm64\"}"),
            std::string::npos)
      << metrics;
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
