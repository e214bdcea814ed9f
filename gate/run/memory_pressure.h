// Memory pressure on a workload's start: a new memory cgroup with a limit
// that the workload is placed in before it execs, and optionally a memory
// antagonist in the same cgroup, filling it to its limit before the start, so
// the workload's own allocations must reclaim memory on its critical path
// (the camera's field regression; a phone opening its camera with a heavy
// app in the background). Any workload kind that declares the keys of
// adapters/memory_limit.h gets it; RunRepetition sets it up per repetition.
//
// The antagonist is perfgate's child, not the workload's: it shares the
// cgroup, not the process tree, so workload-scoped probes count the
// workload's own reclaim, not the antagonist's.
#pragma once

#include <sys/types.h>

#include <string>

namespace perfgate {

class MemoryCgroup {
 public:
  // Creates perfgate-memory-<pid>-<n> under the root of a hierarchy with the
  // memory controller (cgroup v2 memory.max where a v2 hierarchy has it, else
  // v1 memory.limit_in_bytes), with a limit of `limit_mb` MiB. Groups that
  // runs killed with SIGKILL left behind are removed first. Throws InfraError
  // (no memory controller, not root).
  explicit MemoryCgroup(long limit_mb);
  // Removes the cgroup (its processes must be gone: the workload reaped, the
  // antagonist stopped).
  ~MemoryCgroup();
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  // Moves `pid` into the cgroup; InfraError when the kernel refuses.
  void Add(pid_t pid) const;
  long long UsageBytes() const;
  long limit_mb() const { return limit_mb_; }
  const std::string& path() const { return path_; }

 private:
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
