#include "compare/busy_host.h"

#include <vector>

#include "metrics/metric.h"
#include "stats/descriptive.h"

namespace perfgate {

std::optional<double> SpareCpus(const Repetitions& candidate, int cpu_count) {
  if (cpu_count <= 0) return std::nullopt;
  std::vector<double> spare;
  for (const MetricSet* metrics : candidate) {
    auto other = metrics->find(kHostOtherCpus);
    auto cpu = metrics->find(kWorkloadCpuTime);
    auto wall = metrics->find(kWorkloadWallTime);
    if (other == metrics->end() || cpu == metrics->end() || wall == metrics->end() || !(wall->second.value > 0))
      continue;
    spare.push_back(cpu_count - other->second.value - cpu->second.value / wall->second.value);
  }
  if (spare.empty()) return std::nullopt;
  return stats::Median(spare);
}

std::optional<std::pair<double, double>> HostOtherCpus(const Repetitions& candidate, const ScenarioResult* baseline) {
  if (baseline == nullptr) return std::nullopt;
  std::vector<double> now = StatisticValues(candidate, kHostOtherCpus, "value");
  std::vector<double> then = StatisticValues(MeasuredRepetitions(*baseline), kHostOtherCpus, "value");
  if (now.empty() || then.empty()) return std::nullopt;
  return std::make_pair(stats::Median(now), stats::Median(then));
}

}  // namespace perfgate
