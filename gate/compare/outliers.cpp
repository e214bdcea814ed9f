#include "compare/outliers.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "base/quantity.h"
#include "stats/descriptive.h"

namespace perfgate {

namespace {

// A repetition further than this many robust standard deviations from the
// median is an outlier (Iglewicz and Hoaglin's cut-off).
constexpr double kOutlierZ = 3.5;

// Repetition `i`'s most unusual other metric, relative to its own median
// across `reps`: what that repetition did differently (more run-queue wait,
// a busier host, more reclaim). Empty when nothing stands out.
std::string WhatStandsOut(const Repetitions& reps, size_t i, const std::string& exclude) {
  std::string found;
  double strongest = 0;
  for (const auto& [name, metric] : *reps[i]) {
    // The workload's own times and counts move with the check itself.
    if (name == exclude || name.starts_with("workload.")) continue;
    const char* statistic = metric.kind == MetricKind::kHistogram ? "p99"
                            : metric.kind == MetricKind::kCounter ? "count"
                                                                  : "value";
    const std::optional<double> value = StatisticValue(metric, statistic);
    const std::vector<double> all = StatisticValues(reps, name, statistic);
    if (!value || all.size() != reps.size()) continue;
    const double median = stats::Median(all);
    if (!(*value > 0) || !(median > 0) || !(std::fabs(stats::RobustZ(all, *value)) > kOutlierZ)) continue;
    const double strength = std::fabs(std::log(*value / median));
    if (strength <= strongest) continue;
    strongest = strength;
    found = name + (metric.kind == MetricKind::kHistogram ? " p99" : "") + " was " +
            FormatValue("%.2g", *value / median) + "x its median";
  }
  return found;
}

}  // namespace

void AddOutlierNote(CheckResult& check, const Repetitions& reps) {
  const std::vector<double>& values = check.candidate_values;
  if (values.size() < 5 || values.size() != reps.size()) return;
  size_t worst = values.size();
  double worst_z = kOutlierZ;
  for (size_t i = 0; i < values.size(); ++i) {
    const double z = std::fabs(stats::RobustZ(values, values[i]));
    if (z > worst_z) {
      worst_z = z;
      worst = i;
    }
  }
  if (worst == values.size()) return;
  const double median = stats::Median(values);
  check.message += "; outlier: repetition " + std::to_string(worst + 1);
  if (median != 0) check.message += " (" + FormatSignedPct(100 * (values[worst] / median - 1)) + " % from the median)";
  if (std::string why = WhatStandsOut(reps, worst, check.spec.metric); !why.empty()) check.message += ", where " + why;
}

}  // namespace perfgate
