// perfgate ab: baseline and candidate variants of a suite, interleaved in one
// job and judged by the same verdict engine.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <regex>
#include <sstream>

#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/paths.h"

namespace perfgate::testing {
namespace {

namespace fs = std::filesystem;

// A suite of pg-smoke with adaptive repetitions and one timing check.
std::string AdaptiveSuite() {
  return R"({"name": "ab", "scenarios": [{"name": "loop",
    "workload": {"kind": "command", "argv": [")" +
         std::string(PERFGATE_SMOKE_BIN) + R"(", "--iterations", "200"]},
    "warmup": 1, "repetitions": {"min": 4, "max": 10}, "timeout_s": 30,
    "probes": [{"name": "syscalls"}],
    "checks": [{"metric": "syscalls.count", "statistic": "per_op", "type": "regression", "max_regression_pct": 10},
               {"metric": "workload.cpu_time", "type": "regression", "max_regression_pct": 25}]}]})";
}

// The "<side> repetition N" progress lines, in the order they ran: the side
// and N.
std::vector<std::pair<std::string, int>> SidesInOrder(const std::string& output) {
  std::vector<std::pair<std::string, int>> sides;
  const std::regex line(R"(: (baseline|candidate) repetition ([0-9]+): [0-9.]+ s)");
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it)
    sides.emplace_back((*it)[1], std::stoi((*it)[2]));
  return sides;
}

TEST(AbTest, SlowerCandidateFailsAndThePairsAlternate) {
  PERFGATE_REQUIRE_ROOT();
  ScratchDir dir;
  CliRun run = RunCli({"ab", kSmokeSuite, "--baseline-set", "SMOKE_SLOWDOWN=1.0", "--candidate-set",
                       "SMOKE_SLOWDOWN=1.3", "--out", dir / "out"},
                      {kSmokeHalfLoop});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  const std::string junit = ReadFile(dir / "out/junit.xml");
  EXPECT_NE(junit.find("type=\"PerfRegression\""), std::string::npos) << junit;

  // Pairs in alternating order: AB, BA, AB, ... (7 repetitions per side),
  // then as many fresh pairs again that confirm the flagged regressions. A
  // round measured while the host was busy is measured again, in its order.
  const std::vector<std::pair<std::string, int>> sides = SidesInOrder(run.output);
  ASSERT_GE(sides.size(), 28u) << run.output;
  ASSERT_EQ(sides.size() % 2, 0u) << run.output;
  for (size_t pair = 0; pair < sides.size() / 2; ++pair) {
    const auto& [first, n] = sides[2 * pair];
    EXPECT_EQ(first, n % 2 == 1 ? "baseline" : "candidate") << "pair " << pair + 1 << "\n" << run.output;
    EXPECT_NE(first, sides[2 * pair + 1].first) << "pair " << pair + 1;
    EXPECT_EQ(n, sides[2 * pair + 1].second) << "pair " << pair + 1;
  }
  // Both sides are kept: the baseline's repetitions in results.json for the
  // report, and as a results file of their own.
  // A busy host may extend the 7 pairs, and the confirmation's, up to 28.
  const nlohmann::json results = nlohmann::json::parse(ReadFile(dir / "out/results.json"));
  const nlohmann::json& scenario = results["scenarios"][0];
  const bool extended = scenario.contains("adaptive") && scenario["adaptive"].value("busy_host", false);
  const size_t pairs = scenario["repetitions"].size();
  if (extended) {
    EXPECT_GE(pairs, 7u);
    EXPECT_LE(pairs, 28u);
  } else {
    EXPECT_EQ(pairs, 7u) << run.output;
  }
  size_t confirmed = 0;
  for (const nlohmann::json& check : scenario["checks"]) {
    if (check["verdict"] != "regression") continue;
    ASSERT_TRUE(check.contains("confirmation")) << check.dump();
    EXPECT_EQ(check["confirmation"]["confirmed"], true) << check.dump();
    const int fresh = check["confirmation"]["pairs"].get<int>();
    if (extended) {
      EXPECT_GE(fresh, 7) << check.dump();
      EXPECT_LE(fresh, 28) << check.dump();
    } else {
      EXPECT_EQ(fresh, 7) << check.dump();
    }
    EXPECT_NE(check["message"].get<std::string>().find("confirmed in " + std::to_string(fresh) + " fresh pairs"),
              std::string::npos);
    ++confirmed;
  }
  EXPECT_GE(confirmed, 2u) << "CPU time and syscalls per operation grew 30 %";
  EXPECT_EQ(scenario["baseline_repetitions"].size(), pairs);
  const nlohmann::json baseline = nlohmann::json::parse(ReadFile(dir / "out/baseline-results.json"));
  EXPECT_EQ(baseline["scenarios"][0]["repetitions"].size(), pairs);
}

