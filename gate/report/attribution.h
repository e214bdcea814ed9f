// "Why it regressed": when an outcome the user feels (wall time, time to
// first frame, IOPS) gets worse, the kernel-side metrics of the same scenario
// that moved the most are the first place to look.
#pragma once

#include <string>
#include <vector>

#include "metrics/results.h"

namespace perfgate {

// Metrics measured by the workload or its adapter ("workload.*", "camera.*",
// "fio.*", ...), as opposed to those the probes measure ("sched.*", "mm.*", ...).
bool IsOutcomeMetric(const std::string& metric);

// Failing checks whose scenario an explanation is worth computing for: a
// report explains the first few, not thousands.
inline constexpr size_t kMaxExplainedFailures = 20;

struct RelatedChange {
  const CheckResult* check = nullptr;
  double change_pct = 0;
};

// The other checks of `scenario` that compare against a baseline, ranked by
// |change_pct|, largest first (ties in suite order), at most `limit`.
std::vector<RelatedChange> RelatedChanges(const ScenarioResult& scenario, const CheckResult& failing, size_t limit = 5);

}  // namespace perfgate
