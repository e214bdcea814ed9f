// The syscalls probe with non-default options (the catalog uses the defaults).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "probes/probe.h"

namespace perfgate {

struct SyscallsProbeOptions {
  // syscalls.count is exact; syscalls.latency holds about 1 in this many
  // syscalls per CPU (a power of two; 1 = every syscall).
  uint32_t latency_sample_every = 16;
  // syscalls.latency kept, unless the suite's `latency` parameter says
  // otherwise; without it (and without a trace) sys_exit is not hooked.
  bool latency = true;
  // syscalls.count.<name> for this many syscalls with the most calls, unless
  // the suite's `top` parameter says otherwise.
  uint32_t top = 10;
};

// Throws InputError when latency_sample_every is not a power of two.
std::unique_ptr<Probe> MakeSyscallsProbe(const SyscallsProbeOptions& options);

// Name of a syscall number of the architecture perfgate is built for
// ("getppid" for 110 on x86_64); "syscall_<nr>" for a number it has no name for.
std::string SyscallName(long nr);

struct SyscallCount {
  uint32_t nr = 0;
  uint64_t count = 0;
};

// The `n` syscalls with the most calls, most first (ties: lower number
// first); syscalls never called are left out.
std::vector<SyscallCount> TopSyscalls(const std::vector<uint64_t>& count_by_nr, size_t n);

}  // namespace perfgate
