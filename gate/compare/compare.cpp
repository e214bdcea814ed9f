#include "compare/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "base/quantity.h"
#include "compare/adaptive.h"
#include "compare/budget.h"
#include "compare/busy_host.h"
#include "compare/check_evidence.h"
#include "compare/check_values.h"
#include "compare/deterministic.h"
#include "compare/host_speed.h"
#include "compare/load_allowance.h"
#include "compare/outliers.h"
#include "metrics/metric.h"
#include "stats/multiple_testing.h"
#include "stats/power.h"
#include "stats/signed_rank.h"

namespace perfgate {

namespace {

// ---- regression checks -----------------------------------------------------

// The change as seen from the bad side: positive is worse. In percent.
struct BadSideChange {
  double estimate = 0;
  std::optional<double> worst;  // worst end of the interval
  std::optional<double> best;   // best end of the interval (0 when a two-sided one spans no change)
  double good = 0;              // the change in the good direction (-inf when none is good)
};

BadSideChange ToBadSide(const CheckResult& check) {
  const double change = check.change_pct;
  const auto& low = check.change_ci_low_pct;
  const auto& high = check.change_ci_high_pct;
  switch (check.better) {
    case Better::kLower:
      return {change, high, low, -change};
    case Better::kHigher:
      return {-change, low ? std::optional<double>(-*low) : std::nullopt,
              high ? std::optional<double>(-*high) : std::nullopt, change};
    case Better::kNone: {
      if (!low || !high) return {std::fabs(change), std::nullopt, std::nullopt, -HUGE_VAL};
      const double nearest = *low > 0 ? *low : *high < 0 ? -*high : 0;
      return {std::fabs(change), std::max(*high, -*low), nearest, -HUGE_VAL};
    }
  }
  return {};
}

struct Family {
  size_t size = 0;
  double alpha = 0.01;             // improvements
  double regression_alpha = 0.01;  // regressions: alpha, or the screening level before a confirmation
  double interval_confidence = 0.90;
  std::string method;  // "Holm" or "BH"
};

// A two-sided test spends half on each side.
double PerCheckAlpha(const CheckResult& check, const Family& family) {
  const double alpha = family.regression_alpha / static_cast<double>(family.size);
  return check.better == Better::kNone ? alpha / 2 : alpha;
}

std::string ResolutionLimit(const CheckResult& check, const CheckEvidence& evidence, double per_check_alpha,
                            double mde_pct) {
  const std::string threshold = FormatPct(check.spec.max_regression_pct);
  if (evidence.pairs > 0) {
    const std::string pairs = std::to_string(evidence.pairs) + " pairs";
    if (std::isinf(mde_pct))
      return "cannot resolve " + threshold + " with " + pairs + ": the signed-rank test's smallest p " +
             FormatP(stats::SmallestSignedRankPValue(static_cast<int>(evidence.pairs))) +
             " cannot reach the per-check level " + FormatP(per_check_alpha) + "; add repetitions";
    return "cannot resolve " + threshold + " with " + pairs + " whose ratios vary by " +
           FormatPct(100 * evidence.pair_sd) + "; minimum detectable " + FormatPct(mde_pct);
  }
  const std::string reps =
      std::to_string(check.baseline_values.size()) + "+" + std::to_string(check.candidate_values.size());
  if (std::isinf(mde_pct)) {
    const auto m = static_cast<int>(check.baseline_values.size());
    const auto n = static_cast<int>(check.candidate_values.size());
    return "cannot resolve " + threshold + " with " + reps + " repetitions: the rank test's smallest p " +
           FormatP(stats::SmallestOneSidedPValue(m, n)) + " cannot reach the per-check level " +
           FormatP(per_check_alpha) + "; add repetitions";
  }
  return "cannot resolve " + threshold + " with " + reps + " repetitions at CV " + FormatPct(100 * evidence.cv) +
         "; minimum detectable " + FormatPct(mde_pct);
}

void DecideRegression(const CheckEvidence& evidence, double p_worse_adjusted, double p_better_adjusted,
                      const Family& family) {
  CheckResult& check = *evidence.check;
  const double threshold = check.spec.max_regression_pct;
  const BadSideChange change = ToBadSide(check);
  const bool worse_significant = p_worse_adjusted < family.regression_alpha;
  const bool better_significant = p_better_adjusted < family.alpha;

  // Per-check level of the first Holm / BH step, at the look where an
  // adaptive scenario stopped.
  const double per_check_alpha = PerCheckAlpha(check, family) * evidence.level_scale / evidence.tests;
  const double mde_pct =
      100 * (evidence.pairs > 0 ? stats::MinimumDetectablePairedEffect(static_cast<int>(evidence.pairs),
                                                                       evidence.pair_sd, per_check_alpha)
                                : stats::MinimumDetectableRelativeEffect(
                                      static_cast<int>(check.baseline_values.size()),
                                      static_cast<int>(check.candidate_values.size()), evidence.cv, per_check_alpha));
  if (std::isfinite(mde_pct)) check.min_detectable_pct = mde_pct;

  std::string tail;
  bool report_better_p = change.good > 0;
  // The whole interval beyond the threshold, not just the estimate: a shift
  // of about the threshold's size (machine drift between the baseline and
  // now is 1-4 % on shared CI hosts) must not flip between pass and fail.
  const bool beyond = change.estimate > threshold && (!change.best || *change.best > threshold);
  const bool host_busier = !evidence.interleaved && IsTimeUnit(check.unit) && evidence.host_other_cpus &&
                           evidence.host_other_cpus->first - evidence.host_other_cpus->second > kBusierHostCpus;
  // Saturated by other work, not by the workload alone (one busy thread on a
  // one-CPU host leaves nothing idle and is still a fair measurement).
  const bool host_saturated = !evidence.interleaved && IsTimeUnit(check.unit) && evidence.candidate_spare_cpus &&
                              evidence.host_other_cpus && *evidence.candidate_spare_cpus < kBusierHostCpus &&
                              evidence.host_other_cpus->first > kBusierHostCpus;
  // A change beyond what contention can add on top of the threshold is the
  // workload's, busy host or not; a count the load does not move at all.
  // The bad side of a rate is up only when lower is better.
  const LoadAllowance allowance = AllowanceOf(check.spec.metric, check.statistic, check.unit);
  const bool load_can_reach_bad_side =
      allowance.inflation == LoadInflation::kUnbounded ||
      (allowance.inflation == LoadInflation::kLowersOnly && check.better != Better::kLower);
  const bool beyond_load = !load_can_reach_bad_side && change.best &&
                           *change.best > 100 * (BoundTheLoadCanExplain(1 + threshold / 100, true, allowance) - 1);
  const std::string load_note = (host_saturated || host_busier) && beyond_load
                                    ? " (the host was busy, and " + AllowanceText(allowance) + ")"
                                    : "";
  const std::string allowance_note = allowance.inflation == LoadInflation::kBounded
                                         ? "; " + AllowanceText(allowance) + ", and the interval's low end " +
                                               FormatSignedPct(change.best.value_or(0)) + " % is within it"
                                         : "";
  // A slower host stretches times and thins rates by as much as its
  // canary's change: a regression within that is the host's; beyond it, it
  // is the workload's, whatever the load (compare/host_speed.h).
  // NaN: the host's speed explains nothing on that side.
  const double host_bad =
      evidence.host_speed ? ChangeTheHostExplains(check, *evidence.host_speed, true).value_or(NAN) : NAN;
  const double host_good =
      evidence.host_speed ? ChangeTheHostExplains(check, *evidence.host_speed, false).value_or(NAN) : NAN;
  const std::string host_text = evidence.host_speed ? DescribeHostSpeed(*evidence.host_speed) : "";
  // What the interval's worst end would be without a faster host's push (NaN: no push).
  const double hidden = evidence.host_speed && change.worst
                            ? WorstChangeBeneathTheHost(check, *evidence.host_speed, *change.worst).value_or(NAN)
                            : NAN;
  const bool host_slows = !std::isnan(host_bad);
  const bool host_explains_bad = host_slows && !(change.best && *change.best > host_bad);
  const std::string host_note = host_slows && !host_explains_bad
                                    ? " (" + host_text + ", which explains up to " + FormatSignedPct(host_bad) + " %)"
                                    : "";
  if (worse_significant && beyond && host_explains_bad) {
    check.verdict = Verdict::kInconclusive;
    tail = " > threshold " + FormatPct(threshold) + "; inconclusive: " + host_text + ": up to " +
           FormatSignedPct(host_bad) + " % is the host's, and the interval's low end " +
           FormatSignedPct(change.best.value_or(0)) + " % is within it";
    report_better_p = false;
  } else if (worse_significant && beyond && host_slows) {
    check.verdict = Verdict::kRegression;
    tail = " > threshold " + FormatPct(threshold) + host_note;
    report_better_p = false;
  } else if (worse_significant && beyond && beyond_load) {
    check.verdict = Verdict::kRegression;
    tail = " > threshold " + FormatPct(threshold) + load_note;
    report_better_p = false;
  } else if (worse_significant && beyond && host_saturated && !host_busier) {
    check.verdict = Verdict::kInconclusive;
    tail = " > threshold " + FormatPct(threshold) + "; inconclusive: the host had no CPU to spare (" +
           FormatValue("%.2f", std::max(0.0, *evidence.candidate_spare_cpus)) + " idle) while the candidate ran" +
           allowance_note;
    report_better_p = false;
  } else if (worse_significant && beyond && host_busier) {
    check.verdict = Verdict::kInconclusive;
    tail = " > threshold " + FormatPct(threshold) + "; inconclusive: the host was busier, other work kept " +
           FormatValue("%.2f", evidence.host_other_cpus->first) + " CPUs busy vs " +
           FormatValue("%.2f", evidence.host_other_cpus->second) + " when the baseline was recorded" + allowance_note;
    report_better_p = false;
  } else if (worse_significant && beyond) {
    check.verdict = Verdict::kRegression;
    tail = " > threshold " + FormatPct(threshold);
    report_better_p = false;
  } else if (better_significant && change.good > threshold && change.good <= host_good) {
    check.verdict = Verdict::kInconclusive;
    tail = "; inconclusive: an improvement beyond threshold " + FormatPct(threshold) + ", but " + host_text +
           ": up to " + FormatSignedPct(host_good) + " % the other way is the host's";
  } else if (better_significant && change.good > threshold) {
    check.verdict = Verdict::kImprovement;
    tail = " improvement beyond threshold " + FormatPct(threshold);
  } else if (change.estimate <= threshold && hidden > threshold &&
             ((change.worst && *change.worst <= threshold) || (!worse_significant && mde_pct <= threshold))) {
    // It would pass (its interval within the threshold, or not significant
    // where a change of the threshold's size would have been), but without a
    // faster host's push its interval reaches past the threshold.
    check.verdict = Verdict::kInconclusive;
    tail = " within threshold " + FormatPct(threshold) + "; inconclusive: " + host_text + ", which can hide up to " +
           FormatSignedPct(hidden) + " %";
  } else if (change.estimate <= threshold &&
             ((change.worst && *change.worst <= threshold) || (!worse_significant && mde_pct <= threshold))) {
    check.verdict = Verdict::kPass;
    tail = " within threshold " + FormatPct(threshold);
  } else {
    check.verdict = Verdict::kInconclusive;
    if (!worse_significant && !(mde_pct <= threshold)) {
      tail = "; inconclusive: " + ResolutionLimit(check, evidence, per_check_alpha, mde_pct);
    } else if (!worse_significant) {
      tail = "; inconclusive: beyond threshold " + FormatPct(threshold) + " but not significant";
    } else if (change.estimate > threshold) {
      tail = "; inconclusive: significant and beyond threshold " + FormatPct(threshold) +
             ", but the interval reaches back within it";
    } else {
      tail = "; inconclusive: significant, but the interval reaches past threshold " + FormatPct(threshold);
    }
  }

  check.pairs = static_cast<int>(evidence.pairs);
  check.p_value = report_better_p ? evidence.p_better : evidence.p_worse;
  check.p_adjusted = report_better_p ? p_better_adjusted : p_worse_adjusted;
  std::string interval;
  if (check.change_ci_low_pct && check.change_ci_high_pct) {
    interval = ", " + FormatValue("%.0f", 100 * family.interval_confidence) + " % CI " +
               FormatSignedPct(*check.change_ci_low_pct) + " … " + FormatSignedPct(*check.change_ci_high_pct) + " %";
  }
  check.message = Subject(check) + ": " + FormatQuantity(check.baseline_median, check.unit) + " → " +
                  FormatQuantity(check.candidate_median, check.unit) + " (" + FormatSignedPct(check.change_pct) + " %" +
                  interval + "), p=" + FormatP(*check.p_value) + " (" + evidence.test + family.method + " " +
                  FormatP(*check.p_adjusted) + ")" + tail;
}

// Resets everything EvaluateChecks computes, so re-evaluating a run is idempotent.
void ResetOutcome(CheckResult& check) {
  CheckSpec spec = std::move(check.spec);
  check = CheckResult{};
  check.spec = std::move(spec);
}

}  // namespace

void EvaluateChecks(RunResults& candidate, const std::map<std::string, ScenarioResult>& baseline,
                    const CompareOptions& options) {
  std::vector<CheckEvidence> family;
  for (ScenarioResult& scenario : candidate.scenarios) {
    const Repetitions reps = MeasuredRepetitions(scenario);
    const auto recorded = baseline.find(scenario.name);
    const ScenarioResult* baseline_scenario = recorded == baseline.end() ? nullptr : &recorded->second;
    // Interleaved sides shared the host's speed of the moment; a baseline
    // from another machine is not compared at all.
    scenario.host_speed.reset();
    if (baseline_scenario && !options.interleaved && !options.foreign_baselines.contains(scenario.name))
      scenario.host_speed = CompareHostSpeed(scenario, *baseline_scenario, options.interval_confidence);
    for (CheckResult& check : scenario.checks) {
      ResetOutcome(check);
      if (!scenario.error.empty()) {
        SetError(check, "scenario " + scenario.name + " did not run: " + scenario.error);
        continue;
      }
      if (!ResolveCandidate(check, scenario, reps)) continue;
      if (check.spec.type == CheckSpec::Type::kBudget) {
        EvaluateBudget(check, scenario);
      } else if (auto foreign = options.foreign_baselines.find(scenario.name);
                 foreign != options.foreign_baselines.end() && baseline_scenario != nullptr) {
        // The change is shown for what it is worth; it takes no part in the family.
        if (GatherEvidence(check, scenario.name, baseline_scenario, options.interval_confidence)) {
          check.verdict = Verdict::kInconclusive;
          check.message = Subject(check) + ": " + FormatQuantity(check.baseline_median, check.unit) + " → " +
                          FormatQuantity(check.candidate_median, check.unit) + " (" +
                          FormatSignedPct(check.change_pct) +
                          " %); inconclusive: the baseline was recorded on another machine (" + foreign->second +
                          "), so the change is not this host's (--allow-other-host compares anyway)";
        }
      } else if (auto evidence = GatherEvidence(check, scenario.name, baseline_scenario, options.interval_confidence,
                                                options.interleaved && baseline_scenario
                                                    ? PairedLogRatios(check, scenario, *baseline_scenario)
                                                    : std::vector<double>{})) {
        // Near-deterministic counts are decided by their interval, outside the family.
        std::string fallback;
        if (IsNearDeterministic(check.spec.metric) && DecideNearDeterministic(check, fallback)) continue;
        evidence->deterministic_fallback = fallback;
        evidence->host_other_cpus = HostOtherCpus(reps, baseline_scenario);
        evidence->candidate_spare_cpus = SpareCpus(reps, candidate.environment.cpu_count);
        evidence->candidate = reps;
        evidence->interleaved = options.interleaved;
        if (scenario.host_speed) evidence->host_speed = &*scenario.host_speed;
        evidence->baseline = baseline_scenario;
        evidence->scenario = scenario.name;
        if (scenario.adaptive) evidence->adaptive = &*scenario.adaptive;
        family.push_back(*evidence);
      }
    }
  }
  if (family.empty()) return;

  // One family across the whole run: every regression check is a chance of a
  // false alarm, whichever scenario it belongs to.
  const Family context{std::max(family.size(), options.family_size_at_least), options.alpha, RegressionAlpha(options),
                       options.interval_confidence, options.fdr ? "BH" : "Holm"};
  // Unseen checks of a look count with p = 1.
  std::vector<double> p_worse(context.size, 1.0), p_better(context.size, 1.0);
  for (size_t i = 0; i < family.size(); ++i) {
    CheckEvidence& evidence = family[i];
    if (evidence.adaptive) {
      evidence.level_scale =
          SequentialLevelScale(*evidence.adaptive, evidence.check->baseline_values.size(),
                               evidence.check->candidate_values.size(), PerCheckAlpha(*evidence.check, context));
    }
    // Too few pairs for the signed-rank test to ever reach the check's level
    // (its smallest p is 2^-n; the rank-sum test's, 1 / C(2n, n), is far
    // smaller): the two sides as independent samples, which can.
    if (evidence.tests > 1 &&
        stats::SmallestSignedRankPValue(static_cast<int>(evidence.check->candidate_values.size())) >
            PerCheckAlpha(*evidence.check, context) * evidence.level_scale / 2) {
      CheckEvidence unpaired =
          *GatherEvidence(*evidence.check, evidence.scenario, evidence.baseline, options.interval_confidence);
      // What the pairing did not decide carries over.
      std::tie(unpaired.host_other_cpus, unpaired.candidate_spare_cpus, unpaired.candidate, unpaired.adaptive,
               unpaired.level_scale, unpaired.interleaved, unpaired.host_speed, unpaired.deterministic_fallback) =
          std::tie(evidence.host_other_cpus, evidence.candidate_spare_cpus, evidence.candidate, evidence.adaptive,
                   evidence.level_scale, evidence.interleaved, evidence.host_speed, evidence.deterministic_fallback);
      evidence = std::move(unpaired);
    }
    p_worse[i] = std::min(1.0, evidence.p_worse / evidence.level_scale);
    p_better[i] = std::min(1.0, evidence.p_better / evidence.level_scale);
  }
  const auto adjust = options.fdr ? stats::BenjaminiHochbergAdjust : stats::HolmAdjust;
  const std::vector<double> worse_adjusted = adjust(p_worse);
  const std::vector<double> better_adjusted = adjust(p_better);
  for (size_t i = 0; i < family.size(); ++i) {
    DecideRegression(family[i], worse_adjusted[i], better_adjusted[i], context);
    family[i].check->message += family[i].deterministic_fallback;
    AddOutlierNote(*family[i].check, family[i].candidate);
  }
}

}  // namespace perfgate
