// The workload's process tree, as a BPF map of thread ids that workload-scope
// probes share: seeded with the workload's pid before it execs, extended by a
// sched_process_fork hook to every thread and process it creates, and shrunk
// by a sched_process_exit hook.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>

#include "metrics/results.h"
#include "probes/hooks.h"
#include "probes/probe.h"
#include "probes/skeleton.h"

struct tracker_bpf;
struct bpf_map;

namespace perfgate {

class WorkloadTracker {
 public:
  WorkloadTracker();
  ~WorkloadTracker();
  WorkloadTracker(const WorkloadTracker&) = delete;
  WorkloadTracker& operator=(const WorkloadTracker&) = delete;

  // Loads the map and the fork/exit hooks (options.scope is ignored).
  void Attach(const ProbeOptions& options);
  // Tracks `pid` and the threads it already has. Call before it execs, so
  // that nothing it creates is missed.
  void Track(pid_t pid);
  // Forgets every tracked thread (between repetitions).
  void Clear();
  // The tracked-thread map, for bpf_map__reuse_fd before a probe loads.
  int map_fd() const;
  // Its generation (bpf/filter.h), shared the same way.
  int gen_map_fd() const;
  // Number of threads tracked right now.
  size_t TrackedCount() const;
  ProbeReport Report() const;
  void Detach();

 private:
  void Changed();

  AttachedSkeleton<tracker_bpf> skeleton_;
  std::optional<HookPlan> plan_;
};

// Before a probe object loads: points its copy of the tracked maps
// (bpf/filter.bpf.h) at the tracker's, or without a tracker (system scope)
// shrinks the map it never reads. Throws InfraError naming `probe`.
void ScopeTrackedMaps(bpf_map* tracked, bpf_map* gen, const WorkloadTracker* tracker, const std::string& probe);

}  // namespace perfgate
