// BPF run-time statistics of loaded programs (kernel.bpf_stats_enabled must
// be on, see BpfStatsEnabler in probe.h).
#pragma once

#include <cstdint>
#include <vector>

namespace perfgate {

struct ProgramRunStats {
  uint64_t run_count = 0;
  uint64_t run_time_ns = 0;
  uint64_t recursion_misses = 0;  // runs the kernel skipped because a BPF program was already active
};

// Sums the statistics of the given program fds; unreadable fds count as zero.
ProgramRunStats ReadRunStats(const std::vector<int>& program_fds);

}  // namespace perfgate
