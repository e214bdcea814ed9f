// The "why" of a regression names its cause: pg-smoke, the shipped workload,
// with one kernel behaviour planted per scenario (more syscalls, more page
// faults, longer sleeps, longer lock waits), run by `perfgate ab` under the
// probes that see all of them. The wall-time or CPU-time check fails, and
// the first cause of each scenario's "why" in results.json must be the
// planted behaviour; no host metric may be a cause.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/files.h"
#include "harness/paths.h"

namespace perfgate::testing {
namespace {

struct Plant {
  std::string scenario;
  std::string variable;  // ${NAME} in the scenario's argv
  std::string baseline;
  std::string candidate;
  std::string cause;  // regex the first cause's metric must match
};

// Every scenario makes syscalls, faults and sleeps at the baseline's level and
// turns one kernel behaviour up; the lock scenario adds a helper thread that
// holds a mutex the loop waits for (21 times in the 150 iterations: with 10
// waits the plant's +100 ms hid beside a burner, whose scheduling delays
// stretched the baseline's waits to 415 ms). Each plant at least doubles the loop's
// CPU or wall time, so that a time check fails even beside a CPU-burning
// neighbour, and pairs are added while a check is undecided. (An idle helper
// in every scenario would make its sleep stretch with the run: the report
// compares off-CPU waits per second of the run for that, but on a host with
// several runnable tasks per CPU a run 30 times longer than its baseline
// turns the noise of that ratio into milliseconds.)
const std::vector<Plant> kPlants = {
    // 256 calls added 30 % beside a CPU burner, which a confirmation round's
    // outlier could take back within the 10 % threshold.
    {"more-syscalls", "WHY_SYSCALLS", "16", "1024", R"(^syscalls\.(count|time)(\..+)?$)"},
    {"more-page-faults", "WHY_MAP_KIB", "128", "512", R"(^(mm\.page_faults(\..+)?|workload\.page_faults)$)"},
    {"longer-sleeps", "WHY_SLEEP_US", "100", "10000", R"(^sched\.offcpu\.sleep$)"},
    {"longer-lock-waits", "WHY_LOCK_HOLD_US", "100", "10000", R"(^lock\.futex_wait(_time)?$)"},
};

std::string Argv(const Plant& plant) {
  auto value = [&](const std::string& variable, const std::string& fixed) {
    return plant.variable == variable ? "${" + variable + "}" : fixed;
  };
  const std::vector<std::string> args = {PERFGATE_SMOKE_BIN,
                                         "--iterations",
                                         "150",
                                         "--syscalls",
                                         value("WHY_SYSCALLS", "16"),
                                         "--map-kib",
                                         value("WHY_MAP_KIB", "128"),
                                         "--sleep-every",
                                         "10",
                                         "--sleep-us",
                                         value("WHY_SLEEP_US", "100"),
                                         "--lock-every",
                                         plant.variable == "WHY_LOCK_HOLD_US" ? "7" : "0",
                                         "--lock-hold-us",
                                         value("WHY_LOCK_HOLD_US", "100")};
  return nlohmann::json(args).dump();
}

std::string WhySuite() {
  nlohmann::json scenarios = nlohmann::json::array();
  for (const Plant& plant : kPlants) {
    scenarios.push_back(nlohmann::json::parse(R"({"name": ")" + plant.scenario + R"(",
      "workload": {"kind": "command", "argv": )" +
                                              Argv(plant) + R"(},
      "warmup": 1, "repetitions": {"min": 7, "max": 15}, "timeout_s": 60,
      "probes": ["runqlat", "syscalls", "pagefault", "offcpu", "futex", "kmem"],
      "checks": [{"metric": "workload.wall_time", "type": "regression", "max_regression_pct": 10},
                 {"metric": "workload.cpu_time", "type": "regression", "max_regression_pct": 10}]})"));
  }
  return nlohmann::json({{"name", "why"}, {"scenarios", scenarios}}).dump(2);
}

TEST(WhyTest, FirstCauseIsThePlantedKernelBehaviour) {
  PERFGATE_REQUIRE_ROOT();
  ScratchDir dir;
  WriteFile(dir / "suite.json", WhySuite());
  std::vector<std::string> args = {"ab", dir / "suite.json", "--out", dir / "out", "--quiet"};
  for (const Plant& plant : kPlants) {
    args.insert(args.end(), {"--baseline-set", plant.variable + "=" + plant.baseline, "--candidate-set",
                             plant.variable + "=" + plant.candidate});
  }
  CliRun run = RunCli(args);
  ASSERT_EQ(run.exit_code, 1) << run.output;
  const nlohmann::json results = nlohmann::json::parse(ReadFile(dir / "out/results.json"));
  for (const Plant& plant : kPlants) {
    SCOPED_TRACE(plant.scenario);
    const nlohmann::json* why = nullptr;
    for (const auto& scenario : results["scenarios"]) {
      if (scenario["name"] == plant.scenario && scenario.contains("explanation")) why = &scenario["explanation"];
    }
    std::string checks;
    for (const auto& scenario : results["scenarios"]) {
      if (scenario["name"] != plant.scenario) continue;
      for (const auto& check : scenario["checks"]) checks += "\n" + check["message"].get<std::string>();
    }
    ASSERT_NE(why, nullptr) << "no time check failed:" << checks;
    EXPECT_EQ((*why)["per"], "op");
    const nlohmann::json& causes = (*why)["causes"];
    ASSERT_FALSE(causes.empty()) << why->dump(2);
    const std::string first = causes[0]["metric"];
    EXPECT_TRUE(std::regex_search(first, std::regex(plant.cause))) << why->dump(2);
    EXPECT_NE(causes[0]["pricing"], "unpriced") << why->dump(2);
    for (const auto& cause : causes) {
      const std::string metric = cause["metric"];
      EXPECT_NE(metric.rfind("host.", 0), 0u) << why->dump(2);
      if (cause["pricing"] != "unpriced") {
        EXPECT_GT(cause["accounted_at_least_s"].get<double>(), 0) << metric;
      }
    }
    // The host's load is reported beside the causes, not among them.
    ASSERT_TRUE(why->contains("host_noise")) << why->dump(2);
    bool other_cpus = false;
    for (const auto& noise : (*why)["host_noise"]) other_cpus |= noise["metric"] == "host.other_cpus";
    EXPECT_TRUE(other_cpus) << why->dump(2);
  }

  // The same first cause leads the other reports.
  const std::string summary = ReadFile(dir / "out/summary.md");
  const std::string html = ReadFile(dir / "out/report/index.html");
  for (const auto& scenario : results["scenarios"]) {
    if (!scenario.contains("explanation")) continue;
    const std::string first = scenario["explanation"]["causes"][0]["metric"];
    const std::string markdown = std::regex_replace(first, std::regex("_"), "\\_");
    EXPECT_NE(summary.find(": " + markdown), std::string::npos) << summary;
    EXPECT_NE(html.find("<td class=\"name\">" + first + "."), std::string::npos);
  }
}

}  // namespace
}  // namespace perfgate::testing
