// What the reporters' tests share (report_test.cpp and one file per
// reporter): a results model built by hand with every verdict, a scenario
// that failed to run and hostile strings in every user-controlled field,
// explained as the pipeline hands it to the reporters.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "explain/explain.h"
#include "explain/frame_growth.h"
#include "harness/results.h"
#include "metrics/results.h"
#include "pipeline/pipeline.h"

namespace perfgate::testing {

inline const std::string kScript = "<script>alert(1)</script>";

// What the pipeline gives the why: every metric perfgate declares.
inline const MetricVocabulary& Vocabulary() {
  static const MetricVocabulary vocabulary = GateMetricVocabulary();
  return vocabulary;
}
// The results as the pipeline hands them to the reporters: explained.
inline RunResults Explained(RunResults results) {
  ExplainFailures(results, Vocabulary());
  return results;
}

// The why of one scenario over every declared metric, as the pipeline ranks
// it (after the evidence's growth, as ExplainFailures does).
inline Explanation Attribute(ScenarioResult scenario) {
  ExplainEvidenceGrowth(scenario);
  return perfgate::Attribute(scenario, Vocabulary());
}
inline std::vector<KernelShift> KernelShifts(const ScenarioResult& scenario, size_t limit = kMaxCauses) {
  return perfgate::Attribute(scenario, Vocabulary(), limit).causes;
}
inline bool IsOutcomeMetric(const std::string& metric) { return Vocabulary().RoleOf(metric) == MetricRole::kOutcome; }
inline bool IsHostMetric(const std::string& metric) { return Vocabulary().RoleOf(metric) == MetricRole::kHost; }

inline CheckResult MakeCheck(const std::string& metric, const std::string& statistic, Verdict verdict,
                             std::vector<double> baseline, std::vector<double> candidate, double change_pct) {
  CheckResult c = CheckWithValues(metric, statistic, verdict, std::move(baseline), std::move(candidate));
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  c.baseline_median = median(c.baseline_values);
  c.candidate_median = median(c.candidate_values);
  c.change_pct = change_pct;
  c.change_ci_low_pct = change_pct - 2;
  c.change_ci_high_pct = change_pct + 2;
  c.p_value = 0.0004;
  c.p_adjusted = 0.0031;
  return c;
}

inline Repetition MakeRepetition(int index, double wall_ns) {
  Repetition rep;
  rep.index = index;
  Metric wall;
  wall.name = "workload.wall_time";
  wall.unit = "ns";
  wall.value = wall_ns;
  Metric runq;
  runq.name = "sched.runq_latency";
  runq.kind = MetricKind::kHistogram;
  runq.unit = "ns";
  for (uint64_t v = 1000; v < 2000000; v = v * 11 / 10) runq.hist.Record(v + index, 3);
  rep.metrics[wall.name] = wall;
  rep.metrics[runq.name] = runq;
  return rep;
}

// Scenario 1: pass, regression, budget exceeded, inconclusive, error,
// improvement and two checks the suite named alike. Scenario 2 failed to run.
inline RunResults HostileResults() {
  RunResults r;
  r.suite = "nightly " + kScript;
  r.suite_file = "workloads/suite.json";
  r.environment = {.kernel = "6.1.0-18-amd64",
                   .cpu_model = "Xeon \"Gold\" ]]> \x01 & 'fast'",
                   .cpu_count = 2,
                   .perfgate_version = "0.1.0",
                   .git_commit = "abc123def456",
                   .hostname = "ci-runner-1",
                   .timestamp = "2024-05-01T12:00:00Z"};
  Environment base = r.environment;
  base.kernel = "6.1.0-17-amd64";
  r.baseline_environment = base;

  ScenarioResult camera;
  camera.name = "camera " + kScript + " cold]]>start\x01";
  camera.workload_kind = "camera-startup";
  camera.duration_s = 42.5;
  camera.timestamp = "2024-05-01T12:00:01Z";
  for (int i = 0; i < 5; ++i) camera.repetitions.push_back(MakeRepetition(i, 1.3e9 + i * 1e7));

  camera.checks.push_back(MakeCheck("workload.cpu_time", "value", Verdict::kPass, {100, 101, 102}, {101, 102, 103}, 1));
  CheckResult wall = MakeCheck("workload.wall_time", "value", Verdict::kRegression, {1.00e9, 1.01e9, 0.99e9},
                               {1.30e9, 1.31e9, 1.29e9}, 30);
  wall.message = "wall time ]]> grew \x01 by 30% " + kScript + " 'quoted' \"double\"\n" + std::string(5000, 'x');
  camera.checks.push_back(wall);

  CheckResult budget = MakeCheck("mm.page_alloc", "rate", Verdict::kRegression, {}, {95000, 96000, 94000}, 0);
  budget.spec.type = CheckSpec::Type::kBudget;
  budget.spec.max = 80000;
  budget.unit = "count/s";
  budget.p_value.reset();
  budget.p_adjusted.reset();
  budget.change_ci_low_pct.reset();
  budget.change_ci_high_pct.reset();
  camera.checks.push_back(budget);

  CheckResult runq = MakeCheck("sched.runq_latency", "p99", Verdict::kInconclusive, {50, 60, 55}, {52, 63, 57}, 4);
  runq.p_value = 0.2;
  runq.p_adjusted = 0.9;
  runq.min_detectable_pct = 12;
  camera.checks.push_back(runq);

  CheckResult broken = MakeCheck("syscalls.count", "count", Verdict::kError, {}, {}, 0);
  broken.message = "probe 'syscalls' detached: " + kScript;
  camera.checks.push_back(broken);

  CheckResult rss =
      MakeCheck("workload.max_rss", "value", Verdict::kImprovement, {300, 301, 302}, {250, 251, 252}, -17);
  rss.better = Better::kLower;
  camera.checks.push_back(rss);

  for (int i = 0; i < 2; ++i) {
    CheckResult dup = MakeCheck("sched.switches", "count", Verdict::kPass, {10, 11, 12}, {10, 11, 12}, 0.5);
    dup.spec.name = "dup " + kScript;
    camera.checks.push_back(dup);
  }

  camera.probes.push_back({.name = "runqlat",
                           .scope = "workload",
                           .hooks = {{.hook = "sched_switch",
                                      .attach_type = "raw_tp",
                                      .target = "sched_switch",
                                      .rejected = {"tp_btf: not supported " + kScript}}},
                           .run_count = 100,
                           .run_time_ns = 5000,
                           .drops = 2});
  r.scenarios.push_back(camera);

  ScenarioResult fio;
  fio.name = "fio|randread *_[x]` \"q\"";
  fio.workload_kind = "fio";
  fio.error = "workload timed out after 60 s\n" + kScript;
  Repetition failed;
  failed.failure = "killed by SIGKILL ]]>";
  failed.exit_status = 137;
  failed.warnings = {"benchmark BM_<b>: error_occurred: " + kScript};
  fio.repetitions.push_back(failed);
  r.scenarios.push_back(fio);

  r.verdict = OverallVerdict(r);
  r.exit_code = ExitCodeFor(r, false);
  return r;
}

// Seven repetitions a side of a workload that reports 1000 operations; `fill`
// sets the metrics of repetition i (0..6) of a side. Counters get the ops.
template <typename Fill>
inline ScenarioResult Sides(Fill fill) {
  ScenarioResult s;
  s.name = "loop";
  for (int side = 0; side < 2; ++side) {
    for (int i = 0; i < 7; ++i) {
      Repetition rep;
      rep.index = i;
      fill(rep.metrics, side == 1, i);
      for (auto& [name, metric] : rep.metrics) {
        if (metric.kind == MetricKind::kCounter) metric.ops = 1000;
      }
      (side == 1 ? s.repetitions : s.baseline_repetitions).push_back(rep);
    }
  }
  return s;
}

double Jitter(int i) { return 1 + 0.01 * ((i * 3) % 7 - 3); }  // -3 % .. +3 %, a fixed order

inline LogLinearHistogram Latencies(std::vector<std::pair<uint64_t, uint64_t>> value_counts) {
  LogLinearHistogram hist;
  for (auto [value, count] : value_counts) hist.Record(value, count);
  return hist;
}

// A run measured on a shared host: 50 % more getppid calls per operation; the sampled
// syscall latency's p99 fell 94 % (the sleeps' share of the samples fell);
// another tenant's load rose on the host.
inline ScenarioResult MoreGetppidCalls() {
  return Sides([](MetricSet& m, bool candidate, int i) {
    const double getppid = (candidate ? 24 : 16) * 1000 * Jitter(i);
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.110 : 0.100) * Jitter(i), "s");
    m["syscalls.count.getppid"] = CounterMetric("syscalls.count.getppid", "count", getppid, 0.1);
    m["syscalls.count"] = CounterMetric("syscalls.count", "count", getppid + 4000, 0.1);
    // 1 us calls, and 1 in 100 (baseline) or 1 in 200 (candidate) a 300 us sleep.
    m["syscalls.latency"] =
        HistogramMetric("syscalls.latency", "ns", Latencies({{1000, candidate ? 1990 : 990}, {300000, 10}}), 0.1);
    m["host.other_cpus"] = ScalarMetric("host.other_cpus", (candidate ? 1.2 : 0.4) * Jitter(i), "cpus", Better::kNone);
    m["sched.runq_latency"] = HistogramMetric("sched.runq_latency", "ns", Latencies({{5000 + 400 * i, 50}}), 0.1);
  });
}

