// The workload's process tree, as a BPF map of thread ids that workload-scope
// probes share: seeded with the workload's pid before it execs, extended by a
// sched_process_fork hook to every thread and process it creates, and shrunk
// by a sched_process_exit hook.
#pragma once

#include <sys/types.h>

#include <cstdint>
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
  // The tracked threads' marks in task-local storage (bpf/filter.bpf.h),
  // shared the same way.
  int marks_map_fd() const;
  // Whether every tracked thread is marked: the fork hook has the child's
  // task_struct (tp_btf) and task-local storage works here.
  bool marks_tasks() const;
  // Number of threads tracked right now.
  size_t TrackedCount() const;
  ProbeReport Report() const;
  // Off its hooks, still loaded (Probe::Unhook()).
  void Unhook();
  void Detach();

 private:
  void Changed();
  // Marks thread `tid` of process `pid`; false when it cannot be marked.
  bool Mark(pid_t pid, uint32_t tid);

  AttachedSkeleton<tracker_bpf> skeleton_;
  std::optional<HookPlan> plan_;
  uint64_t epoch_ = 1;          // of the marks, bumped by Clear()
  bool marks_complete_ = true;  // every thread tracked in this epoch was marked
};

// Before a probe object loads: points its copy of the tracked maps
// (bpf/filter.bpf.h) at the tracker's, or without a tracker (system scope)
// shrinks the map it never reads. Throws InfraError naming `probe`.
void ScopeTrackedMaps(bpf_map* tracked, bpf_map* gen, const WorkloadTracker* tracker, const std::string& probe);

// The same for the marks map; returns whether the probe may trust the marks
// (its rodata pg_tracked_marks): only in workload scope, when the tracker
// marks every thread it tracks.
bool ScopeTrackedMarks(bpf_map* marks, const WorkloadTracker* tracker, const std::string& probe);

}  // namespace perfgate
