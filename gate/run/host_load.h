// How busy the machine was with other work while a repetition ran: the CPU
// time of every CPU from /proc/stat (including steal, time the hypervisor
// gave to other guests) minus the workload's own. A timing regression measured
// while the host was busier than when the baseline was recorded says more
// about the host than about the change; compare uses this to tell them apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace perfgate {

struct CpuTimes {
  uint64_t busy_ticks = 0;   // user, nice, system, irq, softirq, steal of all CPUs
  uint64_t steal_ticks = 0;  // steal alone
};

// Parses the aggregate "cpu" line of /proc/stat text; nullopt when absent.
std::optional<CpuTimes> ParseProcStat(const std::string& text);
// Reads /proc/stat now; nullopt when it cannot be read.
std::optional<CpuTimes> ReadCpuTimes();

// CPUs' worth of other work during a repetition: (busy - workload CPU) / wall,
// clamped at 0. Inputs in seconds.
double OtherCpus(const CpuTimes& before, const CpuTimes& after, double workload_cpu_s, double wall_s);

}  // namespace perfgate
