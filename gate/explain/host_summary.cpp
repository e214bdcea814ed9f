#include "explain/host_summary.h"

#include <algorithm>
#include <vector>

#include "metrics/metric.h"
#include "stats/descriptive.h"

namespace perfgate {

HostSummary SummarizeHost(const ScenarioResult& scenario) {
  HostSummary summary;
  std::vector<double> behind, share, wall;
  for (const Repetition& rep : scenario.repetitions) {
    if (!rep.measured()) continue;
    auto b = rep.metrics.find(kHostRunqWaitBehindOthers);
    auto w = rep.metrics.find(kWorkloadWallTime);
    if (b == rep.metrics.end() || w == rep.metrics.end()) continue;
    behind.push_back(b->second.value);
    wall.push_back(w->second.value);
    auto s = rep.metrics.find(kHostRunqWaitBehindOthersShare);
    if (s != rep.metrics.end()) share.push_back(s->second.value);
  }
  if (!behind.empty()) {
    const double median = stats::Median(behind);
    if (median > 0 && median >= kShownBehindOthersShareOfWall * stats::Median(wall)) {
      summary.waited_behind_others_s = median;
      if (!share.empty()) summary.behind_others_share = stats::Median(share);
      summary.holders = TopCpuHolders(scenario.repetitions, kTopCpuHolders);
    }
  }
  for (const char* name : {kHostCanaryCpu, kHostCanaryMemory, kHostCanaryFault, kHostCanaryIo}) {
    std::vector<double> values;
    for (const Repetition& rep : scenario.repetitions) {
      if (auto it = rep.metrics.find(name); it != rep.metrics.end()) values.push_back(it->second.value);
    }
    if (values.empty()) continue;
    summary.canary_count = std::max(summary.canary_count, values.size());
    // The upper median, as the host line always gave it.
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
    summary.canary_medians.emplace_back(name, values[values.size() / 2]);
  }
  return summary;
}

}  // namespace perfgate
