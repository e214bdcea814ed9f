// The instrumented mode's pieces that need no Valgrind: reading Cachegrind's and Callgrind's
// output, the wrapped launch, the metric names and the default check.
#include "run/instrumented.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include "base/error.h"

namespace perfgate {
namespace {

constexpr const char* kCachegrindOut = R"(desc: I1 cache:         32768 B, 64 B, 8-way associative
cmd: ./spin 10000000
events: Ir
fl=./csu/../csu/libc-start.c
fn=__libc_start_main@@GLIBC_2.34
128 2
134 3
fl=hash.c
fn=hash_block
12 600
13 400
fl=hash.h
fn=hash_block
3 5
fn=main
0 90000050
summary: 90001060
)";

TEST(Instrumented, CachegrindOutputGivesTheTotalAndEachFunctionsInstructions) {
  const std::optional<InstructionCounts> counts = ParseValgrindCounts(kCachegrindOut);
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ(counts->total, 90001060u);
  EXPECT_EQ(counts->by_function.at("__libc_start_main@@GLIBC_2.34"), 5u);
  EXPECT_EQ(counts->by_function.at("hash_block"), 1005u) << "an inlined part in another file counts to it";
  EXPECT_EQ(counts->by_function.at("main"), 90000050u);
}

// Callgrind's uncompressed output: a call's line ("calls=") is followed by
// the call's inclusive cost, which is the callee's, not the caller's own.
constexpr const char* kCallgrindOut = R"(# callgrind format
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir
summary: 1290

ob=/usr/bin/bench
fl=bench.cpp
fn=BM_Hash(benchmark::State&)
10 200
cfl=hash.c
cfn=hash_block
calls=4 12
11 1000
12 40
fl=hash.c
fn=hash_block
12 1000
fn=benchmark::State::StartKeepRunning()
0 50

totals: 1290
)";

TEST(Instrumented, CallgrindOutputCountsEachFunctionsOwnInstructionsNotItsCalls) {
  const std::optional<InstructionCounts> counts = ParseValgrindCounts(kCallgrindOut);
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ(counts->total, 1290u);
  EXPECT_EQ(counts->by_function.at("BM_Hash(benchmark::State&)"), 240u) << "the call's 1000 are hash_block's";
  EXPECT_EQ(counts->by_function.at("hash_block"), 1000u);
  EXPECT_EQ(counts->by_function.at("benchmark::State::StartKeepRunning()"), 50u);
}

TEST(Instrumented, OutputOfAnotherEventOrWithoutSummaryIsRejected) {
  EXPECT_FALSE(ParseValgrindCounts("events: I1mr Ir\nfn=main\n0 1 2\nsummary: 1 2\n").has_value());
  EXPECT_FALSE(ParseValgrindCounts("events: Ir\nfn=main\n0 1\n").has_value());
  EXPECT_FALSE(ParseValgrindCounts("events: Ir\nsummary: lots\n").has_value());
  EXPECT_FALSE(ParseValgrindCounts("").has_value());
}

TEST(Instrumented, FunctionNamesBecomeMetricNames) {
  EXPECT_EQ(FunctionMetricName("hash_block"), "instr.hash_block");
  EXPECT_EQ(FunctionMetricName("std::vector<int>::push_back(int const&)"),
            "instr.std::vector<int>::push_back_int_const__");
  EXPECT_EQ(FunctionMetricName("memcpy@@GLIBC_2.14"), "instr.memcpy__GLIBC_2_14");
  EXPECT_EQ(FunctionMetricName("deflate.cold"), "instr.deflate_cold");
  EXPECT_EQ(FunctionMetricName("(below main)"), "instr._below_main_");
  EXPECT_EQ(FunctionMetricName("..."), "");
  EXPECT_TRUE(IsMetricName(FunctionMetricName("operator new(unsigned long)")));
}

TEST(Instrumented, MetricsHaveTheTotalAndTheFunctionsAboveTheFloor) {
  InstructionCounts counts;
  counts.total = 1000000;
  counts.by_function = {{"big", 600000}, {"f(int)", 150}, {"f[int]", 200}, {"tiny", 99}};
  MetricSet metrics;
  AddInstructionMetrics(counts, 2.0, metrics);
  ASSERT_EQ(metrics.count("instr.total"), 1u);
  EXPECT_EQ(metrics.at("instr.total").value, 1e6);
  EXPECT_EQ(metrics.at("instr.total").kind, MetricKind::kCounter);
  EXPECT_EQ(metrics.at("instr.total").duration_s, 2.0);
  EXPECT_EQ(metrics.at("instr.big").value, 600000);
  EXPECT_EQ(metrics.count("instr.tiny"), 0u) << "below 0.01 % of the total";
  EXPECT_EQ(metrics.at("instr.f_int_").value, 350) << "two functions that read alike add up";
}

