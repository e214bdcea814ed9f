// What a check reads from a scenario's repetitions, and how it names itself
// and says why it cannot be evaluated: shared by the budget, the evidence
// of a regression and the decision (compare.h).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "metrics/results.h"

namespace perfgate {

using Repetitions = std::vector<const MetricSet*>;

// Only successful measured repetitions are independent samples of the workload.
Repetitions MeasuredRepetitions(const ScenarioResult& scenario);
// The first of `reps` that has metric `name`; nullptr when none has.
const Metric* FindMetric(const Repetitions& reps, const std::string& name);
// `statistic` of metric `name` in every repetition that has a finite one.
std::vector<double> StatisticValues(const Repetitions& reps, const std::string& name, const std::string& statistic);
// The statistic per repetition index, for pairing the two sides of an
// interleaved run: their repetitions of one round share an index.
std::map<int, double> ValuesByRound(const ScenarioResult& scenario, const std::string& name,
                                    const std::string& statistic);
// The repetitions of `scenario` a neighbour did not disturb
// (Repetition::tainted empty) and the taint of the first one it did.
std::pair<Repetitions, std::string> CleanRepetitions(const ScenarioResult& scenario);

// "+3.2", "10 %", "0.0012": a change, a threshold and a p as messages show them.
std::string FormatSignedPct(double pct);
std::string FormatPct(double pct);
std::string FormatP(double p);
// "workload.wall_time value": the metric and statistic a message is about.
std::string Subject(const CheckResult& check);

void SetError(CheckResult& check, std::string message);
// Statistic, unit, direction and candidate values; false (verdict error) when
// the check cannot be evaluated at all.
bool ResolveCandidate(CheckResult& check, const ScenarioResult& result, const Repetitions& reps);

}  // namespace perfgate
