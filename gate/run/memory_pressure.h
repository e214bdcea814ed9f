// Memory pressure on a workload's start: a new memory cgroup with a limit
// that the workload is placed in before it execs, and optionally a memory
// antagonist in the same cgroup, filling it to its limit before the start, so
// the workload's own allocations must reclaim memory on its critical path
// (the camera's field regression; a phone opening its camera with a heavy
// app in the background). Any workload kind that declares the keys of
// adapters/memory_limit.h gets it; RunRepetition sets it up per repetition.
//
// The antagonist is perfgate's child, not the workload's: it shares the
// cgroup's limit, not the process tree, so workload-scoped probes count the
// workload's own reclaim, not the antagonist's. Each has a leaf of its own
// under the limited group, so the workload's leaf counts only the workload's
// pages (the file pages it read back after reclaim evicted them among them).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace perfgate {

class MemoryCgroup {
 public:
  // Creates perfgate-memory-<pid>-<n> under the root of a hierarchy with the
  // memory controller (cgroup v2 memory.max where a v2 hierarchy has it, else
  // v1 memory.limit_in_bytes), with a limit of `limit_mb` MiB, and in it the
  // leaves "workload" and "antagonist" (no limits of their own). Groups that
  // runs killed with SIGKILL left behind are removed first. Throws InfraError
  // (no memory controller, not root).
  explicit MemoryCgroup(long limit_mb);
  // Removes the cgroup (its processes must be gone: the workload reaped, the
  // antagonist stopped).
  ~MemoryCgroup();
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  // Moves `pid` into the workload's (or the antagonist's) leaf; InfraError
  // when the kernel refuses.
  void AddWorkload(pid_t pid) const;
  void AddAntagonist(pid_t pid) const;
  // The whole group's usage, both leaves.
  long long UsageBytes() const;
  // Bytes of file pages the workload's leaf read back after reclaim had
  // evicted them (memory.stat workingset_refault_file, in pages, times the
  // page size); nullopt when the kernel does not count them.
  std::optional<double> WorkloadRefaultBytes() const;
  long limit_mb() const { return limit_mb_; }
  const std::string& path() const { return path_; }

 private:
  void AddTo(const char* leaf, pid_t pid) const;

  std::string root_;
  std::string path_;
  long limit_mb_ = 0;
  bool v2_ = false;
};

// A background process in `cgroup` that never stops allocating: it streams a
// file twice the cgroup's limit through the page cache (clean pages reclaim
// can take, so the cgroup sits at its limit without OOM kills) and maps,
// touches and unmaps anonymous memory in between. The constructor returns
// once the cgroup is 90 % full (or after 30 s, with a warning); the
// destructor kills and reaps it. The file is kept in ${TMPDIR:-/var/tmp}
// for the next runs, like an installed app's data.
class MemoryAntagonist {
 public:
  explicit MemoryAntagonist(const MemoryCgroup& cgroup);
  ~MemoryAntagonist();
  MemoryAntagonist(const MemoryAntagonist&) = delete;
  MemoryAntagonist& operator=(const MemoryAntagonist&) = delete;

 private:
  pid_t pid_ = -1;
};

}  // namespace perfgate
