// Threads as /proc lists them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace perfgate {

// Thread ids of process `pid`; just `pid` when it is gone or unreadable.
std::vector<uint32_t> ThreadsOf(pid_t pid);

// Thread ids of every process on the system.
std::vector<uint32_t> AllThreads();

// A thread's own page fault counters (not its process's, not its reaped
// children's), from /proc/<tid>/task/<tid>/stat; nullopt once it is gone.
struct FaultCounters {
  uint64_t minor = 0;
  uint64_t major = 0;
};
std::optional<FaultCounters> ThreadFaultCounters(uint32_t tid);

}  // namespace perfgate
