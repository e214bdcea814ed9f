#include "compare/budget.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/quantity.h"
#include "compare/check_values.h"
#include "compare/load_allowance.h"
#include "stats/descriptive.h"

namespace perfgate {

void EvaluateBudget(CheckResult& check, const ScenarioResult& scenario) {
  const CheckSpec& spec = check.spec;
  if (!spec.max && !spec.min) {
    SetError(check, "budget check " + spec.name + " has neither max nor min");
    return;
  }
  // A budget is an absolute bound, and a host kept busy by other work moves
  // some metrics past it by itself (run-queue waits, wall time, a rate
  // under its minimum). A crossed bound is judged on the repetitions the
  // host left alone: their median when they are at least half, else the
  // check is inconclusive.
  // What the load cannot explain is decided on every repetition, busy or
  // not (compare/load_allowance.h): a count or its rate over its maximum, CPU
  // time past it by more than contention adds, a count under its minimum.
  std::string clean_note;
  if ((spec.max && check.candidate_median > *spec.max) || (spec.min && check.candidate_median < *spec.min)) {
    const auto [clean, taint] = CleanRepetitions(scenario);
    const std::vector<double> values = StatisticValues(clean, spec.metric, check.statistic);
    const size_t all = check.candidate_values.size(), busy = all - std::min(all, values.size());
    const LoadAllowance allowance = AllowanceOf(spec.metric, check.statistic, check.unit);
    const bool over = spec.max && check.candidate_median > *spec.max;
    const double bound = over ? *spec.max : *spec.min;
    const double explained = BoundTheLoadCanExplain(bound, over, allowance);
    const bool beyond_load = allowance.inflation != LoadInflation::kUnbounded &&
                             (over ? check.candidate_median > explained : check.candidate_median < explained);
    if (busy > 0 && beyond_load) {
      clean_note = " (median of " + std::to_string(all) + " repetitions, " + std::to_string(busy) +
                   " taken while other work kept the host busy: " + taint + "; " + AllowanceText(allowance) +
                   (explained != bound ? ", to " + FormatQuantity(explained, check.unit) : "") +
                   (over ? "" : ", and never lowers a value") + ", so the load cannot explain it)";
    } else if (busy > 0 && values.size() * 2 < all) {
      const std::string allowance_text = AllowanceText(allowance);
      check.verdict = Verdict::kInconclusive;
      check.message =
          Subject(check) + " " + FormatQuantity(check.candidate_median, check.unit) + " beyond budget " +
          FormatQuantity(bound, check.unit) + "; inconclusive: other work kept the host busy in " +
          std::to_string(busy) + " of " + std::to_string(all) + " repetitions (" + taint + ")" +
          (allowance_text.empty() ? ", which can stretch it without bound"
                                  : ", and " + allowance_text + ", to " + FormatQuantity(explained, check.unit)) +
          ", so the bound is not held against the workload";
      return;
    }
    if (busy > 0 && !beyond_load) {
      check.candidate_median = stats::Median(values);
      clean_note = " (median of the " + std::to_string(values.size()) + " repetitions the host left alone; " +
                   std::to_string(busy) + " taken while other work kept it busy are left out)";
    }
  }
  const double median = check.candidate_median;
  const bool over = spec.max && median > *spec.max;
  const bool under = !over && spec.min && median < *spec.min;
  check.verdict = over || under ? Verdict::kRegression : Verdict::kPass;

  // Name the bound that decided, or the one nearer to being crossed.
  const bool use_max = over || (!under && spec.max.has_value());
  const double bound = use_max ? *spec.max : *spec.min;
  const auto beyond = std::count_if(check.candidate_values.begin(), check.candidate_values.end(),
                                    [&](double v) { return use_max ? v > bound : v < bound; });
  const char* relation = over ? " > " : under ? " < " : use_max ? " <= " : " >= ";
  check.message = Subject(check) + " " + FormatQuantity(median, check.unit) + relation + "budget " +
                  FormatQuantity(bound, check.unit);
  if (!clean_note.empty()) {
    check.message += clean_note;
  } else if (beyond > 0 && static_cast<size_t>(beyond) < check.candidate_values.size()) {
    check.message += " (median of " + std::to_string(check.candidate_values.size()) + " repetitions; " +
                     std::to_string(beyond) + (use_max ? " above)" : " below)");
  }
}

}  // namespace perfgate
