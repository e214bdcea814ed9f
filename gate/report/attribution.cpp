#include "report/attribution.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <functional>
#include <string_view>

#include "report/format.h"

namespace perfgate {

bool IsOutcomeMetric(const std::string& metric) {
  // Sources the probes own (DESIGN.md "Metric names"); everything else comes
  // from the workload or its adapter.
  static constexpr std::array<std::string_view, 6> kProbeSources = {"sched", "syscalls", "mm", "block", "irq", "ufunc"};
  std::string_view source = std::string_view(metric).substr(0, metric.find('.'));
  return std::find(kProbeSources.begin(), kProbeSources.end(), source) == kProbeSources.end();
}

std::vector<RelatedChange> RelatedChanges(const ScenarioResult& scenario, const CheckResult& failing, size_t limit) {
  std::vector<RelatedChange> related;
  for (const CheckResult& check : scenario.checks) {
    if (&check == &failing || check.verdict == Verdict::kError) continue;
    if (!HasBaseline(check) || !std::isfinite(check.change_pct)) continue;
    related.push_back({&check, check.change_pct});
  }
  // Partial sort: a scenario may have thousands of checks (gbench suites).
  size_t keep = std::min(limit, related.size());
  std::partial_sort(related.begin(), related.begin() + static_cast<std::ptrdiff_t>(keep), related.end(),
                    [](const RelatedChange& a, const RelatedChange& b) {
                      double da = std::fabs(a.change_pct), db = std::fabs(b.change_pct);
                      // Ties in suite order, so the output is deterministic.
                      return da != db ? da > db : std::less<const CheckResult*>()(a.check, b.check);
                    });
  related.resize(keep);
  return related;
}

}  // namespace perfgate
