// "Why it regressed", as part of the results model: what the explain stage
// (gate/explain/) found for a scenario with a failing check, stored in
// results.json under the scenario's "explanation" and only rendered by the
// reporters and bisect (docs/ARCHITECTURE.md, "Why it regressed").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/cpu_holders.h"
#include "metrics/metric_declaration.h"
#include "metrics/profile_growth.h"

namespace perfgate {

// How one kernel-side metric moved from the baseline's repetitions to the
// candidate's, and how much of the workload's change it can account for.
// A kernel-side metric that moved less than this between two kernels is not
// named as a difference between them (ScenarioResult::kernel_differences),
// however clearly it moved.
inline constexpr double kKernelDifferencePct = 5;

struct KernelShift {
  std::string metric;     // "syscalls.count.getppid"
  std::string statistic;  // the statistic shown: "per_op", "count", "sum_per_op", "sum", "p99", "value"
  std::string unit;
  double baseline_median = 0;
  double candidate_median = 0;
  double change_pct = 0;  // signed, relative to the baseline median; +inf from zero
  // Difference of the medians in pooled robust standard deviations (1.4826
  // MAD of each side); a spread under 1 % of the medians counts as 1 %, so
  // a metric without noise that moved 5 % reads as 5.
  double effect_size = 0;

  Pricing pricing = Pricing::kUnpriced;
  double event_cost_s = 0;  // kEvents: the estimated cost of one event (candidate's median)
  bool per_op = false;      // time below is per operation of the workload, else per repetition
  // Time added per operation (or repetition), in seconds: the Hodges-Lehmann
  // shift of the priced samples and the low end of its 90 % interval. The
  // ranking uses the low end, the time the metric accounts for at least.
  double accounted_s = 0;
  double accounted_low_s = 0;
  // accounted_low_s over the workload's wall-time change in the same terms,
  // when the wall time grew.
  std::optional<double> share = std::nullopt;
  // More specific metrics whose time this one's includes and that were
  // subtracted from it first (sched.offcpu.sleep less lock.futex_wait_time).
  std::vector<std::string> excluding = {};
};

// A host.* metric of the scenario, both sides' medians, and whether it
// clearly moved (the 90 % interval of its shift excludes zero): the
// host-noise line names only those that did.
struct HostShift {
  std::string metric;
  std::string unit;
  double baseline_median = 0;
  double candidate_median = 0;
  double change_pct = 0;
  bool moved = false;
};

// Everything the why says of one scenario.
struct Explanation {
  // The failing checks on the workload's outcome (CheckName), most severe
  // first; empty when only kernel-side checks failed (bisect still shows
  // the causes).
  std::vector<std::string> failing;
  // Kernel-side metrics that clearly grew: priced ones by accounted_low_s,
  // largest first, then unpriced ones by relative change.
  std::vector<KernelShift> causes;
  std::vector<HostShift> host;
  // Waits for a CPU that grew while the host was busy: the host's noise.
  std::vector<KernelShift> cpu_waits;
  // The workload's wall-time change per operation (or repetition), seconds.
  std::optional<double> wall_change_s;
  bool per_op = false;
  // Only when no kernel-side metric clearly grew, or counted (exact), which
  // the reporters then say before the kernel-side causes.
  std::optional<UserCodeGrowth> user_code;
  // Who held the CPUs the candidate's threads waited for, largest first.
  std::vector<CpuHolder> cpu_holders;
};

}  // namespace perfgate
