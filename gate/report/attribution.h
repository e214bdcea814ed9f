// "Why it regressed": when an outcome the user feels (wall time, time to
// first frame, IOPS) gets worse, the kernel-side metrics of the same scenario
// that moved the most are the first place to look.
#pragma once

#include <string>
#include <vector>

#include "metrics/results.h"
#include "report/outcome.h"

namespace perfgate {

// Metrics measured by the workload or its adapter ("workload.*", "camera.*",
// "fio.*", ...), as opposed to what the probes and the host measure
// ("sched.*", "mm.*", "host.*", ...).
bool IsOutcomeMetric(const std::string& metric);

// Failing checks whose scenario an explanation is worth computing for: a
// report explains the first few, not thousands.
inline constexpr size_t kMaxExplainedFailures = 20;

// How one statistic of a kernel-side metric moved from the baseline's
// repetitions to the candidate's.
struct KernelShift {
  std::string metric;     // "mm.reclaim_latency"
  std::string statistic;  // "p99", "count", "per_op", "value"
  std::string unit;
  double baseline_median = 0;
  double candidate_median = 0;
  double change_pct = 0;  // signed, relative to the baseline median; +inf from zero
  // Difference of the medians in pooled robust standard deviations (1.4826
  // MAD of each side); a spread under 1 % of the medians counts as 1 %, so
  // a metric without noise that moved 5 % reads as 5.
  double effect_size = 0;
};

// The kernel-side metrics of `scenario` (not IsOutcomeMetric) ranked by
// |effect_size|, largest first, at most `limit`. From every metric of the
// baseline's and the candidate's repetitions when the results carry the
// baseline's (counters per operation when the workload counts them, else
// per repetition; histograms' p50 and p99), else from the checks on such
// metrics. Metrics that did not move are left out.
std::vector<KernelShift> KernelShifts(const ScenarioResult& scenario, size_t limit = 5);

// A scenario whose user-visible outcome failed: the failing checks on
// outcome metrics, and the kernel-side metrics that moved most with them.
struct Explanation {
  const ScenarioResult* scenario = nullptr;
  size_t scenario_index = 0;
  std::vector<const CheckResult*> failing;
  std::vector<KernelShift> shifts;
};

// One Explanation per scenario with a failing outcome check, in the order of
// `findings` (most severe first), at most kMaxExplainedFailures scenarios.
std::vector<Explanation> Explain(const std::vector<Finding>& findings);

// "+12.3" / "-0.8": an effect size as the reports print it.
std::string FormatEffectSize(double effect_size);

}  // namespace perfgate
