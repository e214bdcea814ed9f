// The suite keys of a start under memory pressure, shared by the kinds that
// take them (cold-start, camera-startup):
//   "memory_limit_mb": N   each launch in a new memory cgroup limited to N MiB
//                          (16 to 1048576; perfgate must run as root)
//   "antagonist": BOOL     a background allocator fills that cgroup before the
//                          start (needs memory_limit_mb); true, false, or a
//                          string of a ${VARIABLE} that expands to one of them,
//                          so `perfgate ab --candidate-set` can turn it on
// The runner carries them out (run/memory_pressure.h).
#pragma once

#include <optional>
#include <vector>

#include "adapters/adapter.h"

namespace perfgate {

// The declarations of "memory_limit_mb" and "antagonist", for a kind's keys().
std::vector<WorkloadKey> MemoryLimitKeys();

// The scenario's limit; nullopt without "memory_limit_mb". InputError for an
// antagonist without a limit (specs made in code).
std::optional<MemoryLimit> ReadMemoryLimit(const WorkloadOptions& options, const std::string& kind);

}  // namespace perfgate