TEST(Instrumented, LaunchRunsTheWorkloadUnderCachegrindWithoutCacheSimulation) {
  const std::vector<std::string> argv = InstrumentedArgv({"/bin/sh", "-c", "true"}, "/tmp/x");
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[0], ValgrindExecutable());
  EXPECT_NE(argv[0].find("valgrind"), std::string::npos);
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--tool=cachegrind"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--cache-sim=no"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--trace-children=yes"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--cachegrind-out-file=/tmp/x/cachegrind.out.%p"), argv.end());
  EXPECT_EQ(std::vector<std::string>(argv.end() - 3, argv.end()), (std::vector<std::string>{"/bin/sh", "-c", "true"}));
}

TEST(Instrumented, PausesRunTheWorkloadUnderCallgrindCollectingOutsideThem) {
  const std::vector<std::string> argv =
      InstrumentedArgv({"/bin/sh", "-c", "true"}, "/tmp/x", {"benchmark::*Reporter::Report*"});
  const auto at = [&](const std::string& arg) { return std::find(argv.begin(), argv.end(), arg) - argv.begin(); };
  EXPECT_LT(at("--tool=callgrind"), static_cast<long>(argv.size()));
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--tool=cachegrind"), argv.end());
  EXPECT_LT(at("--callgrind-out-file=/tmp/x/callgrind.out.%p"), static_cast<long>(argv.size()));
  EXPECT_LT(at("--fair-sched=yes"), static_cast<long>(argv.size()));
  // A toggle would otherwise start collection off: collection at start comes after it.
  EXPECT_LT(at("--toggle-collect=benchmark::*Reporter::Report*"), at("--collect-atstart=yes"));
  EXPECT_LT(at("--collect-atstart=yes"), static_cast<long>(argv.size()));
  EXPECT_EQ(std::vector<std::string>(argv.end() - 3, argv.end()), (std::vector<std::string>{"/bin/sh", "-c", "true"}));
}

// The exit code of the error ReadInstructionCounts(dir) throws; nullopt when none.
std::optional<ExitCode> ReadError(const std::filesystem::path& dir) {
  try {
    ReadInstructionCounts(dir);
  } catch (const Error& e) {
    return e.code();
  }
  return std::nullopt;
}

TEST(Instrumented, CountsOfEveryProcessAddUpAndNoneIsAnInfrastructureError) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "perfgate-instrumented-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EXPECT_EQ(ReadError(dir), ExitCode::kInfra);
  std::ofstream(dir / "cachegrind.out.100") << kCachegrindOut;
  std::ofstream(dir / "cachegrind.out.101") << "events: Ir\nfn=main\n0 40\nsummary: 40\n";
  std::ofstream(dir / "callgrind.out.102") << kCallgrindOut;
  std::ofstream(dir / "unrelated.txt") << "garbage";
  const InstructionCounts counts = ReadInstructionCounts(dir);
  EXPECT_EQ(counts.total, 90002390u);
  EXPECT_EQ(counts.by_function.at("main"), 90000090u);
  EXPECT_EQ(counts.by_function.at("hash_block"), 2005u);
  std::ofstream(dir / "callgrind.out.103") << "garbage";
  EXPECT_EQ(ReadError(dir), ExitCode::kInfra);
  std::filesystem::remove_all(dir);
}

TEST(Instrumented, InstrumentedScenariosGetACheckOnInstrTotalOnce) {
  Suite suite;
  ScenarioSpec command, timed, fio, checked;
  command.name = "cmd";
  command.workload.kind = "command";
  command.instrument = true;
  timed.name = "timed";
  timed.workload.kind = "command";
  fio.name = "fio";
  fio.workload.kind = "fio";
  fio.instrument = true;  // not a kind Valgrind can run (the suite parser refuses it)
  checked.name = "checked";
  checked.workload.kind = "gbench";
  checked.instrument = true;
  CheckSpec own;
  own.metric = "instr.total";
  own.max_regression_pct = 2;
  checked.checks.push_back(own);
  suite.scenarios = {command, timed, fio, checked};
  AddInstructionChecks(suite);
  ASSERT_EQ(suite.scenarios[0].checks.size(), 1u);
  EXPECT_EQ(suite.scenarios[0].checks[0].metric, "instr.total");
  EXPECT_EQ(suite.scenarios[0].checks[0].name, kInstructionTotalCheck);
  EXPECT_EQ(suite.scenarios[0].checks[0].statistic, "count");
  EXPECT_EQ(suite.scenarios[0].checks[0].max_regression_pct, kInstructionCountThresholdPct);
  EXPECT_TRUE(suite.scenarios[1].checks.empty());  // timed: not instrumented
  EXPECT_TRUE(suite.scenarios[2].checks.empty());
  ASSERT_EQ(suite.scenarios[3].checks.size(), 1u);
  EXPECT_EQ(suite.scenarios[3].checks[0].max_regression_pct, 2);
}

}  // namespace
}  // namespace perfgate
