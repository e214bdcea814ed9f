#include "compare/check_values.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "base/did_you_mean.h"
#include "base/quantity.h"
#include "metrics/metric.h"
#include "stats/descriptive.h"

namespace perfgate {

namespace {

std::string Join(const std::vector<std::string>& names, const std::string& separator) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : separator) + name;
  return joined;
}

// A metric one of the scenario's probes said it cannot measure here (a
// hardware counter on a host without a PMU): its reason and what to do,
// which no list of the metrics measured instead would tell.
std::string MissingMetricMessage(const std::string& metric, const ScenarioResult& scenario, const Repetitions& reps) {
  std::string message = "metric " + metric + " not measured in scenario " + scenario.name;
  for (const ProbeReport& probe : scenario.probes) {
    for (const UnavailableMetrics& u : probe.unavailable) {
      if (std::find(u.metrics.begin(), u.metrics.end(), metric) == u.metrics.end()) continue;
      return message + ": probe " + probe.name + ": " + u.reason + (u.instead.empty() ? "" : "; " + u.instead);
    }
  }
  std::set<std::string> present;
  for (const MetricSet* metrics : reps) {
    for (const auto& [name, _] : *metrics) present.insert(name);
  }
  std::vector<std::string> close = ClosestMatches(metric, {present.begin(), present.end()}, 3);
  if (!close.empty()) return message + "; did you mean " + Join(close, " or ") + "?";
  if (present.empty()) return message + "; no metrics were measured";
  return message + "; measured: " + Join({present.begin(), present.end()}, ", ");
}

}  // namespace

Repetitions MeasuredRepetitions(const ScenarioResult& scenario) {
  Repetitions reps;
  for (const Repetition& rep : scenario.repetitions) {
    if (rep.measured()) reps.push_back(&rep.metrics);
  }
  return reps;
}

const Metric* FindMetric(const Repetitions& reps, const std::string& name) {
  for (const MetricSet* metrics : reps) {
    if (auto it = metrics->find(name); it != metrics->end()) return &it->second;
  }
  return nullptr;
}

std::vector<double> StatisticValues(const Repetitions& reps, const std::string& name, const std::string& statistic) {
  std::vector<double> values;
  values.reserve(reps.size());
  for (const MetricSet* metrics : reps) {
    auto it = metrics->find(name);
    if (it == metrics->end()) continue;
    if (std::optional<double> v = StatisticValue(it->second, statistic); v && std::isfinite(*v)) values.push_back(*v);
  }
  return values;
}

std::map<int, double> ValuesByRound(const ScenarioResult& scenario, const std::string& name,
                                    const std::string& statistic) {
  std::map<int, double> values;
  for (const Repetition& rep : scenario.repetitions) {
    if (!rep.measured()) continue;
    auto it = rep.metrics.find(name);
    if (it == rep.metrics.end()) continue;
    if (std::optional<double> v = StatisticValue(it->second, statistic); v && std::isfinite(*v))
      values.emplace(rep.index, *v);
  }
  return values;
}

std::pair<Repetitions, std::string> CleanRepetitions(const ScenarioResult& scenario) {
  Repetitions clean;
  std::string first_taint;
  for (const Repetition& rep : scenario.repetitions) {
    if (!rep.measured()) continue;
    if (rep.tainted.empty()) {
      clean.push_back(&rep.metrics);
    } else if (first_taint.empty()) {
      first_taint = rep.tainted;
    }
  }
  return {std::move(clean), std::move(first_taint)};
}

std::string FormatSignedPct(double pct) { return FormatValue("%+.1f", pct); }
std::string FormatPct(double pct) { return FormatValue("%.3g", pct) + " %"; }
std::string FormatP(double p) { return FormatValue("%.2g", p); }

std::string Subject(const CheckResult& check) { return check.spec.metric + " " + check.statistic; }

void SetError(CheckResult& check, std::string message) {
  check.verdict = Verdict::kError;
  check.message = std::move(message);
}

bool ResolveCandidate(CheckResult& check, const ScenarioResult& result, const Repetitions& reps) {
  const std::string& scenario = result.name;
  const Metric* metric = FindMetric(reps, check.spec.metric);
  if (metric == nullptr) {
    SetError(check, MissingMetricMessage(check.spec.metric, result, reps));
    return false;
  }
  check.statistic = check.spec.statistic.empty() ? DefaultStatistic(metric->kind) : check.spec.statistic;
  check.unit = StatisticUnit(*metric, check.statistic);
  check.better = metric->better;
  const std::vector<std::string> allowed = StatisticsFor(metric->kind);
  if (std::find(allowed.begin(), allowed.end(), check.statistic) == allowed.end()) {
    SetError(check, "statistic " + check.statistic + " does not apply to " + ToString(metric->kind) + " metric " +
                        check.spec.metric + " in scenario " + scenario + "; use one of: " + Join(allowed, ", "));
    return false;
  }
  check.candidate_values = StatisticValues(reps, check.spec.metric, check.statistic);
  if (check.candidate_values.empty()) {
    SetError(check, Subject(check) + " has no value in any repetition of scenario " + scenario +
                        (check.statistic == "per_op" ? " (the workload reported no operation count)" : ""));
    return false;
  }
  check.candidate_median = stats::Median(check.candidate_values);
  return true;
}

}  // namespace perfgate
