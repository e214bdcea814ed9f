// BPF run-time statistics of loaded programs (kernel.bpf_stats_enabled must
// be on, see BpfStatsEnabler in probe.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace perfgate {

struct ProgramRunStats {
  uint64_t run_count = 0;
  // The programs' own cost: the kernel's run_time_ns less what the
  // statistics themselves charge each run (StatisticsCostPerRun()), so the
  // estimate of what the probes cost a run without statistics.
  uint64_t run_time_ns = 0;
  uint64_t measured_run_time_ns = 0;  // run_time_ns as the kernel reports it
  uint64_t recursion_misses = 0;      // runs the kernel skipped because a BPF program was already active
};

// Sums the statistics of the given program fds; unreadable fds count as zero.
ProgramRunStats ReadRunStats(const std::vector<int>& program_fds);

// What the statistics add to each program run's run_time_ns on this host:
// their clock reads bracket the program, so an empty program is charged the
// latency of a clock read. Measured once per process by running an empty
// program many times (BPF_PROG_TEST_RUN) while statistics are on
// (CalibrateStatisticsCost); nullopt before that.
std::optional<double> StatisticsCostPerRun();

// Measures StatisticsCostPerRun() unless already done; statistics must be on.
// False when the measurement failed (no BPF, no test runs).
bool CalibrateStatisticsCost();

}  // namespace perfgate
