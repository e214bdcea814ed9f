// Turns the repetitions of a run (and of its baseline) into check verdicts.
//
// Regression checks: the values are one statistic per repetition (a fresh
// process each, so independent samples; for histograms the per-repetition
// tail, e.g. p99, not a merged one). Let T be max_regression_pct, and measure
// every change in the bad direction (lower-is-better: larger is worse;
// higher-is-better: smaller is worse; no preferred direction: either way):
//   d      = bad-direction change of the medians, candidate / baseline - 1
//   d_min, d_max = the best and worst ends of the interval_confidence (90 %,
//            so each end is a one-sided 95 % bound) interval of the
//            relative change (for no preferred direction: the ends nearest to
//            and farthest from no change):
//            Hodges–Lehmann interval of the log ratio (distribution-free,
//            inverts the same rank test), or the percentile bootstrap of the
//            median ratio when some repetition measured <= 0
//   p_worse, p_better = one-sided Mann–Whitney p-values (two-sided p_worse
//            when no direction is better), each adjusted across ALL
//            regression checks of the run: Holm (family-wise error), or
//            Benjamini–Hochberg when CompareOptions::fdr. In a scenario with
//            adaptive repetitions, each p is first divided by its look's
//            level scale (compare/adaptive.h), the error-spending boundary
//            in place of alpha.
//   MDE    = minimum detectable change at power 0.8 and per-check level
//            alpha / (number of regression checks), from the pooled robust CV
//            (stats/power.h); infinite when the repetitions are too few for the
//            rank test to ever reach that level
// Verdict, first rule that holds:
//   regression   adjusted p_worse < alpha  and  d > T  and  d_min > T
//                (evidence that it changed, and its whole interval is beyond
//                T, so a shift of about T does not flip between pass and fail)
//                ... unless the metric is a time and the host was busier:
//                the median of host.other_cpus (other work on the machine
//                during each repetition) exceeds the baseline's by more than
//                0.25 CPUs, or other work (> 0.25 CPUs) left the host under
//                0.25 CPUs idle while the candidate ran (CPU count - other
//                work - the workload's own use) -> inconclusive, saying so
//                (stored baselines only: not when both sides ran interleaved
//                in one job, CompareOptions::interleaved)
//   improvement  adjusted p_better < alpha  and  the good-direction change > T
//   pass         d <= T  and  ( d_max <= T
//                               or (adjusted p_worse >= alpha and MDE <= T) )
//                (the interval rules out a change beyond T, or a change of T
//                would have been detected with probability >= 0.8 and was not)
//   inconclusive otherwise; the message says which of: not significant while
//                the estimate exceeds T, the interval straddles T, or
//                T is below the minimum detectable change.
// Missing baseline scenario, metric or values -> inconclusive with the reason.
// A baseline median <= 0 -> inconclusive (a relative threshold is undefined).
//
// Budget checks compare the candidate median with spec.max / spec.min:
// beyond -> regression, else pass; the message counts the repetitions beyond.
//
// A metric absent from every candidate repetition, an inapplicable statistic
// or a budget without bounds -> error, naming metric and scenario (with
// "did you mean" candidates). When a probe of the scenario said it cannot
// measure that metric here (ProbeReport::unavailable: the cpu probe's
// hardware counters on a host without a PMU), the message gives its reason
// and what to do instead; still an error, exit 3: the host cannot measure
// what the check gates on, and more repetitions would not change that.
#pragma once

#include <map>
#include <string>

#include "metrics/results.h"

namespace perfgate {

struct CompareOptions {
  // Family-wise false-alarm rate of a run: the adjusted p of a regression
  // must be below it. 1 %: at 5 %, noisy A/A runs of 20 checks raised an
  // alarm in 3-5 % of runs (tests/unit/verdict_simulation_test.cpp).
  double alpha = 0.01;
  // Confidence of the change's interval, which decides practical size: a
  // regression needs its lower end beyond the threshold, i.e. a one-sided
  // 95 % bound (the test of "the change exceeds T" at level 5 %).
  double interval_confidence = 0.90;
  bool fdr = false;  // Benjamini–Hochberg instead of Holm
  // Size of the family at least this: a look at one scenario of an adaptive
  // run (compare/adaptive.h) counts the checks of the scenarios still to come.
  size_t family_size_at_least = 0;
  // The baseline's repetitions ran interleaved with the candidate's in this
  // job on this host (perfgate ab): the host's state of the moment, busy or
  // quiet, fell on both sides alike, so neither the busier-host nor the
  // saturated-host rule applies; the pairs' noise is the rank test's to weigh.
  bool interleaved = false;
  // Scenarios whose baseline was recorded on another machine (another
  // kernel, CPU model or CPU count), with what differs. Their numbers are not
  // this host's, so a regression check against them is inconclusive and says
  // why, whatever the change; budgets still apply. Empty when the user opted
  // in to comparing across machines.
  std::map<std::string, std::string> foreign_baselines = {};
  // Confirmation before failing (perfgate ab, compare/confirm.h): a
  // regression is flagged at this family-wise level, above alpha, and fails
  // the run only when fresh interleaved pairs confirm it at level
  // alpha / screen_alpha; the two rounds' data are independent, so a false
  // alarm needs both, with probability at most alpha. 0: decided at alpha at
  // once. Improvements are always decided at alpha.
  double screen_alpha = 0;
};

// The family-wise level at which regressions are decided (flagged, when a
// confirmation follows).
inline double RegressionAlpha(const CompareOptions& options) {
  return options.screen_alpha > 0 ? options.screen_alpha : options.alpha;
}

// Fills in every CheckResult of every scenario in `candidate` (their .spec is
// already set by the runner) from the candidate's and the baseline's
// repetitions. `baseline` maps scenario name -> recorded ScenarioResult.
void EvaluateChecks(RunResults& candidate, const std::map<std::string, ScenarioResult>& baseline,
                    const CompareOptions& options);

}  // namespace perfgate
