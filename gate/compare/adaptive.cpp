#include "compare/adaptive.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "stats/distributions.h"
#include "stats/sequential.h"

namespace perfgate {

namespace {

// The look at or after `n` repetitions, or the last one.
size_t LookIndex(const std::vector<int>& looks, size_t n) {
  for (size_t k = 0; k < looks.size(); ++k) {
    if (static_cast<size_t>(looks[k]) >= n) return k;
  }
  return looks.size() - 1;
}

double ComputeLevelScale(const AdaptiveRepetitions& plan, size_t baseline_n, size_t candidate_n, double alpha) {
  const std::vector<int> looks = AdaptiveLooks(plan.min, plan.max);
  const size_t stop = LookIndex(looks, candidate_n);
  const double full = stats::TwoSampleInformation(plan.paired ? plan.max : static_cast<double>(baseline_n), plan.max);
  std::vector<double> fractions;
  for (size_t k = 0; k <= stop; ++k) {
    const double n = k == stop ? static_cast<double>(candidate_n) : looks[k];
    const double b = k == stop || !plan.paired ? static_cast<double>(baseline_n) : looks[k];
    fractions.push_back(std::clamp(stats::TwoSampleInformation(b, n) / full, 1e-6, 1.0));
  }
  // Information cannot shrink between looks (a failed repetition).
  for (size_t k = 1; k < fractions.size(); ++k) fractions[k] = std::max(fractions[k], fractions[k - 1] + 1e-9);
  if (fractions.back() > 1) fractions.back() = 1;
  return stats::SequentialLevels(fractions, alpha).back() / alpha;
}

// The log change in the bad direction, and the threshold on the same scale.
double BadSideLog(const CheckResult& check, double change_pct) {
  const double log_change = std::log1p(change_pct / 100);
  switch (check.better) {
    case Better::kLower:
      return log_change;
    case Better::kHigher:
      return -log_change;
    case Better::kNone:
      return std::fabs(log_change);
  }
  return log_change;
}

double ThresholdLog(const CheckResult& check) {
  const double t = check.spec.max_regression_pct / 100;
  if (check.better == Better::kHigher) return t >= 1 ? HUGE_VAL : -std::log1p(-t);
  return std::log1p(t);
}

// The chance that check's estimate at `max` repetitions would be a
// regression, if the change seen so far, plus `optimism` standard errors,
// were the true change (normal approximation on the log scale; the standard
// error from the interval).
double ConditionalPower(const CheckResult& check, const AdaptiveRepetitions& plan, const CompareOptions& options,
                        size_t family_size, double optimism) {
  if (!check.change_ci_low_pct || !check.change_ci_high_pct) return 1;  // cannot tell: go on
  const double z_interval = stats::NormalQuantile(0.5 + options.interval_confidence / 2);
  const double se =
      (std::log1p(*check.change_ci_high_pct / 100) - std::log1p(*check.change_ci_low_pct / 100)) / (2 * z_interval);
  const double estimate = BadSideLog(check, check.change_pct) + optimism * se;
  const double n_b = static_cast<double>(check.baseline_values.size());
  const double n_c = static_cast<double>(check.candidate_values.size());
  const double final_b = plan.paired ? plan.max : n_b;
  const double ratio = stats::TwoSampleInformation(n_b, n_c) / stats::TwoSampleInformation(final_b, plan.max);
  if (!(se > 0) || !(ratio < 1)) return 0;
  const double se_final = se * std::sqrt(ratio);

  double alpha = RegressionAlpha(options) / static_cast<double>(std::max<size_t>(family_size, 1));
  if (check.better == Better::kNone) alpha /= 2;
  const double level = alpha * SequentialLevelScale(plan, static_cast<size_t>(final_b), plan.max, alpha);
  const double bar = std::max(ThresholdLog(check) + z_interval * se_final, stats::NormalQuantile(1 - level) * se_final);
  return stats::NormalSurvival((bar - estimate) / (se_final * std::sqrt(1 - ratio)));
}

}  // namespace

std::vector<int> AdaptiveLooks(int min, int max) {
  std::vector<int> looks = {min};
  if (max <= min) return looks;
  const int steps = std::min(kMaxLooks - 1, max - min);
  for (int i = 1; i <= steps; ++i) {
    const int n = min + static_cast<int>(std::lround(static_cast<double>(max - min) * i / steps));
    if (n > looks.back()) looks.push_back(n);
  }
  return looks;
}

double SequentialLevelScale(const AdaptiveRepetitions& plan, size_t baseline_n, size_t candidate_n, double alpha) {
  if (plan.max <= plan.min || baseline_n == 0 || candidate_n == 0 || !(alpha > 0 && alpha < 1)) return 1;
  // A run has a few distinct (plan, counts, level) combinations; each costs
  // a numerical integration of a few milliseconds.
  using Key = std::tuple<int, int, bool, size_t, size_t, double>;
  static thread_local std::map<Key, double> cache;
  const Key key{plan.min, plan.max, plan.paired, baseline_n, candidate_n, alpha};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() > 4096) cache.clear();
  const double scale = ComputeLevelScale(plan, baseline_n, candidate_n, alpha);
  cache.emplace(key, scale);
  return scale;
}

bool NeedsMoreRepetitions(const ScenarioResult& so_far, const ScenarioResult* baseline, const Environment& environment,
                          const CompareOptions& options, size_t family_size) {
  if (!so_far.adaptive || !so_far.error.empty()) return false;
  const AdaptiveRepetitions& plan = *so_far.adaptive;
  size_t measured = 0;
  for (const Repetition& rep : so_far.repetitions) measured += rep.measured();
  if (measured >= static_cast<size_t>(plan.max)) return false;
  if (baseline == nullptr) return true;
  const std::vector<int> looks = AdaptiveLooks(plan.min, plan.max);
  if (std::find(looks.begin(), looks.end(), static_cast<int>(measured)) == looks.end()) return true;

  RunResults interim;
  interim.environment = environment;
  interim.scenarios.push_back(so_far);
  CompareOptions at_look = options;
  at_look.family_size_at_least = std::max(options.family_size_at_least, family_size);
  EvaluateChecks(interim, {{so_far.name, *baseline}}, at_look);
  for (const CheckResult& check : interim.scenarios[0].checks) {
    if (check.spec.type != CheckSpec::Type::kRegression || check.verdict != Verdict::kInconclusive) continue;
    if (check.baseline_values.empty()) continue;  // more repetitions cannot help
    const double optimism = plan.busy_host ? kBusyHostOptimism : 0;
    if (ConditionalPower(check, plan, options, at_look.family_size_at_least, optimism) >= kMinConditionalPower)
      return true;
  }
  return false;
}

}  // namespace perfgate
