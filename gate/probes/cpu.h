// The cpu probe's counters: perf_event counters in counting mode, hardware
// (instructions, cycles, branch and cache misses) where the host has a PMU,
// software (task-clock, context switches, page faults, CPU migrations)
// otherwise. The two sets differ only in each event's type and config; every
// other attribute, the opening, the reading and the metrics are shared, so the
// software set that hosts without a PMU run exercises the hardware set's code.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "metrics/metric.h"

struct perf_event_attr;

namespace perfgate {

class Probe;

enum class CpuCounterSet { kHardware, kSoftware };
// "hardware" | "software" (the suite parameter `counters` and the report).
std::string ToString(CpuCounterSet set);

struct CpuCounter {
  std::string metric;   // "cpu.instructions"
  std::string event;    // perf's name: "instructions"
  uint32_t type = 0;    // perf_event_attr.type
  uint64_t config = 0;  // perf_event_attr.config
  std::string unit;     // of the count: "count", or "ns" for task-clock
  // Count only in the kernel or only in user space (perf_event_attr's
  // exclude_user / exclude_kernel): the workload's own code apart from the
  // kernel's work on its behalf.
  bool kernel_only = false;
  bool user_only = false;
};

// The counters of a set, in a stable order.
const std::vector<CpuCounter>& CpuCounters(CpuCounterSet set);

// What read() of one counting event gives with PERF_FORMAT_TOTAL_TIME_ENABLED
// and _RUNNING: a count, and how long the event was enabled and how long it
// was on the PMU. Less running than enabled time means the PMU multiplexed it.
struct CounterReading {
  uint64_t value = 0;
  uint64_t time_enabled = 0;
  uint64_t time_running = 0;
};

// How the cpu probe reaches perf events: the kernel's perf_event_open(2),
// read(2) and close(2), or a test's stand-in for a host with a PMU or without.
class PerfCounterSource {
 public:
  virtual ~PerfCounterSource() = default;
  // A descriptor, or -1 with errno set, as perf_event_open(2) (close-on-exec).
  virtual int Open(const perf_event_attr& attr, pid_t pid, int cpu) = 0;
  // The reading of a counting event Open gave; false with errno set.
  virtual bool Read(int fd, CounterReading& reading) = 0;
  virtual void Close(int fd) = 0;
};
PerfCounterSource& KernelPerfCounters();

// Which set `"counters": "auto"` (the default) takes, and why not the
// hardware one (empty when it is hardware). For the probe and doctor.
struct CpuCounterChoice {
  CpuCounterSet set = CpuCounterSet::kSoftware;
  std::string why_not_hardware;
};
// Hardware when `source` opens a counter of this process's user-space
// instructions (which needs no privilege); else software, with why: no PMU
// (ENOENT, EOPNOTSUPP, ENODEV: a virtual machine without a virtual PMU, or a
// CPU without a PMU driver), or the kernel's refusal.
CpuCounterChoice ChooseCpuCounters(PerfCounterSource& source);
// ChooseCpuCounters of the kernel's counters, asked once per process.
CpuCounterChoice AutoCpuCounters();

// The count scaled to the whole enabled time (exact when never multiplexed);
// nullopt when the event was enabled but never ran, so nothing was counted.
std::optional<double> ScaledCount(const CounterReading& reading);

// The metric of the multiplexing: the least share of its enabled time that
// any counter ran, 1 when no count is an estimate.
inline constexpr const char* kCpuRunningFraction = "cpu.running_fraction";

// One counter metric per counter from its readings (one event per workload
// process, or per CPU in system scope), each scaled for multiplexing and
// summed, plus cpu.running_fraction. A counter one of whose events never ran
// has no metric: its count is unknown.
void AddCpuCounterMetrics(const std::vector<CpuCounter>& counters,
                          const std::vector<std::vector<CounterReading>>& readings, double duration_s, MetricSet& out);

// The cpu probe over `source`, which must outlive it; the catalog's reads the
// kernel's counters (KernelPerfCounters).
std::unique_ptr<Probe> MakeCpuCountersProbe(PerfCounterSource& source);

}  // namespace perfgate
