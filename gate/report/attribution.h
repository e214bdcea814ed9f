// "Why it regressed": when an outcome the user feels (wall time, time to
// first frame, IOPS) gets worse, the kernel-side metrics of the same scenario
// that grew are priced in time, and ranked by how much of the change they can
// account for (docs/ARCHITECTURE.md, "Why it regressed").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "metrics/results.h"
#include "report/outcome.h"

namespace perfgate {

// Metrics measured by the workload or its adapter ("workload.*", "camera.*",
// "fio.*", ...), as opposed to what the probes and the host measure
// ("sched.*", "mm.*", "host.*", ...). The kernel's own counts that the runner
// reads for the workload (workload.page_faults, workload.context_switches)
// are kernel-side.
bool IsOutcomeMetric(const std::string& metric);

// What the host did beside the workload ("host.other_cpus"): noise that can
// slow a workload, never its cause.
bool IsHostMetric(const std::string& metric);

// Other work on the host, in CPUs (host.other_cpus, either side's median),
// from which waits for a CPU are the host's noise rather than causes: on a
// busy host a workload that runs longer, or in longer bursts, is preempted
// more, whatever made it run longer.
inline constexpr double kBusyHostCpus = 0.5;

// A priced kernel-side metric that accounts for less than this share of the
// workload's wall-time change (its estimate, when the wall time grew) is not
// a cause, however clearly it moved.
inline constexpr double kNegligibleShare = 0.01;

// Failing checks whose scenario an explanation is worth computing for: a
// report explains the first few, not thousands.
inline constexpr size_t kMaxExplainedFailures = 20;

// How a kernel-side metric's change becomes time the workload lost.
enum class Pricing {
  kWaitTime,    // a counter of time (sched.offcpu_time, lock.futex_wait_time): the time itself
  kEvents,      // a counter of events: count times an estimated cost per event
  kLatencySum,  // a histogram of latencies: count times mean, the time all of them took
  // Bytes read back after reclaim (mm.reclaim_refault_bytes): their share of
  // the repetition's disk reads times its I/O waits (sched.offcpu.io).
  kReadBack,
  kUnpriced,    // no time estimate: ranked after the priced ones, by relative change
};

// How one kernel-side metric moved from the baseline's repetitions to the
// candidate's, and how much of the workload's change it can account for.
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

// A host.* metric of the scenario, both sides' medians: the host-noise line.
struct HostShift {
  std::string metric;
  std::string unit;
  double baseline_median = 0;
  double candidate_median = 0;
  double change_pct = 0;
};

// Everything the "why" of one scenario says.
struct KernelAttribution {
  // Kernel-side metrics that clearly grew (the low end of the change's 90 %
  // interval is in the costly direction): priced ones by accounted_low_s,
  // largest first, then unpriced ones by relative change. Metrics that
  // improved or did not clearly move, priced ones that account for less than
  // kNegligibleShare of the wall-time change, and host.* metrics, are not here.
  std::vector<KernelShift> causes;
  std::vector<HostShift> host;
  // Waits for a CPU (sched.runq_latency, sched.offcpu.preempted) that grew
  // while the host was busy (kBusyHostCpus): the host's noise, not causes.
  std::vector<KernelShift> cpu_waits;
  // The workload's wall-time change per operation (or repetition), seconds.
  std::optional<double> wall_change_s;
  bool per_op = false;
  // Who held the CPUs the candidate's threads waited for: other processes'
  // tasks by comm, summed over its repetitions, largest first.
  std::vector<CpuHolder> cpu_holders = {};
};

// The attribution of `scenario`: from every metric of the baseline's and the
// candidate's repetitions when the results carry the baseline's, else from
// the checks on kernel-side metrics (their values, unpriced). At most
// `limit` causes.
KernelAttribution Attribute(const ScenarioResult& scenario, size_t limit = 5);

// Attribute(scenario, limit).causes.
std::vector<KernelShift> KernelShifts(const ScenarioResult& scenario, size_t limit = 5);

// A scenario whose user-visible outcome failed: the failing checks on
// outcome metrics, and the kernel-side metrics that account for it.
struct Explanation {
  const ScenarioResult* scenario = nullptr;
  size_t scenario_index = 0;
  std::vector<const CheckResult*> failing;
  std::vector<KernelShift> shifts;
  std::vector<HostShift> host;
  std::vector<KernelShift> cpu_waits;
  std::optional<double> wall_change_s;
  bool per_op = false;
  // When no kernel-side metric clearly grew and the evidence's on-CPU
  // growth is in user code: "the extra cost is on-CPU in user code: NAME
  // self +6.4 pp of 2,400 samples, ±1.1" (UserCodeGrowthLine), NAME not
  // escaped; else empty.
  std::string user_code = {};
  std::vector<CpuHolder> cpu_holders = {};
};

// The user-code line of an Explanation of `scenario`: from its evidence's
// candidate and baseline on-CPU profiles; empty without both.
std::string UserCodeWhy(const ScenarioResult& scenario);

// One Explanation per scenario with a failing outcome check, in the order of
// `findings` (most severe first), at most kMaxExplainedFailures scenarios.
std::vector<Explanation> Explain(const std::vector<Finding>& findings);

// A value of a shift's statistic with its unit; times per operation read as
// "147 µs/op", not "147k ns/op".
std::string FormatShiftValue(double value, const std::string& unit);
// "+9.10 us/op", "+2.00 ms/rep": time a metric accounts for.
std::string FormatAccounted(double seconds, bool per_op);
// "syscalls.count.getppid.per_op +200.0% (16.0 → 48.0 count/op), at least +9.10 us/op (…)", the
// "why" in one phrase for one-line reports (Markdown, JUnit).
std::string DescribeShift(const KernelShift& shift);
// "host noise (not a cause): host.other_cpus 0.950 → 1.02 cpus (+7.4%); waits for a CPU on the busy
// host: sched.offcpu.preempted +170 us/op; CPUs held by other tasks: stress 1.20 s, cc1plus 310 ms",
// or "" when there is none of them. Comms are not escaped.
std::string DescribeHost(const std::vector<HostShift>& host, const std::vector<KernelShift>& cpu_waits,
                         const std::vector<CpuHolder>& cpu_holders = {});

}  // namespace perfgate
