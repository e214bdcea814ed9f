// The ufunc probe against its test workload (tests/integration/fixtures):
// a child forked held on a pipe, tracked, then exec'ing pg-ufunc-target the
// way the runner starts a workload, so the uprobes are in place before the
// binary and its library are mapped.
#include <bpf/bpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/paths.h"
#include "harness/probe.h"
#include "metrics/results_json.h"
#include "probes/probe.h"
#include "probes/tracker.h"
#include "probes/ufunc_probe.h"

namespace perfgate {
namespace {

const std::string kTarget = PERFGATE_UFUNC_TARGET;
const std::string kLibrary = PERFGATE_UFUNC_LIB;
constexpr int kCalls = 1000;

struct TargetRun {
  MetricSet metrics;
  ProbeReport report;
};

// Attaches `probe` with `params`, runs the target with `calls` (tracked unless
// `track` is false: then this idle test process is the tracked workload) and
// collects.
TargetRun RunTarget(Probe& probe, const nlohmann::json& params, ProbeScope scope = ProbeScope::kWorkload,
                    int calls = kCalls, int depth = 3, bool track = true) {
  WorkloadTracker tracker;
  tracker.Attach({});
  ProbeOptions options;
  options.scope = scope;
  options.params = params;
  options.workload_path = kTarget;
  probe.Attach(options, &tracker);

  std::string calls_arg = std::to_string(calls), depth_arg = std::to_string(depth);
  HeldChild child([&] {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    execl(kTarget.c_str(), kTarget.c_str(), calls_arg.c_str(), depth_arg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  });
  tracker.Track(track ? child.pid() : getpid());
  probe.Reset();
  EXPECT_TRUE(child.RunToCompletion());
  TargetRun run;
  probe.Collect(1.0, run.metrics);
  run.report = probe.Report();
  return run;
}

double Calls(const TargetRun& run, const std::string& symbol) {
  auto it = run.metrics.find("ufunc." + symbol + ".calls");
  EXPECT_NE(it, run.metrics.end()) << symbol;
  return it == run.metrics.end() ? -1 : it->second.value;
}

uint64_t Timed(const TargetRun& run, const std::string& symbol) {
  auto it = run.metrics.find("ufunc." + symbol + ".latency");
  EXPECT_NE(it, run.metrics.end()) << symbol;
  return it == run.metrics.end() ? 0 : it->second.hist.count();
}

TEST(UfuncProbe, CountsAndTimesEveryCallOfANamespacedFunction) {
  PERFGATE_REQUIRE_ROOT();
  auto probe = CreateProbe("ufunc");
  ASSERT_NE(probe, nullptr);
  TargetRun run = RunTarget(*probe, {{"functions", {"pgtest::Work"}}});
  EXPECT_EQ(Calls(run, "pgtest::Work"), kCalls);
  EXPECT_EQ(Timed(run, "pgtest::Work"), static_cast<uint64_t>(kCalls));
  const Metric& latency = run.metrics.at("ufunc.pgtest::Work.latency");
  EXPECT_EQ(latency.unit, "ns");
  EXPECT_GT(latency.hist.Quantile(0.5), 0);
  EXPECT_EQ(run.metrics.at("ufunc.pgtest::Work.calls").kind, MetricKind::kCounter);
  for (const ProbeInfo& info : ProbeCatalog()) {
    if (info.name != "ufunc") continue;
    for (const std::string& problem : UndeclaredMetrics("probe ufunc", info.metrics, run.metrics))
      ADD_FAILURE() << problem;
  }

  ASSERT_EQ(run.report.hooks.size(), 1u);
  EXPECT_EQ(run.report.hooks[0].hook, "ufunc:1 function");
  EXPECT_EQ(run.report.hooks[0].attach_type, "uprobe");
  EXPECT_NE(run.report.hooks[0].target.find(kTarget + " (1)"), std::string::npos) << run.report.hooks[0].target;
  EXPECT_EQ(run.report.scope, "workload");
  EXPECT_EQ(run.report.drops, 0u);
}

TEST(UfuncProbe, GlobCoversOverloadsAndRecursion) {
  PERFGATE_REQUIRE_ROOT();
  auto probe = CreateProbe("ufunc");
  TargetRun run = RunTarget(*probe, {{"functions", {"pgtest::*"}}}, ProbeScope::kWorkload, kCalls, 5);
  EXPECT_EQ(Calls(run, "pgtest::Work"), kCalls);
  // Recurse(5) enters Recurse 6 times, nested: every call is timed.
  EXPECT_EQ(Calls(run, "pgtest::Recurse"), 6);
  EXPECT_EQ(Timed(run, "pgtest::Recurse"), 6u);
  // Overload(double) sorts first and keeps the plain name.
  EXPECT_EQ(Calls(run, "pgtest::Overload"), 1);
  EXPECT_EQ(Calls(run, "pgtest::Overload_2"), 1);
  EXPECT_EQ(run.report.hooks.at(0).hook, "ufunc:4 functions");
}

TEST(UfuncProbe, FindsFunctionsOfTheWorkloadsSharedLibrary) {
  PERFGATE_REQUIRE_ROOT();
  auto probe = CreateProbe("ufunc");
  TargetRun run = RunTarget(*probe, {{"functions", {"pgtest::Work", "pgtest_lib_scale", "pglib::Step"}}});
  EXPECT_EQ(Calls(run, "pgtest::Work"), kCalls);
  EXPECT_EQ(Calls(run, "pgtest_lib_scale"), kCalls);
  EXPECT_EQ(Timed(run, "pgtest_lib_scale"), static_cast<uint64_t>(kCalls));
  EXPECT_EQ(Calls(run, "pglib::Step"), 1);
  const std::string& target = run.report.hooks.at(0).target;
  EXPECT_NE(target.find(std::filesystem::path(kLibrary).filename().string() + " (2)"), std::string::npos) << target;
}

TEST(UfuncProbe, IgnoresUntrackedProcessesInWorkloadScope) {
  PERFGATE_REQUIRE_ROOT();
  auto probe = CreateProbe("ufunc");
  TargetRun run = RunTarget(*probe, {{"functions", {"pgtest::Work"}}}, ProbeScope::kWorkload, kCalls, 3, false);
  EXPECT_EQ(Calls(run, "pgtest::Work"), 0);
  EXPECT_EQ(Timed(run, "pgtest::Work"), 0u);
}

TEST(UfuncProbe, SystemScopeCountsEveryProcess) {
  PERFGATE_REQUIRE_ROOT();
  auto probe = CreateProbe("ufunc");
  TargetRun run = RunTarget(*probe, {{"functions", {"pgtest::Work"}}}, ProbeScope::kSystem, kCalls, 3, false);
  EXPECT_EQ(Calls(run, "pgtest::Work"), kCalls);
  EXPECT_EQ(run.report.scope, "system");
}

TEST(UfuncProbe, PerFunctionPerfEventUprobesCountTheSame) {
  PERFGATE_REQUIRE_ROOT();
  auto probe = MakeUfuncProbe(UfuncProbeOptions{.uprobe_multi = false});
  TargetRun run = RunTarget(*probe, {{"functions", {"pgtest::Work", "pgtest_lib_scale"}}});
  EXPECT_EQ(Calls(run, "pgtest::Work"), kCalls);
  EXPECT_EQ(Timed(run, "pgtest::Work"), static_cast<uint64_t>(kCalls));
  EXPECT_EQ(Calls(run, "pgtest_lib_scale"), kCalls);
  EXPECT_EQ(run.report.hooks.at(0).target.rfind("perf_event: ", 0), 0u) << run.report.hooks.at(0).target;
  EXPECT_EQ(run.report.hooks.at(0).rejected.size(), 1u);
}

TEST(UfuncProbe, ResetZeroesTheNextRepetition) {
  PERFGATE_REQUIRE_ROOT();
  auto probe = CreateProbe("ufunc");
  EXPECT_EQ(Calls(RunTarget(*probe, {{"functions", {"pgtest::Work"}}}), "pgtest::Work"), kCalls);
  EXPECT_EQ(Calls(RunTarget(*probe, {{"functions", {"pgtest::Work"}}}, ProbeScope::kWorkload, 10), "pgtest::Work"), 10);
}

void ExpectInputError(const nlohmann::json& params, const std::string& needle) {
  auto probe = CreateProbe("ufunc");
  WorkloadTracker tracker;
  tracker.Attach({});
  ProbeOptions options;
  options.params = params;
  options.workload_path = kTarget;
  try {
    probe->Attach(options, &tracker);
    FAIL() << "attached with " << params.dump();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
    EXPECT_NE(std::string(e.what()).find("probe ufunc"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
  EXPECT_TRUE(probe->Report().hooks.empty());
}

TEST(UfuncProbe, BadParametersAreInputErrors) {
  PERFGATE_REQUIRE_ROOT();
  ExpectInputError({{"functions", {"pgtest::NoSuchFunction*"}}}, "\"pgtest::NoSuchFunction*\"");
  ExpectInputError(nlohmann::json::object(), "\"functions\"");
  ExpectInputError({{"functions", nlohmann::json::array()}}, "\"functions\"");
  ExpectInputError({{"functions", {"main"}}, {"binary", "/nonexistent/app"}}, "/nonexistent/app");
}

TEST(UfuncProbe, DetachUnloadsItsProgramsAndLinks) {
  PERFGATE_REQUIRE_ROOT();
  for (bool multi : {true, false}) {
    std::set<uint32_t> before = ProgramIdsNamed("ufunc_");
    std::set<uint32_t> ours;
    {
      auto probe = MakeUfuncProbe(UfuncProbeOptions{.uprobe_multi = multi});
      RunTarget(*probe, {{"functions", {"pgtest::*", "pgtest_lib_scale"}}}, ProbeScope::kWorkload, 10);
      for (uint32_t id : ProgramIdsNamed("ufunc_"))
        if (!before.count(id)) ours.insert(id);
      EXPECT_EQ(ours.size(), 2u) << "entry and return programs";
      probe->Detach();
      EXPECT_EQ(ProgramIdsStillLoaded(ours), std::set<uint32_t>{}) << (multi ? "uprobe_multi" : "perf_event");
      // Attached again, the destructor must clean up.
      RunTarget(*probe, {{"functions", {"pgtest::Work"}}}, ProbeScope::kWorkload, 10);
      for (uint32_t id : ProgramIdsNamed("ufunc_"))
        if (!before.count(id)) ours.insert(id);
    }
    EXPECT_EQ(ProgramIdsStillLoaded(ours), std::set<uint32_t>{}) << (multi ? "uprobe_multi" : "perf_event");
  }
}

TEST(UfuncProbe, FailedAttachLeavesNothingLoaded) {
  PERFGATE_REQUIRE_ROOT();
  std::set<uint32_t> before = ProgramIdsNamed("ufunc_");
  auto probe = CreateProbe("ufunc");
  ProbeOptions options;
  options.scope = ProbeScope::kSystem;
  // Resolved in the given binary, then refused by the kernel: no such process
  // (above the default pid_max), for the uprobe_multi link and the
  // perf_event fallback alike, each after its programs were loaded.
  options.params = {{"functions", {"pgtest::Work"}}, {"binary", kTarget}, {"pid", 4194303}};
  try {
    probe->Attach(options, nullptr);
    FAIL() << "attached to a process that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kInfra) << e.what();
    EXPECT_NE(std::string(e.what()).find("ESRCH"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(probe->Report().hooks.empty());
  std::set<uint32_t> added;
  for (uint32_t id : ProgramIdsNamed("ufunc_"))
    if (!before.count(id)) added.insert(id);
  EXPECT_EQ(ProgramIdsStillLoaded(added), std::set<uint32_t>{});
}

// Through the CLI: a suite naming the probe with a glob, the workload's calls
// in results.json; a glob matching nothing is exit code 2.
class UfuncCli : public ::testing::Test {
 protected:
  void SetUp() override { PERFGATE_REQUIRE_ROOT(); }

  std::string Suite(const std::string& functions_json) {
    std::string path = dir_ / "suite.json";
    testing::WriteFile(path, R"({"name": "t", "scenarios": [{"name": "s", "workload": {"kind": "command", "argv": [")" +
                                 kTarget + R"(", "250"]}, "warmup": 0, "repetitions": 2, "timeout_s": 30,
                                 "probes": [{"name": "ufunc", "functions": )" +
                                 functions_json + R"(}], "checks": []}]})");
    return path;
  }

  testing::ScratchDir dir_;
};

TEST_F(UfuncCli, ResultsHoldTheCallsOfEveryRepetition) {
  testing::CliRun run =
      testing::RunCli({"run", Suite(R"(["pgtest::*"])"), "--baseline-dir", dir_ / "b", "--out", dir_ / "o", "--quiet"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  RunResults results = ReadResultsFile(dir_ / "o/results.json");
  ASSERT_EQ(results.scenarios.size(), 1u);
  const auto& reps = results.scenarios[0].repetitions;
  ASSERT_EQ(reps.size(), 2u);
  for (const auto& rep : reps) {
    EXPECT_EQ(rep.metrics.at("ufunc.pgtest::Work.calls").value, 250);
    EXPECT_EQ(rep.metrics.at("ufunc.pgtest::Work.latency").hist.count(), 250u);
  }
}

TEST_F(UfuncCli, AGlobMatchingNothingExitsTwo) {
  testing::CliRun run = testing::RunCli({"run", Suite(R"(["nosuch::*"])"), "--out", dir_ / "o", "--quiet"});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("\"nosuch::*\""), std::string::npos) << run.output;
}

TEST(UfuncProbesCommand, ListsTheProbeWithoutFailing) {
  PERFGATE_REQUIRE_ROOT();
  testing::CliRun run = testing::RunCli({"probes"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  size_t ufunc = run.output.find("  ufunc — ");
  ASSERT_NE(ufunc, std::string::npos) << run.output;
  EXPECT_NE(run.output.find("needs parameter \"functions\"", ufunc), std::string::npos) << run.output;
}

}  // namespace
}  // namespace perfgate
