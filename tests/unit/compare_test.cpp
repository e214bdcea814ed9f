// Verdicts of gate/compare on synthetic runs: known answers for the message and
// the rules, and seeded simulations for the error rates the design promises.
#include "compare/compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "harness/sampler.h"
#include "metrics/metric.h"

namespace perfgate {
namespace {

using testing::Sampler;

Metric Scalar(const std::string& name, double value, Better better = Better::kLower, const std::string& unit = "s") {
  return ScalarMetric(name, value, unit, better);
}

CheckSpec Regression(const std::string& metric, double max_regression_pct = 10) {
  CheckSpec spec;
  spec.type = CheckSpec::Type::kRegression;
  spec.metric = metric;
  spec.max_regression_pct = max_regression_pct;
  spec.name = metric;
  return spec;
}

CheckSpec Budget(const std::string& metric, const std::string& statistic, std::optional<double> max,
                 std::optional<double> min = std::nullopt) {
  CheckSpec spec;
  spec.type = CheckSpec::Type::kBudget;
  spec.metric = metric;
  spec.statistic = statistic;
  spec.max = max;
  spec.min = min;
  spec.name = metric + "." + statistic;
  return spec;
}

CheckResult CheckFor(CheckSpec spec) {
  CheckResult check;
  check.spec = std::move(spec);
  return check;
}

// A scenario whose repetitions carry one scalar metric "m<i>" per entry of
// `medians`, drawn lognormally, and (optionally) one regression check each.
ScenarioResult SyntheticScenario(const std::string& name, const std::vector<double>& medians, int reps, double cv,
                                 Sampler& sampler, double threshold_pct = 10) {
  ScenarioResult scenario;
  scenario.name = name;
  for (int r = 0; r < reps; ++r) {
    Repetition rep;
    rep.index = r;
    for (size_t i = 0; i < medians.size(); ++i) {
      const std::string metric = "m" + std::to_string(i);
      rep.metrics[metric] = Scalar(metric, sampler.LogNormal(medians[i], cv));
    }
    scenario.repetitions.push_back(std::move(rep));
  }
  for (size_t i = 0; i < medians.size(); ++i) {
    scenario.checks.push_back(CheckFor(Regression("m" + std::to_string(i), threshold_pct)));
  }
  return scenario;
}

ScenarioResult FixedScenario(const std::string& name, const std::string& metric, const std::vector<double>& values,
                             Better better = Better::kLower, const std::string& unit = "s") {
  ScenarioResult scenario;
  scenario.name = name;
  for (size_t r = 0; r < values.size(); ++r) {
    Repetition rep;
    rep.index = static_cast<int>(r);
    rep.metrics[metric] = Scalar(metric, values[r], better, unit);
    scenario.repetitions.push_back(std::move(rep));
  }
  return scenario;
}

struct Outcome {
  int regressions = 0, improvements = 0, passes = 0, inconclusive = 0, errors = 0;
};

Outcome Count(const RunResults& run) {
  Outcome o;
  for (const auto& s : run.scenarios) {
    for (const auto& c : s.checks) {
      o.regressions += c.verdict == Verdict::kRegression;
      o.improvements += c.verdict == Verdict::kImprovement;
      o.passes += c.verdict == Verdict::kPass;
      o.inconclusive += c.verdict == Verdict::kInconclusive;
      o.errors += c.verdict == Verdict::kError;
    }
  }
  return o;
}

// One A/B suite: `checks` metrics with the given candidate/baseline ratios.
RunResults SimulateSuite(const std::vector<double>& ratios, int reps, double cv, Sampler& sampler, double threshold_pct,
                         std::map<std::string, ScenarioResult>& baseline) {
  const std::vector<double> ones(ratios.size(), 1.0);
  baseline.clear();
  baseline["s"] = SyntheticScenario("s", ones, reps, cv, sampler, threshold_pct);
  RunResults run;
  run.scenarios.push_back(SyntheticScenario("s", ratios, reps, cv, sampler, threshold_pct));
  return run;
}

// ---- the rules, on fixed numbers --------------------------------------------

TEST(Compare, MessageCarriesTheNumbersThatDecided) {
  RunResults run;
  run.scenarios.push_back(FixedScenario("cold", "workload.wall_time", {0.668, 0.671, 0.659, 0.680, 0.664}));
  run.scenarios[0].checks.push_back(CheckFor(Regression("workload.wall_time")));
  const std::map<std::string, ScenarioResult> baseline{
      {"cold", FixedScenario("cold", "workload.wall_time", {0.512, 0.508, 0.515, 0.511, 0.519})}};
  EvaluateChecks(run, baseline, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kRegression);
  EXPECT_EQ(check.statistic, "value");
  EXPECT_EQ(check.unit, "s");
  EXPECT_DOUBLE_EQ(check.baseline_median, 0.512);
  EXPECT_DOUBLE_EQ(check.candidate_median, 0.668);
  EXPECT_NEAR(check.change_pct, 30.46875, 1e-9);
  EXPECT_NEAR(*check.p_value, 1.0 / 252, 1e-12);
  EXPECT_NEAR(*check.p_adjusted, 1.0 / 252, 1e-12);  // a family of one
  ASSERT_TRUE(check.change_ci_low_pct && check.change_ci_high_pct);
  EXPECT_GT(*check.change_ci_low_pct, 25);
  EXPECT_LT(*check.change_ci_high_pct, 36);
  EXPECT_EQ(check.message.rfind("workload.wall_time value: 512 ms → 668 ms (+30.5 %, 90 % CI +", 0), 0u)
      << check.message;
  EXPECT_NE(check.message.find(" %), p=0.004 (Holm 0.004) > threshold 10 %"), std::string::npos) << check.message;
}

TEST(Compare, FlagsThirtyPercentSlowdownAtFiveReps) {
  Sampler sampler(1);
  for (double cv : {0.02, 0.05}) {
    std::map<std::string, ScenarioResult> baseline;
    RunResults run = SimulateSuite({1.3}, 5, cv, sampler, 10, baseline);
    EvaluateChecks(run, baseline, {});
    EXPECT_EQ(run.scenarios[0].checks[0].verdict, Verdict::kRegression) << run.scenarios[0].checks[0].message;
  }
}

// 8 + 8 repetitions: the smallest one-sided p, 1/12870, is below the
// 0.01 / 20 that Holm needs for the first of 20 checks (6 + 6 cannot: 1/924).
TEST(Compare, FlagsThirtyPercentSlowdownAmongTwentyChecksAtEightReps) {
  Sampler sampler(2);
  std::vector<double> ratios(20, 1.0);
  ratios[13] = 1.3;
  std::map<std::string, ScenarioResult> baseline;
  RunResults run = SimulateSuite(ratios, 8, 0.05, sampler, 10, baseline);
  EvaluateChecks(run, baseline, {});
  EXPECT_EQ(run.scenarios[0].checks[13].verdict, Verdict::kRegression) << run.scenarios[0].checks[13].message;
  EXPECT_EQ(Count(run).regressions, 1);
}

TEST(Compare, FiveRepsCannotReachSignificanceAcrossTwentyChecks) {
  // 5 + 5 repetitions: the smallest one-sided p is 1/252 = 0.004, above the
  // 0.01 / 20 that Holm needs; the honest verdict is inconclusive, not pass.
  Sampler sampler(3);
  std::vector<double> ratios(20, 1.0);
  ratios[4] = 1.3;
  std::map<std::string, ScenarioResult> baseline;
  RunResults run = SimulateSuite(ratios, 5, 0.03, sampler, 10, baseline);
  EvaluateChecks(run, baseline, {});
  const CheckResult& slowed = run.scenarios[0].checks[4];
  EXPECT_EQ(slowed.verdict, Verdict::kInconclusive);
  EXPECT_NE(slowed.message.find("smallest p 0.004 cannot reach the per-check level 0.0005"), std::string::npos)
      << slowed.message;
  EXPECT_FALSE(slowed.min_detectable_pct.has_value());
  EXPECT_EQ(Count(run).regressions, 0);
}

TEST(Compare, SmallChangeWithinThresholdPasses) {
  Sampler sampler(4);
  std::map<std::string, ScenarioResult> baseline;
  RunResults run = SimulateSuite({1.02, 0.99, 1.0}, 10, 0.02, sampler, 10, baseline);
  EvaluateChecks(run, baseline, {});
  EXPECT_EQ(Count(run).passes, 3);
  EXPECT_NE(run.scenarios[0].checks[0].message.find("within threshold 10 %"), std::string::npos);
}

TEST(Compare, NoisyChecksAreInconclusiveWithTheMinimumDetectableChange) {
  Sampler sampler(5);
  std::map<std::string, ScenarioResult> baseline;
  RunResults run = SimulateSuite({1.0}, 5, 0.25, sampler, 5, baseline);
  EvaluateChecks(run, baseline, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kInconclusive) << check.message;
  ASSERT_TRUE(check.min_detectable_pct.has_value());
  EXPECT_GT(*check.min_detectable_pct, 5);
  EXPECT_NE(check.message.find("cannot resolve 5 % with 5+5 repetitions at CV "), std::string::npos) << check.message;
  EXPECT_NE(check.message.find("minimum detectable"), std::string::npos);
}

TEST(Compare, SignificantChangeWhoseIntervalStraddlesTheThresholdIsInconclusive) {
  RunResults run;
  run.scenarios.push_back(FixedScenario("s", "m", {1.06, 1.09, 1.14, 1.07, 1.12, 1.04, 1.10, 1.08}));
  run.scenarios[0].checks.push_back(CheckFor(Regression("m", 10)));
  const std::map<std::string, ScenarioResult> baseline{
      {"s", FixedScenario("s", "m", {1.0, 1.01, 0.99, 1.005, 0.995, 1.002, 0.998, 1.0})}};
  EvaluateChecks(run, baseline, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kInconclusive) << check.message;
  EXPECT_NE(check.message.find("significant, but the interval reaches past threshold 10 %"), std::string::npos);
}

TEST(Compare, SignificantShiftJustBeyondTheThresholdIsNotYetARegression) {
  // Medians +12 %, but the interval reaches back below +10 %: a drift of
  // about the threshold's size must not fail the merge.
  RunResults run;
  run.scenarios.push_back(FixedScenario("s", "m", {1.08, 1.16, 1.12, 1.09, 1.15, 1.10, 1.14}));
  run.scenarios[0].checks.push_back(CheckFor(Regression("m", 10)));
  const std::map<std::string, ScenarioResult> baseline{
      {"s", FixedScenario("s", "m", {1.0, 1.01, 0.99, 1.005, 0.995, 1.002, 0.998})}};
  EvaluateChecks(run, baseline, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kInconclusive) << check.message;
  EXPECT_GT(check.change_pct, 10);
  ASSERT_TRUE(check.change_ci_low_pct.has_value());
  EXPECT_LT(*check.change_ci_low_pct, 10);
  EXPECT_NE(check.message.find("significant and beyond threshold 10 %, but the interval reaches back within it"),
            std::string::npos)
      << check.message;
}

void SetHostLoad(ScenarioResult& scenario, double other_cpus) {
  for (Repetition& rep : scenario.repetitions) {
    Metric load = Scalar(kHostOtherCpus, other_cpus, Better::kNone, "cpus");
    rep.metrics[kHostOtherCpus] = load;
  }
}

TEST(Compare, TimingRegressionOnABusierHostIsInconclusiveAndSaysWhy) {
  std::vector<double> slow = {1.30, 1.32, 1.29, 1.31, 1.33, 1.30, 1.28};
  std::vector<double> fast = {1.0, 1.01, 0.99, 1.005, 0.995, 1.002, 0.998};
  RunResults run;
  run.scenarios.push_back(FixedScenario("s", "m", slow));
  run.scenarios[0].checks.push_back(CheckFor(Regression("m", 10)));
  SetHostLoad(run.scenarios[0], 1.4);
  std::map<std::string, ScenarioResult> baseline{{"s", FixedScenario("s", "m", fast)}};
  SetHostLoad(baseline["s"], 0.05);
  EvaluateChecks(run, baseline, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kInconclusive) << check.message;
  EXPECT_NE(check.message.find("the host was busier, other work kept 1.40 CPUs busy vs 0.05"), std::string::npos)
      << check.message;

  // Measured interleaved in one job, more other work on one side is chance:
  // the host's state fell on both, so the slowdown is a regression.
  CompareOptions interleaved;
  interleaved.interleaved = true;
  EvaluateChecks(run, baseline, interleaved);
  EXPECT_EQ(run.scenarios[0].checks[0].verdict, Verdict::kRegression) << run.scenarios[0].checks[0].message;

  // The same slowdown on an equally quiet host is a regression.
  SetHostLoad(run.scenarios[0], 0.1);
  EvaluateChecks(run, baseline, {});
  EXPECT_EQ(run.scenarios[0].checks[0].verdict, Verdict::kRegression) << run.scenarios[0].checks[0].message;

  // A saturated host (2 CPUs: 1.4 of other work plus the workload's own 1.0)
  // makes it inconclusive even when the baseline was as busy.
  run.environment.cpu_count = 2;
  for (Repetition& rep : run.scenarios[0].repetitions) {
    rep.metrics["workload.cpu_time"] = Scalar("workload.cpu_time", 1.0);
    rep.metrics["workload.wall_time"] = Scalar("workload.wall_time", 1.0);
  }
  SetHostLoad(run.scenarios[0], 1.4);
  SetHostLoad(baseline["s"], 1.4);
  EvaluateChecks(run, baseline, {});
  EXPECT_EQ(run.scenarios[0].checks[0].verdict, Verdict::kInconclusive) << run.scenarios[0].checks[0].message;
  EXPECT_NE(run.scenarios[0].checks[0].message.find("no CPU to spare"), std::string::npos);
  // Interleaved, both sides ran on the same saturated host: a regression.
  EvaluateChecks(run, baseline, interleaved);
  EXPECT_EQ(run.scenarios[0].checks[0].verdict, Verdict::kRegression) << run.scenarios[0].checks[0].message;

  // Counts do not slow down with the host: still a regression.
  RunResults counts;
  counts.scenarios.push_back(FixedScenario("s", "m", slow, Better::kLower, "pages"));
  counts.scenarios[0].checks.push_back(CheckFor(Regression("m", 10)));
  SetHostLoad(counts.scenarios[0], 1.4);
  std::map<std::string, ScenarioResult> count_baseline{{"s", FixedScenario("s", "m", fast, Better::kLower, "pages")}};
  SetHostLoad(count_baseline["s"], 0.05);
  EvaluateChecks(counts, count_baseline, {});
  EXPECT_EQ(counts.scenarios[0].checks[0].verdict, Verdict::kRegression) << counts.scenarios[0].checks[0].message;
}

TEST(Compare, HigherIsBetterDropIsARegression) {
  RunResults run;
  run.scenarios.push_back(FixedScenario("fio", "fio.rand.read.iops", {12000, 12100, 11900, 12050, 11950, 12020},
                                        Better::kHigher, "count/s"));
  run.scenarios[0].checks.push_back(CheckFor(Regression("fio.rand.read.iops", 10)));
  const std::map<std::string, ScenarioResult> baseline{
      {"fio", FixedScenario("fio", "fio.rand.read.iops", {18000, 18100, 17900, 18050, 17950, 18020}, Better::kHigher,
                            "count/s")}};
  EvaluateChecks(run, baseline, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kRegression) << check.message;
  EXPECT_LT(check.change_pct, -30);
  EXPECT_NE(check.message.find("18.0k count/s → 12.0k count/s"), std::string::npos) << check.message;
}

TEST(Compare, LargeSignificantSpeedupIsAnImprovement) {
  RunResults run;
  run.scenarios.push_back(FixedScenario("s", "m", {0.70, 0.71, 0.69, 0.72, 0.701, 0.705}));
  run.scenarios[0].checks.push_back(CheckFor(Regression("m", 10)));
  const std::map<std::string, ScenarioResult> baseline{
      {"s", FixedScenario("s", "m", {1.0, 1.01, 0.99, 1.02, 0.98, 1.001})}};
  EvaluateChecks(run, baseline, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kImprovement) << check.message;
  EXPECT_NEAR(*check.p_value, 1.0 / 924, 1e-12);  // the p of the direction it moved
}

TEST(Compare, FamilySpansEveryScenarioOfTheRun) {
  RunResults run;
  std::map<std::string, ScenarioResult> baseline;
  for (const std::string name : {"a", "b", "c"}) {
    run.scenarios.push_back(FixedScenario(name, "m", {2.0, 2.1, 2.05, 2.02, 2.08, 2.03}));
    run.scenarios.back().checks.push_back(CheckFor(Regression("m", 10)));
    baseline[name] = FixedScenario(name, "m", {1.0, 1.01, 0.99, 1.02, 0.98, 1.001});
  }
  EvaluateChecks(run, baseline, {});
  for (const auto& s : run.scenarios) {
    EXPECT_NEAR(*s.checks[0].p_adjusted, 3.0 / 924, 1e-12);  // Holm over 3 equal p-values
    EXPECT_EQ(s.checks[0].verdict, Verdict::kRegression);
  }
}

TEST(Compare, FdrOptionUsesBenjaminiHochberg) {
  RunResults run;
  run.scenarios.push_back(FixedScenario("s", "m", {2.0, 2.1, 2.05, 2.02, 2.08, 2.03}));
  run.scenarios[0].checks.push_back(CheckFor(Regression("m", 10)));
  const std::map<std::string, ScenarioResult> baseline{
      {"s", FixedScenario("s", "m", {1.0, 1.01, 0.99, 1.02, 0.98, 1.0})}};
  EvaluateChecks(run, baseline, {.alpha = 0.05, .fdr = true});
  EXPECT_NE(run.scenarios[0].checks[0].message.find("(BH "), std::string::npos);
}

TEST(Compare, BaselineOfAnotherMachineDecidesNoRegressionCheckButBudgetsStillApply) {
  RunResults run;
  run.scenarios.push_back(FixedScenario("s", "m", {2.0, 2.1, 2.05, 2.02, 2.08, 2.03}));
  run.scenarios[0].checks.push_back(CheckFor(Regression("m", 10)));
  run.scenarios[0].checks.push_back(CheckFor(Budget("m", "value", 1.5)));
  const std::map<std::string, ScenarioResult> baseline{
      {"s", FixedScenario("s", "m", {1.0, 1.01, 0.99, 1.02, 0.98, 1.0})}};
  CompareOptions options;
  options.foreign_baselines = {{"s", "kernel: 6.1.0 (baseline) vs 6.18.0 (now)"}};
  EvaluateChecks(run, baseline, options);
  const CheckResult& regression = run.scenarios[0].checks[0];
  EXPECT_EQ(regression.verdict, Verdict::kInconclusive) << regression.message;
  EXPECT_NE(regression.message.find("recorded on another machine (kernel: 6.1.0 (baseline) vs 6.18.0 (now))"),
            std::string::npos)
      << regression.message;
  EXPECT_GT(regression.change_pct, 90);  // the change is still shown
  EXPECT_EQ(run.scenarios[0].checks[1].verdict, Verdict::kRegression) << run.scenarios[0].checks[1].message;

  // Opted in (no foreign baselines): the same numbers are a regression.
  EvaluateChecks(run, baseline, {});
  EXPECT_EQ(run.scenarios[0].checks[0].verdict, Verdict::kRegression) << run.scenarios[0].checks[0].message;
}

TEST(Compare, MissingBaselineScenarioIsInconclusive) {
  RunResults run;
  run.scenarios.push_back(FixedScenario("new", "m", {1, 1.1, 1.2}));
  run.scenarios[0].checks.push_back(CheckFor(Regression("m")));
  EvaluateChecks(run, {}, {});
  EXPECT_EQ(run.scenarios[0].checks[0].verdict, Verdict::kInconclusive);
  EXPECT_EQ(run.scenarios[0].checks[0].message, "m value: no baseline for scenario new");
}

TEST(Compare, MissingMetricIsAnErrorWithDidYouMean) {
  RunResults run;
  run.scenarios.push_back(FixedScenario("cold", "workload.wall_time", {1, 1.1, 1.2}));
  run.scenarios[0].checks.push_back(CheckFor(Regression("workload.wal_time")));
  EvaluateChecks(run, {}, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kError);
  EXPECT_EQ(check.message, "metric workload.wal_time not measured in scenario cold; did you mean workload.wall_time?");
}

// A host without a PMU: the cpu probe counts software events and says which
// metrics it cannot count here. A check on one is not "did you mean
// cpu.migrations": it names the missing PMU and what to do, and stays an
// error (exit 3): no number of repetitions would measure it here.
TEST(Compare, AMetricAProbeCannotMeasureHereIsAnErrorThatSaysWhyAndWhatToDo) {
  RunResults run;
  run.scenarios.push_back(FixedScenario("cold", "cpu.migrations", {1, 1, 2}));
  ProbeReport cpu;
  cpu.name = "cpu";
  cpu.unavailable.push_back({{"cpu.instructions", "cpu.instructions.user"},
                             "no hardware PMU (perf_event_open(hardware instructions): Operation not supported)",
                             "count instructions with --instrument"});
  run.scenarios[0].probes.push_back(cpu);
  run.scenarios[0].checks.push_back(CheckFor(Regression("cpu.instructions.user", 0.5)));
  run.scenarios[0].checks.push_back(CheckFor(Regression("cpu.instruction")));
  EvaluateChecks(run, {}, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kError);
  EXPECT_EQ(check.message,
            "metric cpu.instructions.user not measured in scenario cold: probe cpu: no hardware PMU "
            "(perf_event_open(hardware instructions): Operation not supported); count instructions with --instrument");
  // A metric no probe declared unavailable keeps the generic message.
  EXPECT_EQ(run.scenarios[0].checks[1].verdict, Verdict::kError);
  EXPECT_EQ(run.scenarios[0].checks[1].message.find("PMU"), std::string::npos) << run.scenarios[0].checks[1].message;
  EXPECT_EQ(OverallVerdict(run), Verdict::kError);
  EXPECT_EQ(ExitCodeFor(run, false), 3);
}

TEST(Compare, InapplicableStatisticIsAnError) {
  RunResults run;
  run.scenarios.push_back(FixedScenario("cold", "workload.wall_time", {1, 1.1, 1.2}));
  CheckSpec spec = Regression("workload.wall_time");
  spec.statistic = "p99";
  run.scenarios[0].checks.push_back(CheckFor(spec));
  EvaluateChecks(run, {}, {});
  EXPECT_EQ(run.scenarios[0].checks[0].verdict, Verdict::kError);
  EXPECT_NE(run.scenarios[0].checks[0].message.find("use one of: value"), std::string::npos);
}

TEST(Compare, FailedScenarioMakesItsChecksErrors) {
  RunResults run;
  run.scenarios.push_back(FixedScenario("cold", "m", {}));
  run.scenarios[0].error = "workload timed out after 30 s";
  run.scenarios[0].checks.push_back(CheckFor(Regression("m")));
  EvaluateChecks(run, {}, {});
  EXPECT_EQ(run.scenarios[0].checks[0].verdict, Verdict::kError);
  EXPECT_NE(run.scenarios[0].checks[0].message.find("timed out"), std::string::npos);
}

TEST(Compare, WarmupAndFailedRepetitionsAreNotSamples) {
  RunResults run;
  run.scenarios.push_back(FixedScenario("s", "m", {100, 1.0, 1.1, 1.2, 50}));
  run.scenarios[0].repetitions[0].warmup = true;
  run.scenarios[0].repetitions[4].failure = "exit status 1";
  run.scenarios[0].checks.push_back(CheckFor(Budget("m", "value", 2.0)));
  EvaluateChecks(run, {}, {});
  EXPECT_EQ(run.scenarios[0].checks[0].candidate_values, (std::vector<double>{1.0, 1.1, 1.2}));
  EXPECT_EQ(run.scenarios[0].checks[0].verdict, Verdict::kPass);
}

// ---- budgets ---------------------------------------------------------------

Metric Counter(double count, double duration_s) {
  Metric m;
  m.name = "mm.page_alloc";
  m.kind = MetricKind::kCounter;
  m.unit = "count";
  m.value = count;
  m.duration_s = duration_s;
  return m;
}

ScenarioResult CounterScenario(const std::vector<double>& counts_per_second) {
  ScenarioResult scenario;
  scenario.name = "alloc";
  for (double rate : counts_per_second) {
    Repetition rep;
    rep.metrics["mm.page_alloc"] = Counter(rate * 2, 2);
    scenario.repetitions.push_back(std::move(rep));
  }
  return scenario;
}

TEST(Compare, BudgetOverMaxIsARegressionAndCountsRepetitions) {
  RunResults run;
  run.scenarios.push_back(CounterScenario({91234, 70000, 95000, 91000, 92000}));
  run.scenarios[0].checks.push_back(CheckFor(Budget("mm.page_alloc", "rate", 80000)));
  EvaluateChecks(run, {}, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kRegression);
  EXPECT_EQ(check.message,
            "mm.page_alloc rate 91.2k count/s > budget 80.0k count/s (median of 5 repetitions; 4 above)");
}

TEST(Compare, BudgetMedianWithinPassesButMentionsOutliers) {
  RunResults run;
  run.scenarios.push_back(CounterScenario({70000, 71000, 95000, 72000, 69000}));
  run.scenarios[0].checks.push_back(CheckFor(Budget("mm.page_alloc", "rate", 80000)));
  EvaluateChecks(run, {}, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kPass);
  EXPECT_EQ(check.message,
            "mm.page_alloc rate 71.0k count/s <= budget 80.0k count/s (median of 5 repetitions; 1 above)");
}

// A bound crossed only while other work kept the host busy is not the
// workload's when the load can stretch the metric (a wall time): the clean
// repetitions decide, or the check is inconclusive.
TEST(Compare, BudgetCrossedInTaintedRepetitionsIsJudgedOnTheCleanOnes) {
  const std::string busy = "other work kept 1.95 of 2 CPUs busy, leaving 0.00 idle; kept";
  const std::vector<double> values = {0.091, 0.070, 0.095, 0.071, 0.092};
  RunResults run;
  run.scenarios.push_back(FixedScenario("most-busy", "workload.wall_time", values));
  for (int i : {0, 2, 4}) run.scenarios[0].repetitions[i].tainted = busy;
  run.scenarios.push_back(FixedScenario("mostly-clean", "workload.wall_time", values));
  for (int i : {0, 2}) run.scenarios[1].repetitions[i].tainted = busy;
  for (ScenarioResult& s : run.scenarios) s.checks.push_back(CheckFor(Budget("workload.wall_time", "value", 0.080)));
  EvaluateChecks(run, {}, {});

  const CheckResult& most_busy = run.scenarios[0].checks[0];
  EXPECT_EQ(most_busy.verdict, Verdict::kInconclusive);
  EXPECT_EQ(most_busy.message,
            "workload.wall_time value 91.0 ms beyond budget 80.0 ms; inconclusive: other work kept the host "
            "busy in 3 of 5 repetitions (" +
                busy + "), which can stretch it without bound, so the bound is not held against the workload");
  const CheckResult& mostly_clean = run.scenarios[1].checks[0];
  EXPECT_EQ(mostly_clean.verdict, Verdict::kPass);
  EXPECT_EQ(mostly_clean.message,
            "workload.wall_time value 71.0 ms <= budget 80.0 ms (median of the 3 repetitions the host left "
            "alone; 2 taken while other work kept it busy are left out)");

  // Clean repetitions over the bound fail it, busy ones or not.
  RunResults over;
  over.scenarios.push_back(FixedScenario("over", "workload.wall_time", {0.091, 0.090, 0.095, 0.093, 0.092}));
  over.scenarios[0].repetitions[2].tainted = busy;
  over.scenarios[0].checks.push_back(CheckFor(Budget("workload.wall_time", "value", 0.080)));
  EvaluateChecks(over, {}, {});
  EXPECT_EQ(over.scenarios[0].checks[0].verdict, Verdict::kRegression);
  EXPECT_NE(over.scenarios[0].checks[0].message.find("median of the 4 repetitions the host left alone"),
            std::string::npos)
      << over.scenarios[0].checks[0].message;
}

// A rate of the workload's own events per second of its run: other work
// adds no events and only lengthens the run, so a rate over its maximum is
// the workload's however busy the host was (the integration test's page
// allocations beside a burner: 50.9k pages/s against a budget of 1), while
// a rate under a minimum may be the load's and stays open.
TEST(Compare, RateBudgetOverItsMaximumFailsOnABusyHostAndUnderItsMinimumStaysOpen) {
  const std::string busy = "other work kept 1.02 of 2 CPUs busy, leaving 0.00 idle; kept";
  RunResults run;
  run.scenarios.push_back(CounterScenario({91000, 90000, 95000}));
  run.scenarios.push_back(CounterScenario({61000, 60000, 65000}));
  run.scenarios[1].name = "slow";
  for (ScenarioResult& s : run.scenarios) {
    for (Repetition& rep : s.repetitions) rep.tainted = busy;
  }
  run.scenarios[0].checks.push_back(CheckFor(Budget("mm.page_alloc", "rate", 80000)));
  run.scenarios[1].checks.push_back(CheckFor(Budget("mm.page_alloc", "rate", std::nullopt, 70000)));
  EvaluateChecks(run, {}, {});
  const CheckResult& over = run.scenarios[0].checks[0];
  EXPECT_EQ(over.verdict, Verdict::kRegression) << over.message;
  EXPECT_NE(over.message.find("the load adds no events to a rate, it only stretches its time"), std::string::npos)
      << over.message;
  EXPECT_NE(over.message.find("so the load cannot explain it"), std::string::npos) << over.message;
  const CheckResult& under = run.scenarios[1].checks[0];
  EXPECT_EQ(under.verdict, Verdict::kInconclusive) << under.message;
}

// A scenario of `values` of workload.cpu_time, every repetition tainted by a
// constant neighbour.
ScenarioResult BusyCpuTimeScenario(const std::vector<double>& values) {
  ScenarioResult scenario = FixedScenario("busy", "workload.cpu_time", values);
  for (Repetition& rep : scenario.repetitions) rep.tainted = "other work kept 1.95 of 2 CPUs busy, leaving 0.00 idle";
  return scenario;
}

// The case: CPU time 51 % over its budget beside one constant CPU
// burner is beyond anything contention adds, and fails.
TEST(Compare, CpuTimeBudgetFarBeyondTheContentionAllowanceFailsOnABusyHost) {
  RunResults run;
  run.scenarios.push_back(BusyCpuTimeScenario({0.302, 0.305, 0.299, 0.301, 0.303}));
  run.scenarios[0].checks.push_back(CheckFor(Budget("workload.cpu_time", "value", 0.2)));
  EvaluateChecks(run, {}, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kRegression) << check.message;
  EXPECT_NE(check.message.find("contention inflates CPU time by at most 20 %, to 240 ms"), std::string::npos)
      << check.message;
  EXPECT_NE(check.message.find("so the load cannot explain it"), std::string::npos) << check.message;
}

// Within what contention can add, the same busy host leaves it open, and
// the message gives the allowance's size.
TEST(Compare, CpuTimeBudgetWithinTheContentionAllowanceIsInconclusiveOnABusyHost) {
  RunResults run;
  run.scenarios.push_back(BusyCpuTimeScenario({0.22, 0.221, 0.219, 0.222, 0.22}));
  run.scenarios[0].checks.push_back(CheckFor(Budget("workload.cpu_time", "value", 0.2)));
  EvaluateChecks(run, {}, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kInconclusive) << check.message;
  EXPECT_NE(check.message.find("contention inflates CPU time by at most 20 %, to 240 ms"), std::string::npos)
      << check.message;
}

// Counts per operation are not inflated by other work: a crossed budget fails
// however busy the host was.
TEST(Compare, CountBudgetCrossedOnABusyHostFails) {
  RunResults run;
  ScenarioResult scenario;
  scenario.name = "calls";
  for (double calls : {41.0, 42.0, 41.0}) {
    Repetition rep;
    Metric m;
    m.name = "syscalls.count";
    m.kind = MetricKind::kCounter;
    m.unit = "count";
    m.value = calls * 1000;
    m.duration_s = 1;
    m.ops = 1000;
    rep.metrics[m.name] = m;
    rep.tainted = "other work kept 1.95 of 2 CPUs busy, leaving 0.00 idle";
    scenario.repetitions.push_back(std::move(rep));
  }
  run.scenarios.push_back(std::move(scenario));
  run.scenarios[0].checks.push_back(CheckFor(Budget("syscalls.count", "per_op", 40)));
  EvaluateChecks(run, {}, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  EXPECT_EQ(check.verdict, Verdict::kRegression) << check.message;
  EXPECT_NE(check.message.find("the load adds nothing to counts"), std::string::npos) << check.message;
}

// A CPU-time regression against a stored baseline far beyond what the load
// can add is decided on a saturated host; one within it stays open and says
// the allowance.
TEST(Compare, CpuTimeRegressionBeyondTheContentionAllowanceIsDecidedOnASaturatedHost) {
  const auto run_with = [](double factor) {
    RunResults run;
    run.environment.cpu_count = 2;
    std::vector<double> values;
    for (double v : {1.0, 1.01, 0.99, 1.005, 0.995, 1.002, 0.998}) values.push_back(v * factor);
    run.scenarios.push_back(FixedScenario("s", "workload.cpu_time", values));
    for (Repetition& rep : run.scenarios[0].repetitions) {
      rep.metrics["workload.cpu_time"] = Scalar("workload.cpu_time", values[static_cast<size_t>(rep.index)]);
      rep.metrics["workload.wall_time"] = Scalar("workload.wall_time", values[static_cast<size_t>(rep.index)]);
    }
    run.scenarios[0].checks.push_back(CheckFor(Regression("workload.cpu_time", 10)));
    SetHostLoad(run.scenarios[0], 1.4);
    std::map<std::string, ScenarioResult> baseline{{"s", FixedScenario("s", "workload.cpu_time", {})}};
    for (double v : {1.0, 1.01, 0.99, 1.005, 0.995, 1.002, 0.998}) {
      Repetition rep;
      rep.index = static_cast<int>(baseline["s"].repetitions.size());
      rep.metrics["workload.cpu_time"] = Scalar("workload.cpu_time", v);
      baseline["s"].repetitions.push_back(std::move(rep));
    }
    SetHostLoad(baseline["s"], 1.4);
    EvaluateChecks(run, baseline, {});
    return run.scenarios[0].checks[0];
  };
  const CheckResult far = run_with(1.6);
  EXPECT_EQ(far.verdict, Verdict::kRegression) << far.message;
  EXPECT_NE(far.message.find("the host was busy, and contention inflates CPU time by at most 20 %"), std::string::npos)
      << far.message;
  const CheckResult near = run_with(1.25);
  EXPECT_EQ(near.verdict, Verdict::kInconclusive) << near.message;
  EXPECT_NE(near.message.find("contention inflates CPU time by at most 20 %"), std::string::npos) << near.message;
}

TEST(Compare, BudgetMinimum) {
  RunResults run;
  run.scenarios.push_back(CounterScenario({100, 110, 90}));
  run.scenarios[0].checks.push_back(CheckFor(Budget("mm.page_alloc", "rate", std::nullopt, 500)));
  EvaluateChecks(run, {}, {});
  EXPECT_EQ(run.scenarios[0].checks[0].verdict, Verdict::kRegression);
  EXPECT_EQ(run.scenarios[0].checks[0].message, "mm.page_alloc rate 100 count/s < budget 500 count/s");
}

TEST(Compare, BudgetWithoutBoundsIsAnError) {
  RunResults run;
  run.scenarios.push_back(CounterScenario({100}));
  run.scenarios[0].checks.push_back(CheckFor(Budget("mm.page_alloc", "rate", std::nullopt)));
  EvaluateChecks(run, {}, {});
  EXPECT_EQ(run.scenarios[0].checks[0].verdict, Verdict::kError);
}

// ---- histogram tails -------------------------------------------------------

ScenarioResult LatencyScenario(const std::string& name, uint64_t tail_ns, int reps, Sampler& sampler) {
  ScenarioResult scenario;
  scenario.name = name;
  for (int r = 0; r < reps; ++r) {
    Metric m;
    m.name = "sched.runq_latency";
    m.kind = MetricKind::kHistogram;
    m.unit = "ns";
    // 2 % of the samples form the tail, so p99 lies inside it.
    for (int i = 0; i < 980; ++i) m.hist.Record(static_cast<uint64_t>(sampler.LogNormal(2000, 0.3)));
    for (int i = 0; i < 20; ++i)
      m.hist.Record(static_cast<uint64_t>(sampler.LogNormal(static_cast<double>(tail_ns), 0.05)));
    Repetition rep;
    rep.metrics[m.name] = m;
    scenario.repetitions.push_back(std::move(rep));
  }
  return scenario;
}

TEST(Compare, HistogramTailIsComparedPerRepetition) {
  Sampler sampler(6);
  RunResults run;
  run.scenarios.push_back(LatencyScenario("s", 200000, 8, sampler));
  CheckSpec spec = Regression("sched.runq_latency", 10);
  spec.statistic = "p99";
  run.scenarios[0].checks.push_back(CheckFor(spec));
  const std::map<std::string, ScenarioResult> baseline{{"s", LatencyScenario("s", 100000, 8, sampler)}};
  EvaluateChecks(run, baseline, {});
  const CheckResult& check = run.scenarios[0].checks[0];
  ASSERT_EQ(check.candidate_values.size(), 8u);  // one p99 per repetition
  ASSERT_EQ(check.baseline_values.size(), 8u);
  EXPECT_EQ(check.unit, "ns");
  EXPECT_EQ(check.verdict, Verdict::kRegression) << check.message;
}

// ---- error rates, by simulation --------------------------------------------

TEST(Compare, AaRunOfTwentyChecksRarelyFails) {
  // 500 A/A suites of 20 checks, lognormal CV 3 %, 10 repetitions a side: a
  // suite "fails" when any check says regression. At threshold 10 % the noise
  // is easily resolved; at 5 % the minimum detectable change (~5.5 % at the
  // per-check level 0.05 / 20) sits right at the threshold, so some checks are
  // honestly inconclusive.
  struct Case {
    double threshold_pct;
    int max_inconclusive_checks;
  };
  Sampler sampler(7);
  const int suites = 500, checks = 20;
  for (const Case c : {Case{10, suites * checks / 100}, Case{5, suites * checks / 4}}) {
    int failed_suites = 0, inconclusive_checks = 0;
    std::map<std::string, ScenarioResult> baseline;
    for (int s = 0; s < suites; ++s) {
      RunResults run = SimulateSuite(std::vector<double>(checks, 1.0), 10, 0.03, sampler, c.threshold_pct, baseline);
      EvaluateChecks(run, baseline, {});
      const Outcome o = Count(run);
      failed_suites += o.regressions > 0;
      inconclusive_checks += o.inconclusive;
    }
    std::printf("A/A, threshold %.0f %%: %d of %d suites with a regression; %d of %d checks inconclusive\n",
                c.threshold_pct, failed_suites, suites, inconclusive_checks, suites * checks);
    EXPECT_LE(failed_suites, suites / 100) << c.threshold_pct;
    EXPECT_LE(inconclusive_checks, c.max_inconclusive_checks) << c.threshold_pct;
  }
}

TEST(Compare, DetectsThirtyPercentSlowdownReliably) {
  Sampler sampler(8);
  const int suites = 200;
  int detected = 0, false_alarms = 0;
  std::vector<double> ratios(10, 1.0);
  ratios[3] = 1.3;
  std::map<std::string, ScenarioResult> baseline;
  for (int s = 0; s < suites; ++s) {
    RunResults run = SimulateSuite(ratios, 7, 0.05, sampler, 10, baseline);
    EvaluateChecks(run, baseline, {});
    detected += run.scenarios[0].checks[3].verdict == Verdict::kRegression;
    false_alarms += Count(run).regressions - (run.scenarios[0].checks[3].verdict == Verdict::kRegression);
  }
  std::printf("30 %% slowdown, 7+7 reps, CV 5 %%, family of 10: detected %d of %d; %d false alarms\n", detected, suites,
              false_alarms);
  EXPECT_GE(detected, suites * 95 / 100);
  EXPECT_LE(false_alarms, 2);
}

// ---- outlier repetitions ---------------------------------------------------

// A repetition far from the others is named, with the probe metric that was
// most unusual in it.
TEST(Compare, NamesTheOutlierRepetitionAndWhatStoodOutInIt) {
  const std::vector<double> times = {0.51, 0.50, 0.52, 0.72, 0.51, 0.50, 0.52};
  RunResults run;
  run.scenarios.push_back(FixedScenario("cold", "workload.wall_time", times));
  for (size_t r = 0; r < times.size(); ++r) {
    Metric waits = Counter(r == 3 ? 9000 : 900 + 10 * static_cast<double>(r), times[r]);
    waits.name = "sched.wakeups";
    run.scenarios[0].repetitions[r].metrics["sched.wakeups"] = waits;
    run.scenarios[0].repetitions[r].metrics["mm.page_alloc"] = Counter(5000 + static_cast<double>(r), times[r]);
  }
  run.scenarios[0].checks.push_back(CheckFor(Regression("workload.wall_time")));
  const std::map<std::string, ScenarioResult> baseline{
      {"cold", FixedScenario("cold", "workload.wall_time", {0.50, 0.51, 0.52, 0.50, 0.51, 0.52, 0.51})}};
  EvaluateChecks(run, baseline, {});
  const std::string& message = run.scenarios[0].checks[0].message;
  EXPECT_NE(message.find("; outlier: repetition 4 (+41.2 % from the median), where sched.wakeups was 9.6x its median"),
            std::string::npos)
      << message;
}

TEST(Compare, NoOutlierNoteWhenTheRepetitionsAgree) {
  RunResults run;
  run.scenarios.push_back(FixedScenario("cold", "workload.wall_time", {0.51, 0.50, 0.52, 0.53, 0.51, 0.50, 0.52}));
  run.scenarios[0].checks.push_back(CheckFor(Regression("workload.wall_time")));
  const std::map<std::string, ScenarioResult> baseline{
      {"cold", FixedScenario("cold", "workload.wall_time", {0.50, 0.51, 0.52, 0.50, 0.51, 0.52, 0.51})}};
  EvaluateChecks(run, baseline, {});
  EXPECT_EQ(run.scenarios[0].checks[0].message.find("outlier"), std::string::npos)
      << run.scenarios[0].checks[0].message;
}

}  // namespace
}  // namespace perfgate
