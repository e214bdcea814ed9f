// How busy the machine was with other work while a repetition ran: the CPU
// time of every CPU from /proc/stat (including steal, time the hypervisor
// gave to other guests) minus the workload's own. A timing regression measured
// while the host was busier than when the baseline was recorded says more
// about the host than about the change; compare uses this to tell them apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/metric.h"

namespace perfgate {

struct CpuTimes {
  uint64_t busy_ticks = 0;   // user, nice, system, irq, softirq, steal of all CPUs
  uint64_t steal_ticks = 0;  // steal alone
};

// Pressure stall information (/proc/pressure/{cpu,memory,io}): the "some"
// totals, microseconds during which at least one task waited for the
// resource. Host-wide, so they include the workload's own waits: a record of
// what the host went through, not a verdict on the neighbours.
struct PressureTotals {
  std::optional<uint64_t> cpu_us, memory_us, io_us;
};
// The "some total=" of one pressure file's text; nullopt when absent.
std::optional<uint64_t> ParsePressureSome(const std::string& text);
PressureTotals ReadPressure();

// Parses the aggregate "cpu" line of /proc/stat text; nullopt when absent.
std::optional<CpuTimes> ParseProcStat(const std::string& text);
// Reads /proc/stat now; nullopt when it cannot be read.
std::optional<CpuTimes> ReadCpuTimes();

// CPUs' worth of other work during a repetition: (busy - workload CPU) / wall,
// clamped at 0. Inputs in seconds.
double OtherCpus(const CpuTimes& before, const CpuTimes& after, double workload_cpu_s, double wall_s);
// CPUs' worth of time the hypervisor gave to other guests during the repetition.
double StealCpus(const CpuTimes& before, const CpuTimes& after, double wall_s);

// A repetition is tainted — measured while the host was too busy for its
// numbers to say anything about the workload — when
//   other work left the workload no CPU to itself: other work kept more than
//   kTaintOtherCpus busy and the CPUs left idle (count - other - the
//   workload's own use) were under kTaintSpareCpus; or
//   the hypervisor stole more than kTaintStealCpus; or
//   the workload's threads waited, summed over them, more than
//   kTaintBehindOthersCpus times the wall time for CPUs that ran other
//   processes' tasks (host.runq_wait_behind_others, runqlat probe): the
//   CPUs' worth of work the neighbours took from it, which host.other_cpus
//   misses when they sit on the workload's CPU and leave another idle.
// The reason in words, or "" when the repetition is clean (or the host's
// numbers are missing).
inline constexpr double kTaintOtherCpus = 0.5;
inline constexpr double kTaintSpareCpus = 0.1;
inline constexpr double kTaintStealCpus = 0.25;
inline constexpr double kTaintBehindOthersCpus = 0.25;
std::string TaintOf(const MetricSet& metrics, int cpu_count);

// The arms of one round saw the same load when their CPUs' worth of other
// work (host.other_cpus), of steal, and of waits behind other processes'
// tasks per second of wall time lie within kSameLoadCpus of each other. Such
// a round is a fair pair however busy the host was: what the load did to one
// arm it did to the other, and the paired comparison cancels it, so
// measuring it again would spend time and learn nothing. A quarter CPU is
// the step the taint and compare's busier-host rule already use. A metric
// absent from some arm does not count against the pair.
inline constexpr double kSameLoadCpus = 0.25;
bool SawTheSameLoad(const std::vector<const MetricSet*>& arms);

}  // namespace perfgate
