#include "compare/deterministic.h"

#include <algorithm>
#include <cmath>

#include "base/quantity.h"
#include "stats/descriptive.h"

namespace perfgate {

namespace {

double SpreadPct(const std::vector<double>& values) {
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  const double median = stats::Median(values);
  return median > 0 ? 100 * (*high - *low) / median : HUGE_VAL;
}

std::string Pct(double pct) { return FormatValue("%.3g", pct) + " %"; }
std::string SignedPct(double pct) { return FormatValue("%+.3g", pct); }

}  // namespace

bool IsNearDeterministic(const std::string& metric) { return IsInstructionCount(metric); }

bool DecideNearDeterministic(CheckResult& check, std::string& fallback) {
  const std::vector<double>& b = check.baseline_values;
  const std::vector<double>& c = check.candidate_values;
  if (b.size() < kDeterministicMinRepetitions || c.size() < kDeterministicMinRepetitions) {
    fallback = "; one repetition a side shows no spread, so the rank tests decide";
    return false;
  }
  const double spread_b = SpreadPct(b), spread_c = SpreadPct(c);
  if (!(std::max(spread_b, spread_c) <= kDeterministicSpreadPct)) {
    fallback = "; the repetitions of this near-deterministic metric spread by " + Pct(std::max(spread_b, spread_c)) +
               " (more than " + Pct(kDeterministicSpreadPct) + "), so the rank tests decide";
    return false;
  }
  const auto [b_low, b_high] = std::minmax_element(b.begin(), b.end());
  const auto [c_low, c_high] = std::minmax_element(c.begin(), c.end());
  const double b_range = *b_high - *b_low, c_range = *c_high - *c_low;
  const double low = 100 * ((*c_low - c_range) / (*b_high + b_range) - 1);
  const double high = 100 * ((*c_high + c_range) / std::max(*b_low - b_range, 1e-300) - 1);
  check.change_pct = 100 * (check.candidate_median / check.baseline_median - 1);
  check.change_ci_low_pct = low;
  check.change_ci_high_pct = high;
  check.p_value.reset();
  check.p_adjusted.reset();

  // The interval as seen from the bad side: positive is worse.
  double worst = high, best = low;
  if (check.better == Better::kHigher) {
    worst = -low;
    best = -high;
  } else if (check.better == Better::kNone) {
    worst = std::max(std::fabs(low), std::fabs(high));
    best = low > 0 ? low : high < 0 ? -high : 0;
  }
  const double threshold = check.spec.max_regression_pct;
  std::string tail;
  if (best > threshold) {
    check.verdict = Verdict::kRegression;
    tail = " > threshold " + Pct(threshold);
  } else if (check.better != Better::kNone && worst < -threshold) {
    check.verdict = Verdict::kImprovement;
    tail = " improvement beyond threshold " + Pct(threshold);
  } else if (worst <= threshold) {
    check.verdict = Verdict::kPass;
    tail = " within threshold " + Pct(threshold);
  } else {
    check.verdict = Verdict::kInconclusive;
    tail = "; inconclusive: the interval reaches across threshold " + Pct(threshold) + "; add repetitions";
  }
  check.message = check.spec.metric + " " + check.statistic + ": " + FormatQuantity(check.baseline_median, check.unit) +
                  " → " + FormatQuantity(check.candidate_median, check.unit) + " (" + SignedPct(check.change_pct) +
                  " %, interval " + SignedPct(low) + " … " + SignedPct(high) + " % from the extremes of " +
                  std::to_string(b.size()) + "+" + std::to_string(c.size()) + " repetitions spreading " +
                  Pct(spread_b) + " and " + Pct(spread_c) + ": near-deterministic)" + tail;
  return true;
}

}  // namespace perfgate