TEST(AbTest, SameCommandOnBothSidesPassesAndAdaptiveRunsStopEarly) {
  PERFGATE_REQUIRE_ROOT();
  ScratchDir dir;
  WriteFile(dir / "suite.json", AdaptiveSuite());
  const std::string command = std::string(PERFGATE_SMOKE_BIN) + " --iterations 200";
  CliRun run = RunCli({"ab", dir / "suite.json", "--baseline-cmd", command, "--candidate-cmd", command, "--out",
                       dir / "out", "--quiet"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json results = nlohmann::json::parse(ReadFile(dir / "out/results.json"));
  const nlohmann::json& scenario = results["scenarios"][0];
  ASSERT_TRUE(scenario.contains("adaptive")) << scenario.dump();
  EXPECT_EQ(scenario["adaptive"]["paired"], true);
  EXPECT_EQ(scenario["adaptive"]["min"], 4);
  const size_t n = scenario["repetitions"].size();
  EXPECT_GE(n, 4u);
  EXPECT_LE(n, 10u);
  EXPECT_EQ(scenario["baseline_repetitions"].size(), n);
  // Identical sides: the syscall count per operation does not move, so no
  // check can still regress once the first look has passed it.
  for (const auto& check : scenario["checks"]) EXPECT_NE(check["verdict"], "regression") << check.dump();
}

TEST(AbTest, BadOptionsExitTwoNamingTheOption) {
  ScratchDir dir;
  CliRun none = RunCli({"ab", kSmokeSuite, "--out", dir / "a"});
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("--baseline-cmd"), std::string::npos) << none.output;

  CliRun unclosed = RunCli({"ab", kSmokeSuite, "--baseline-cmd", "x 'y", "--candidate-cmd", "x", "--out", dir / "b"});
  EXPECT_EQ(unclosed.exit_code, 2) << unclosed.output;
  EXPECT_NE(unclosed.output.find("--baseline-cmd: unclosed '"), std::string::npos) << unclosed.output;

  CliRun assignment = RunCli({"ab", kSmokeSuite, "--candidate-set", "NOEQUALS", "--out", dir / "c"});
  EXPECT_EQ(assignment.exit_code, 2) << assignment.output;
  EXPECT_NE(assignment.output.find("--candidate-set: expected NAME=VALUE"), std::string::npos) << assignment.output;

  // A name the suite never expands: both sides would run the same program.
  CliRun unused = RunCli(
      {"ab", kSmokeSuite, "--baseline-set", "BULID_DIR=a", "--candidate-set", "BULID_DIR=b", "--out", dir / "e"});
  EXPECT_EQ(unused.exit_code, 2) << unused.output;
  EXPECT_NE(unused.output.find("--baseline-set BULID_DIR=a: the suite expands no ${BULID_DIR}"), std::string::npos)
      << unused.output;
  EXPECT_FALSE(fs::exists(fs::path(dir / "e") / "results.json"));

  const std::string fio_suite = std::string(PERFGATE_SOURCE_DIR) + "/workloads/fio/fio.json";
  CliRun fio = RunCli({"ab", fio_suite, "--baseline-cmd", "fio a.fio", "--candidate-cmd", "fio b.fio", "--out", dir / "d"});
  EXPECT_EQ(fio.exit_code, 2) << fio.output;
  EXPECT_NE(fio.output.find("runs a fio workload"), std::string::npos) << fio.output;
  EXPECT_NE(fio.output.find("--baseline-set NAME=VALUE"), std::string::npos) << fio.output;
}

// With every CPU kept busy by a constant load, each round is tainted, but
// both arms of a round saw the same load: a fair pair, kept rather than
// measured again (a retake would learn nothing), and marked; the report says
// so. A round the load hit unevenly may still be retaken, within the budget.
// Burners on every CPU and one more, for as long as the object lives.
class Burners {
 public:
  Burners() {
    for (long cpu = 0; cpu < sysconf(_SC_NPROCESSORS_ONLN) + 1; ++cpu) {
      const pid_t pid = fork();
      if (pid == 0) {
        std::atomic<uint64_t> spins{0};
        for (;;) spins.fetch_add(1, std::memory_order_relaxed);
      }
      pids_.push_back(pid);
    }
  }
  ~Burners() {
    for (pid_t pid : pids_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  Burners(const Burners&) = delete;
  Burners& operator=(const Burners&) = delete;

 private:
  std::vector<pid_t> pids_;
};

// A suite of pg-smoke with no warm-up, a fixed count of repetitions and one
// check of its CPU time.
std::string CpuTimeSuite(int repetitions, int threshold_pct) {
  return R"({"name": "busy", "scenarios": [{"name": "loop",
    "workload": {"kind": "command", "argv": [")" +
         std::string(PERFGATE_SMOKE_BIN) + R"("]}, "warmup": 0, "repetitions": )" + std::to_string(repetitions) +
         R"(, "timeout_s": 60, "checks": [{"metric": "workload.cpu_time", "type": "regression",
    "max_regression_pct": )" +
         std::to_string(threshold_pct) + "}]}]}";
}

// perfgate ab of dir/suite.json, pg-smoke with `baseline` and `candidate`
// iterations, beside burners on every CPU and one more; reports in dir/out.
CliRun AbBesideBurners(const ScratchDir& dir, int baseline, int candidate) {
  const std::string bin = PERFGATE_SMOKE_BIN;
  Burners burners;
  return RunCli({"ab", dir / "suite.json", "--baseline-cmd", bin + " --iterations " + std::to_string(baseline),
                 "--candidate-cmd", bin + " --iterations " + std::to_string(candidate), "--out", dir / "out"});
}

TEST(AbTest, RoundsBesideAConstantLoadAreKeptAsFairPairsAndMarked) {
  PERFGATE_REQUIRE_ROOT();
  ScratchDir dir;
  WriteFile(dir / "suite.json", CpuTimeSuite(4, 50));
  const CliRun run = AbBesideBurners(dir, 2000, 2000);
  const nlohmann::json results = nlohmann::json::parse(ReadFile(dir / "out/results.json"));
  const nlohmann::json& scenario = results["scenarios"][0];
  // Both sides of each retaken round, if any: the budget is max(2, 4 / 2) rounds.
  if (scenario.contains("retaken_repetitions")) {
    EXPECT_LE(scenario["retaken_repetitions"].size(), 4u) << run.output;
  }
  // A/A beside the load: a busy host may extend the 4 pairs (up to 16) while a
  // check could still regress, which an unchanged command rarely makes it do.
  const size_t pairs = scenario["repetitions"].size();
  EXPECT_GE(pairs, 4u);
  EXPECT_LE(pairs, 16u);
  if (pairs > 4) {
    EXPECT_EQ(scenario["adaptive"]["busy_host"], true) << scenario["adaptive"].dump();
  }
  EXPECT_NE(scenario["checks"][0]["verdict"], "regression") << scenario["checks"][0].dump();
  size_t marked = 0, fair = 0;
  for (const nlohmann::json& rep : scenario["repetitions"]) {
    const std::string taint = rep.value("tainted", "");
    marked += !taint.empty();
    fair += taint.find("a fair pair") != std::string::npos;
  }
  EXPECT_EQ(marked, pairs) << run.output;
  EXPECT_GE(fair, 1u) << run.output;
  EXPECT_NE(ReadFile(dir / "out/summary.md").find("Host load in loop"), std::string::npos);
  EXPECT_NE(ReadFile(dir / "out/report/index.html").find("host-load"), std::string::npos);
}

// A fixed count of 3 pairs cannot decide a check (the paired test's smallest
// p-value with 3 pairs is 1/8), so beside a constant load the scenario becomes
// adaptive up to 12 pairs and the 50 % slower candidate fails, confirmed in
// fresh pairs extended alike.
TEST(AbTest, ABusyHostExtendsAFixedCountUntilTheSlowerCandidateIsDecided) {
  PERFGATE_REQUIRE_ROOT();
  ScratchDir dir;
  WriteFile(dir / "suite.json", CpuTimeSuite(3, 10));
  const CliRun run = AbBesideBurners(dir, 300, 450);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("the host was busy during its 3 rounds: measuring up to 12"), std::string::npos)
      << run.output;
  const nlohmann::json results = nlohmann::json::parse(ReadFile(dir / "out/results.json"));
  const nlohmann::json& scenario = results["scenarios"][0];
  ASSERT_TRUE(scenario.contains("adaptive")) << scenario.dump();
  EXPECT_EQ(scenario["adaptive"]["busy_host"], true);
  EXPECT_EQ(scenario["adaptive"]["min"], 3);
  EXPECT_EQ(scenario["adaptive"]["max"], 12);
  EXPECT_GT(scenario["repetitions"].size(), 3u);
  EXPECT_LE(scenario["repetitions"].size(), 12u);
  const nlohmann::json& check = scenario["checks"][0];
  EXPECT_EQ(check["verdict"], "regression") << check.dump();
  ASSERT_TRUE(check.contains("confirmation")) << check.dump();
  EXPECT_GT(check["confirmation"]["pairs"], 3) << check.dump();
  EXPECT_NE(ReadFile(dir / "out/summary.md").find("pairs measured: the suite's 3 were extended"), std::string::npos);
}

}  // namespace
}  // namespace perfgate::testing
