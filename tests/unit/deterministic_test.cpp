// Near-deterministic checks (compare/deterministic.h) through EvaluateChecks:
// two or three repetitions a side decide a change of half a percent, and a
// spread that betrays the claim sends the check back to the rank tests.
#include "compare/deterministic.h"

#include <gtest/gtest.h>

#include "compare/compare.h"

namespace perfgate {
namespace {

ScenarioResult Counts(const std::vector<double>& values) {
  ScenarioResult scenario;
  scenario.name = "s";
  for (size_t i = 0; i < values.size(); ++i) {
    Repetition rep;
    rep.index = static_cast<int>(i);
    rep.metrics["instr.total"] = CounterMetric("instr.total", "instructions", values[i], 1.0);
    scenario.repetitions.push_back(std::move(rep));
  }
  CheckResult check;
  check.spec.metric = "instr.total";
  check.spec.statistic = "count";
  check.spec.max_regression_pct = 0.5;
  check.spec.name = "instr.total.count";
  scenario.checks.push_back(check);
  return scenario;
}

CheckResult Evaluate(const std::vector<double>& baseline, const std::vector<double>& candidate,
                     bool interleaved = false) {
  RunResults run;
  run.scenarios.push_back(Counts(candidate));
  std::map<std::string, ScenarioResult> base{{"s", Counts(baseline)}};
  CompareOptions options;
  options.interleaved = interleaved;
  EvaluateChecks(run, base, options);
  return run.scenarios[0].checks[0];
}

TEST(NearDeterministic, ThreeRepetitionsASideDecideAOnePercentGrowthAgainstAHalfPercentThreshold) {
  // CV 0.01 %: the spread of instruction counts of one program run three times.
  const CheckResult check = Evaluate({1000000000, 1000100000, 999950000}, {1010000000, 1010080000, 1009990000});
  EXPECT_EQ(check.verdict, Verdict::kRegression) << check.message;
  EXPECT_NE(check.message.find("near-deterministic"), std::string::npos) << check.message;
  EXPECT_NE(check.message.find("> threshold 0.5 %"), std::string::npos) << check.message;
  EXPECT_FALSE(check.p_value.has_value()) << "no rank test decided";
}

TEST(NearDeterministic, TwoRepetitionsASideDecideAHalfPercentChangeBeyondAQuarterPercentThreshold) {
  RunResults run;
  run.scenarios.push_back(Counts({1005000000, 1005010000}));
  run.scenarios[0].checks[0].spec.max_regression_pct = 0.25;
  std::map<std::string, ScenarioResult> base{{"s", Counts({1000000000, 1000020000})}};
  EvaluateChecks(run, base, {});
  EXPECT_EQ(run.scenarios[0].checks[0].verdict, Verdict::kRegression) << run.scenarios[0].checks[0].message;
}

TEST(NearDeterministic, AnUnchangedProgramPassesWithTwoRepetitionsASide) {
  const CheckResult check = Evaluate({1000000000, 1000100000}, {1000050000, 999990000});
  EXPECT_EQ(check.verdict, Verdict::kPass) << check.message;
  ASSERT_TRUE(check.change_ci_high_pct.has_value());
  EXPECT_LT(*check.change_ci_high_pct, 0.5);
}

TEST(NearDeterministic, AChangeAboutTheThresholdIsInconclusive) {
  const CheckResult check = Evaluate({1000000000, 1000000000, 1000000000}, {1005000000, 1005000000, 1004990000});
  EXPECT_EQ(check.verdict, Verdict::kInconclusive) << check.message;
}

TEST(NearDeterministic, FewerInstructionsBeyondTheThresholdAreAnImprovement) {
  const CheckResult check = Evaluate({1000000000, 1000010000}, {980000000, 980010000});
  EXPECT_EQ(check.verdict, Verdict::kImprovement) << check.message;
}

TEST(NearDeterministic, ASuddenSpreadFallsBackToTheRankTestsAndSaysSo) {
  const CheckResult check = Evaluate({1000000000, 1000000000, 1000000000}, {1010000000, 1030000000, 1009990000}, true);
  EXPECT_NE(check.message.find("spread by"), std::string::npos) << check.message;
  EXPECT_NE(check.message.find("so the rank tests decide"), std::string::npos) << check.message;
  EXPECT_TRUE(check.p_value.has_value());
  EXPECT_NE(check.verdict, Verdict::kRegression) << "3 a side cannot reach the rank tests' level: " << check.message;
}

TEST(NearDeterministic, OnlyInstructionCountsAreDeclaredNearDeterministic) {
  EXPECT_TRUE(IsNearDeterministic("instr.total"));
  EXPECT_TRUE(IsNearDeterministic("instr.hash_block"));
  EXPECT_TRUE(IsNearDeterministic("cpu.instructions"));
  EXPECT_FALSE(IsNearDeterministic("workload.cpu_time"));
  EXPECT_FALSE(IsNearDeterministic("syscalls.count"));
}

}  // namespace
}  // namespace perfgate
