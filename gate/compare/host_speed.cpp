#include "compare/host_speed.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "stats/power.h"
#include "stats/relative_change.h"

namespace perfgate {

namespace {

std::vector<double> CanaryValues(const ScenarioResult& scenario, const char* name) {
  std::vector<double> values;
  for (const Repetition& rep : scenario.repetitions) {
    if (!rep.measured()) continue;
    auto it = rep.metrics.find(name);
    if (it != rep.metrics.end() && it->second.value > 0 && std::isfinite(it->second.value))
      values.push_back(it->second.value);
  }
  return values;
}

double MedianOf(const ScenarioResult& scenario, const char* name) {
  std::vector<double> values = CanaryValues(scenario, name);
  if (values.empty()) return NAN;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

// The share of `baseline`'s time the faults canary stands for: its page
// faults per repetition at the canary's cost per page, over its wall time,
// at most 1; 1 when it did not count them (a slower host must not fail a
// check for want of a count).
double FaultShare(const ScenarioResult& baseline) {
  const double faults = MedianOf(baseline, kWorkloadPageFaults), wall = MedianOf(baseline, kWorkloadWallTime);
  const double per_mib = MedianOf(baseline, kHostCanaryFault);
  const long page = sysconf(_SC_PAGESIZE);
  if (!(faults >= 0) || !(wall > 0) || !(per_mib > 0) || page <= 0) return 1;
  const double per_page = per_mib * static_cast<double>(page) / (1024.0 * 1024.0);
  return std::clamp(faults * per_page / wall, 0.0, 1.0);
}

}  // namespace

double HostSpeedFloorPct(const std::string& canary) {
  if (canary == kHostCanaryMemory) return kHostStreamFloorPct;
  if (canary == kHostCanaryFault) return kHostFaultFloorPct;
  return kHostSpeedFloorPct;
}

int HostSpeedScaling(const std::string& metric, const std::string& unit) {
  // Counted work is the workload's own, however fast the host ran it.
  if (metric.starts_with("instr.") || metric.starts_with("cpu.instructions")) return 0;
  if (IsTimeUnit(unit)) return 1;
  if (unit.ends_with("/s") || unit == "index") return -1;
  return 0;
}

std::optional<HostSpeed> CompareHostSpeed(const ScenarioResult& candidate, const ScenarioResult& baseline,
                                          double confidence) {
  std::optional<HostSpeed> steady, slower, faster;
  // The direct reads are recorded but decide nothing: one 4 KiB read waits
  // behind whatever else the device serves, and on the CI hosts their
  // spread over a run was about 100 % (bench/canary.sh).
  for (const char* name : kHostSpeedCanaries) {
    const std::vector<double> then = CanaryValues(baseline, name), now = CanaryValues(candidate, name);
    if (then.size() < static_cast<size_t>(kMinCanaries) || now.size() < static_cast<size_t>(kMinCanaries)) continue;
    const stats::RelativeChange shift = stats::RelativeShiftOfLogs(then, now, confidence);
    if (std::isnan(shift.change) || !shift.low || !shift.high) continue;
    HostSpeed speed;
    speed.canary = name;
    speed.change_pct = 100 * shift.change;
    speed.low_pct = 100 * *shift.low;
    speed.high_pct = 100 * *shift.high;
    speed.baseline_count = static_cast<int>(then.size());
    speed.candidate_count = static_cast<int>(now.size());
    speed.confidence = confidence;
    // Fresh memory slower to come by slows a workload by as much only in
    // the time it spends faulting memory in: a loop that maps nothing not
    // at all (in the slower-host VM test, the capped guest's faults 3.7x
    // slower beside its loop's 2.5x and a shell loop's 7.9x with a +150 %
    // change planted).
    if (std::string(name) == kHostCanaryFault) speed.share = FaultShare(baseline);
    // Of several canaries that moved, the one that moved surely furthest
    // decides (the highest low end of a slower host's, the lowest high end
    // of a faster one's), not the one whose interval merely reaches
    // furthest: in the slower-host VM test the stream's 5 fresh repetitions
    // once read +83.7 ... +343 % beside the loop's +99.3 ... +154.3 %, and
    // the stream's far end explained a +150 % change away.
    const double floor = HostSpeedFloorPct(name);
    if (speed.Effective(speed.low_pct) > floor) {
      speed.direction = HostSpeed::Direction::kSlower;
      if (!slower || speed.Effective(speed.low_pct) > slower->Effective(slower->low_pct)) slower = speed;
    } else if (speed.Effective(speed.high_pct) < -floor) {
      speed.direction = HostSpeed::Direction::kFaster;
      if (!faster || speed.Effective(speed.high_pct) < faster->Effective(faster->high_pct)) faster = speed;
    } else if (!steady) {
      steady = speed;  // the first measured, the cpu canary where there is one
    }
  }
  // A host slower by one measure is slower, whatever another says: a slower
  // host must not fail a check, a faster one only costs an improvement.
  return slower ? slower : faster ? faster : steady;
}

namespace {

// The host's factor on a check's value at the far end of the canary's
// interval, widened by the canary's floor (its time ratio for times, the
// inverse for rates); nullopt when the host was steady or the check does
// not move with it. The floor: the canary's reading of the host wanders by
// that much from one run to the next, and the work it times is not the
// workload's, so the slowdown it names may be short of the workload's by as
// much (in the slower-host VM test, once, a loop 3.63x slower against the
// canary's 2.82x, its interval's far end 3.09x).
std::optional<double> HostFactor(const CheckResult& check, const HostSpeed& speed) {
  const int scaling = HostSpeedScaling(check.spec.metric, check.unit);
  if (scaling == 0 || speed.direction == HostSpeed::Direction::kSteady) return std::nullopt;
  const bool slower = speed.direction == HostSpeed::Direction::kSlower;
  const double floor = 1 + HostSpeedFloorPct(speed.canary) / 100;
  const double far = 1 + speed.Effective(slower ? speed.high_pct : speed.low_pct) / 100;
  const double canary = slower ? far * floor : far / floor;
  if (!(canary > 0)) return std::nullopt;
  return scaling > 0 ? canary : 1 / canary;
}

// Whether moving the value that way is bad for the check: up for
// lower-is-better values, down for higher-is-better ones, either way
// without a better direction.
bool IsBadWay(const CheckResult& check, bool up) {
  return up ? check.better != Better::kHigher : check.better != Better::kLower;
}

}  // namespace

std::optional<double> ChangeTheHostExplains(const CheckResult& check, const HostSpeed& speed, bool bad_side) {
  const std::optional<double> factor = HostFactor(check, speed);
  if (!factor) return std::nullopt;
  const bool up = *factor > 1;
  if (IsBadWay(check, up) != bad_side) return std::nullopt;
  if (!bad_side && check.better == Better::kNone) return std::nullopt;  // no direction is good
  const double threshold = check.spec.max_regression_pct / 100;
  return up ? 100 * ((1 + threshold) * *factor - 1) : 100 * (1 - (1 - threshold) * *factor);
}

double SmallestChangeTheHostLetsDecide(double canary_cv) {
  // One-sided 5 %: the level of the interval's end that decides the host's speed.
  const double resolved = 100 * stats::MinimumDetectableRelativeEffect(10, 10, canary_cv, 0.05);
  return std::max(kHostSpeedFloorPct, resolved);
}

std::optional<double> WorstChangeBeneathTheHost(const CheckResult& check, const HostSpeed& speed, double worst_pct) {
  const std::optional<double> factor = HostFactor(check, speed);
  if (!factor || check.better == Better::kNone) return std::nullopt;
  const bool up = *factor > 1;
  if (IsBadWay(check, up)) return std::nullopt;
  // Lower is better: the value went down by the factor; higher is better: up.
  if (check.better == Better::kLower) return 100 * ((1 + worst_pct / 100) / *factor - 1);
  return 100 * (1 - (1 - worst_pct / 100) / *factor);
}

}  // namespace perfgate
