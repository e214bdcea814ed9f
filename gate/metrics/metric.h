// The metrics model: every number perfgate measures is one Metric of one
// repetition. Names are "<source>.<name>", lower case (docs/ARCHITECTURE.md).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/log_linear_histogram.h"

namespace perfgate {

enum class MetricKind { kScalar, kCounter, kHistogram };
enum class Better { kLower, kHigher, kNone };

struct Metric {
  std::string name;
  MetricKind kind = MetricKind::kScalar;
  std::string unit;  // unit of value / of histogram samples: "s", "ns", "bytes", "count"
  Better better = Better::kLower;
  double value = 0;           // scalar value, or counter's event count
  double duration_s = 0;      // counter: the time the count was taken over (rate = value / duration_s)
  std::optional<double> ops;  // counter: operations the workload reported (per_op = value / ops)
  LogLinearHistogram hist;    // histogram samples
};

// Statistics a check may name. Scalar: "value". Counter: "count", "rate",
// "per_op". Histogram: "p50", "p90", "p99", "p99.9", "max", "mean", "count".
std::vector<std::string> StatisticsFor(MetricKind kind);
// The default statistic of a kind ("value", "rate", "p50").
std::string DefaultStatistic(MetricKind kind);
// Value of a statistic; nullopt when it does not apply (per_op without ops, unknown name).
std::optional<double> StatisticValue(const Metric& metric, const std::string& statistic);
// Unit of a statistic of the metric ("ns", "1/s", "count/op").
std::string StatisticUnit(const Metric& metric, const std::string& statistic);

std::string ToString(MetricKind kind);
std::string ToString(Better better);
std::optional<MetricKind> ParseMetricKind(const std::string& text);
std::optional<Better> ParseBetter(const std::string& text);

// Metrics of one repetition, keyed by name.
using MetricSet = std::map<std::string, Metric>;

// Builders of the three kinds, for the runner, the adapters and the probes.
Metric ScalarMetric(const std::string& name, double value, const std::string& unit, Better better = Better::kLower);
// A count over the repetition (rate = value / duration_s); lower is better.
Metric CounterMetric(const std::string& name, const std::string& unit, double value, double duration_s);
// A latency (or size) distribution; lower is better.
Metric HistogramMetric(const std::string& name, const std::string& unit, LogLinearHistogram hist, double duration_s);

// Names the code reads as well as writes (the probes' own declare the rest,
// gate/probes/*.json): the workload's wall and CPU time (run/repetition.cpp),
// and the latencies explain and the trace treat by name.
inline constexpr const char* kWorkloadWallTime = "workload.wall_time";
inline constexpr const char* kWorkloadPageFaults = "workload.page_faults";
inline constexpr const char* kWorkloadCpuTime = "workload.cpu_time";
inline constexpr const char* kWorkloadMaxRss = "workload.max_rss";
inline constexpr const char* kWorkloadContextSwitches = "workload.context_switches";
inline constexpr const char* kSchedRunqLatency = "sched.runq_latency";
inline constexpr const char* kSchedOffcpu = "sched.offcpu";
inline constexpr const char* kSchedOffcpuSleep = "sched.offcpu.sleep";
inline constexpr const char* kSchedOffcpuPreempted = "sched.offcpu.preempted";
inline constexpr const char* kBlockIoLatency = "block.io_latency";
inline constexpr const char* kSyscallsCount = "syscalls.count";
inline constexpr const char* kSyscallsLatency = "syscalls.latency";
inline constexpr const char* kMmPageAlloc = "mm.page_alloc";
inline constexpr const char* kMmReclaim = "mm.reclaim";
inline constexpr const char* kMmMemcgReclaim = "mm.memcg_reclaim";
// The instructions an instrumented repetition executed (run/instrumented.h),
// and the name of the check the gate adds on them when a suite has none.
inline constexpr const char* kInstrTotal = "instr.total";
inline constexpr const char* kInstructionTotalCheck = "instr.total.count";

// CPUs' worth of other work on the host while the repetition ran (run/host_load.h).
inline constexpr const char* kHostOtherCpus = "host.other_cpus";
// ... stolen by the hypervisor, and the shares of the repetition's wall time
// in which some task waited for CPU, memory or I/O (pressure stall
// information; host-wide, the workload's own waits included).
inline constexpr const char* kHostStealCpus = "host.steal_cpus";
inline constexpr const char* kHostCpuPressure = "host.cpu_pressure";
inline constexpr const char* kHostMemoryPressure = "host.memory_pressure";
inline constexpr const char* kHostIoPressure = "host.io_pressure";
// The host canary (run/canary.h), timed around each repetition: seconds per
// 2^20 iterations of a dependent integer loop, per GiB read, per MiB of
// fresh memory faulted in, per 4 KiB direct read, and the whole canary's
// time (its cost).
inline constexpr const char* kHostCanaryCpu = "host.canary.cpu";
inline constexpr const char* kHostCanaryMemory = "host.canary.memory";
inline constexpr const char* kHostCanaryFault = "host.canary.fault";
inline constexpr const char* kHostCanaryIo = "host.canary.io";
inline constexpr const char* kHostCanaryElapsed = "host.canary.elapsed";
// The canaries that tell the host's speed (compare/host_speed.h, the
// nightly's history): the direct reads vary too much to.
inline constexpr const char* kHostSpeedCanaries[] = {kHostCanaryCpu, kHostCanaryMemory, kHostCanaryFault};
// File pages of a workload started in a memory cgroup (memory_limit_mb) that
// reclaim had evicted and that it read back from the disk, in bytes: the
// cgroup's workingset refaults (run/memory_pressure.h).
inline constexpr const char* kReclaimRefaultBytes = "mm.reclaim_refault_bytes";
// "Who held the CPU" (runqlat probe, workload scope): seconds of the
// workload threads' run-queue waits in which their CPU ran tasks of other
// processes, summed over the waits, and that time's share of all their
// run-queue wait.
inline constexpr const char* kHostRunqWaitBehindOthers = "host.runq_wait_behind_others";
inline constexpr const char* kHostRunqWaitBehindOthersShare = "host.runq_wait_behind_others_share";

// Whether a unit measures time ("s", "ms", "us", "ns"): such metrics slow
// down when the host is busy, while counts per operation do not.
bool IsTimeUnit(const std::string& unit);

// Whether `name` is <source>.<name>[.<more>]: a first segment of [a-z0-9_],
// then segments of [A-Za-z0-9_:<>*/+-]. Hand-written rather than a regex:
// the standard regex engine recurses per character and overflows the stack on long input.
bool IsMetricName(std::string_view name);

// Counts of instructions executed: Valgrind's (instr.total, instr.<function>,
// run/instrumented.h) and the PMU's (cpu.instructions and its .user and
// .kernel parts, probes/cpu.h). They repeat to parts per million where times
// vary by percents, so their checks have a threshold and a decision of their
// own (compare/deterministic.h).
bool IsInstructionCount(std::string_view name);

}  // namespace perfgate
