#include "compare/load_allowance.h"

#include <cmath>

#include "base/quantity.h"
#include "metrics/metric.h"

namespace perfgate {

LoadAllowance AllowanceOf(const std::string& metric, const std::string& statistic, const std::string& unit) {
  // Instruction counts, whatever counted them, are the workload's own work.
  if (metric.starts_with("instr.") || metric.starts_with("cpu.instructions")) return {LoadInflation::kNone, 0};
  const bool time = IsTimeUnit(unit);
  // Counts of events per repetition or per operation (system calls, page
  // faults, allocations): not per second, so a longer run adds none. Not the
  // scheduler's (a neighbour preempts the workload more often), the host's
  // own, or the PMU's cycles and cache misses (shared caches).
  const bool scheduling = metric.starts_with("sched.") || metric.starts_with("host.") || metric.starts_with("cpu.");
  if (!time && !scheduling && (statistic == "count" || statistic == "per_op")) return {LoadInflation::kNone, 0};
  // The same counts per second of the repetition's wall time, which the load
  // can only lengthen.
  if (!time && !scheduling && statistic == "rate") return {LoadInflation::kLowersOnly, 0};
  // CPU time charged to the workload (workload.cpu_time, a benchmark's own
  // cpu_time): its queueing time is not in it, only slower execution.
  if (time && statistic == "value" && metric.ends_with("cpu_time"))
    return {LoadInflation::kBounded, kContentionCpuTimePct};
  return {};
}

double BoundTheLoadCanExplain(double bound, bool upper, const LoadAllowance& allowance) {
  if (!upper && allowance.inflation == LoadInflation::kLowersOnly) return -HUGE_VAL;
  if (!upper || allowance.inflation != LoadInflation::kBounded) return bound;
  return bound * (1 + allowance.pct / 100);
}

std::string AllowanceText(const LoadAllowance& allowance) {
  switch (allowance.inflation) {
    case LoadInflation::kNone:
      return "the load adds nothing to counts";
    case LoadInflation::kLowersOnly:
      return "the load adds no events to a rate, it only stretches its time";
    case LoadInflation::kBounded:
      return "contention inflates CPU time by at most " + FormatValue("%.3g", allowance.pct) + " %";
    case LoadInflation::kUnbounded:
      return "";
  }
  return "";
}

}  // namespace perfgate