// Five repetitions a side: reclaim grows tenfold with little noise, run-queue
// latency by 20 % within wide noise, syscalls per op by 1 %, the wall time
// by 30 %. A million operations a repetition: the syscalls' extra 15 ns an
// operation are 5 % of its extra 0.3 us, enough to count as a cause.
inline ScenarioResult ScenarioWithBaselineRepetitions() {
  ScenarioResult s;
  s.name = "camera";
  auto repetitions = [](double reclaim, double runq, double syscalls_per_op, double wall) {
    std::vector<Repetition> reps;
    for (int i = 0; i < 5; ++i) {
      Repetition rep;
      rep.index = i;
      double noise = 1 + 0.02 * (i - 2);
      rep.metrics["mm.reclaim"] = CounterMetric("mm.reclaim", "count", reclaim * noise, 1.0);
      Metric syscalls = CounterMetric("syscalls.count", "count", syscalls_per_op * 1e6 * (1 + 0.001 * i), 1.0);
      syscalls.ops = 1e6;
      rep.metrics["syscalls.count"] = syscalls;
      LogLinearHistogram hist;
      hist.Record(static_cast<uint64_t>(runq * (1 + 0.3 * (i - 2))), 100);
      rep.metrics["sched.runq_latency"] = HistogramMetric("sched.runq_latency", "ns", hist, 1.0);
      rep.metrics["workload.wall_time"] = ScalarMetric("workload.wall_time", wall * noise, "s");
      reps.push_back(rep);
    }
    return reps;
  };
  s.baseline_repetitions = repetitions(10, 100000, 3.0, 1.0);
  s.repetitions = repetitions(100, 120000, 3.03, 1.3);
  return s;
}

class ReportTest : public ::testing::Test {
 protected:
  RunResults results_ = Explained(HostileResults());
};

}  // namespace perfgate::testing
