// The syscalls probe with non-default options (the catalog uses the defaults).
#pragma once

#include <cstdint>
#include <memory>

#include "probes/probe.h"

namespace perfgate {

struct SyscallsProbeOptions {
  // syscalls.count is exact; syscalls.latency holds about 1 in this many
  // syscalls per CPU (a power of two; 1 = every syscall).
  uint32_t latency_sample_every = 16;
};

// Throws InputError when latency_sample_every is not a power of two.
std::unique_ptr<Probe> MakeSyscallsProbe(const SyscallsProbeOptions& options);

}  // namespace perfgate
