#include "report/attribution.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "report/format.h"
#include "stats/descriptive.h"

namespace perfgate {
namespace {

struct Samples {
  std::string unit;
  std::vector<double> baseline;
  std::vector<double> candidate;
};

using SamplesByStatistic = std::map<std::pair<std::string, std::string>, Samples>;

// Statistics that say how a kernel metric moved: per operation when the
// workload counted its operations (a slower run does not inflate them).
std::vector<std::string> TellingStatistics(const Metric& metric) {
  switch (metric.kind) {
    case MetricKind::kScalar:
      return {"value"};
    case MetricKind::kCounter:
      return {metric.ops && *metric.ops > 0 ? "per_op" : "count"};
    case MetricKind::kHistogram:
      return {"p50", "p99"};
  }
  return {};
}

void AddRepetitions(const std::vector<Repetition>& repetitions, bool baseline, SamplesByStatistic& out) {
  for (const Repetition& rep : repetitions) {
    if (rep.warmup || !rep.failure.empty()) continue;
    for (const auto& [name, metric] : rep.metrics) {
      if (IsOutcomeMetric(name)) continue;
      for (const std::string& statistic : TellingStatistics(metric)) {
        std::optional<double> value = StatisticValue(metric, statistic);
        if (!value || !std::isfinite(*value)) continue;
        Samples& samples = out[{name, statistic}];
        samples.unit = StatisticUnit(metric, statistic);
        (baseline ? samples.baseline : samples.candidate).push_back(*value);
      }
    }
  }
}

SamplesByStatistic SamplesOf(const ScenarioResult& scenario) {
  SamplesByStatistic out;
  if (!scenario.baseline_repetitions.empty()) {
    AddRepetitions(scenario.baseline_repetitions, true, out);
    AddRepetitions(scenario.repetitions, false, out);
    return out;
  }
  for (const CheckResult& check : scenario.checks) {
    if (IsOutcomeMetric(check.spec.metric) || !HasBaseline(check)) continue;
    out[{check.spec.metric, check.statistic}] = {check.unit, check.baseline_values, check.candidate_values};
  }
  return out;
}

// Robust standard deviations beyond which a metric has clearly moved.
constexpr double kClearEffect = 10;

// How large a change is as a ratio, either way: |log(candidate / baseline)|.
double RelativeSize(const KernelShift& shift) {
  if (shift.baseline_median > 0 && shift.candidate_median > 0)
    return std::fabs(std::log(shift.candidate_median / shift.baseline_median));
  return std::isfinite(shift.change_pct) ? std::fabs(shift.change_pct) / 100 : HUGE_VAL;
}

double RobustSd(const std::vector<double>& values) { return 1.4826 * stats::MedianAbsoluteDeviation(values); }

std::optional<KernelShift> ShiftOf(const std::string& metric, const std::string& statistic, const Samples& samples) {
  if (samples.baseline.empty() || samples.candidate.empty()) return std::nullopt;
  KernelShift shift{.metric = metric, .statistic = statistic, .unit = samples.unit};
  shift.baseline_median = stats::Median(samples.baseline);
  shift.candidate_median = stats::Median(samples.candidate);
  double moved = shift.candidate_median - shift.baseline_median;
  if (moved == 0 || !std::isfinite(moved)) return std::nullopt;
  double sb = RobustSd(samples.baseline), sc = RobustSd(samples.candidate);
  double floor = 0.01 * std::max(std::fabs(shift.baseline_median), std::fabs(shift.candidate_median));
  double spread = std::max(std::sqrt((sb * sb + sc * sc) / 2), floor);
  shift.effect_size = moved / spread;
  shift.change_pct = shift.baseline_median != 0 ? 100 * moved / std::fabs(shift.baseline_median)
                                                : std::copysign(std::numeric_limits<double>::infinity(), moved);
  return shift;
}

}  // namespace

bool IsOutcomeMetric(const std::string& metric) {
  // Sources the probes own (docs/ARCHITECTURE.md, "Metric names") and the host's load;
  // everything else comes from the workload or its adapter.
  static constexpr std::array<std::string_view, 10> kKernelSources = {"sched", "syscalls", "mm",   "block", "irq",
                                                                      "ufunc", "proc",     "host", "lock",  "tcp"};
  std::string_view source = std::string_view(metric).substr(0, metric.find('.'));
  return std::find(kKernelSources.begin(), kKernelSources.end(), source) == kKernelSources.end();
}

std::vector<KernelShift> KernelShifts(const ScenarioResult& scenario, size_t limit) {
  std::vector<KernelShift> shifts;
  for (const auto& [key, samples] : SamplesOf(scenario)) {
    if (auto shift = ShiftOf(key.first, key.second, samples)) shifts.push_back(std::move(*shift));
  }
  // Effect size first, up to kClearEffect: beyond it a metric has clearly
  // moved, and among those the larger relative change ranks higher (a
  // near-constant metric's tiny spread would otherwise let a small move
  // outrank reclaim growing 80x). Stable: ties keep name order, so the
  // output is deterministic.
  std::stable_sort(shifts.begin(), shifts.end(), [](const KernelShift& a, const KernelShift& b) {
    const double ea = std::min(std::fabs(a.effect_size), kClearEffect);
    const double eb = std::min(std::fabs(b.effect_size), kClearEffect);
    if (ea != eb) return ea > eb;
    return RelativeSize(a) > RelativeSize(b);
  });
  if (shifts.size() > limit) shifts.resize(limit);
  return shifts;
}

std::vector<Explanation> Explain(const std::vector<Finding>& findings) {
  std::vector<Explanation> out;
  for (const Finding& f : findings) {
    if (!f.check || !IsFailure(f.outcome) || !IsOutcomeMetric(f.check->spec.metric)) continue;
    auto same = std::find_if(out.begin(), out.end(), [&](const Explanation& e) { return e.scenario == f.scenario; });
    if (same != out.end()) {
      same->failing.push_back(f.check);
      continue;
    }
    if (out.size() == kMaxExplainedFailures) continue;
    out.push_back({f.scenario, f.scenario_index, {f.check}, KernelShifts(*f.scenario)});
  }
  return out;
}

std::string FormatEffectSize(double effect_size) {
  if (!std::isfinite(effect_size)) return "n/a";
  return (effect_size >= 0 ? "+" : "-") + FormatNumber(std::fabs(effect_size));
}

}  // namespace perfgate
