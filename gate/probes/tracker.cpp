#include "probes/tracker.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"
#include "filter.h"
#include "probes/bpf_stats.h"
#include "probes/features.h"
#include "probes/map_keys.h"
#include "probes/proc_threads.h"
#include "tracker.skel.h"

namespace perfgate {
namespace {

const char* const kTrackerName = "tracker";

std::vector<HookSpec> TrackerHooks() { return {ProcessForkHook("tracker_fork"), ThreadExitHook("tracker_exit")}; }

}  // namespace

WorkloadTracker::WorkloadTracker() : skeleton_({tracker_bpf__open, tracker_bpf__destroy}) {}

WorkloadTracker::~WorkloadTracker() { Detach(); }

void WorkloadTracker::Attach(const ProbeOptions& options) {
  Detach();
  plan_.emplace(kTrackerName, TrackerHooks(), options);
  skeleton_.Load(*plan_, [this](tracker_bpf& skel) {
    skel.rodata->pg_tracked_marks =
        TaskStorageUsableFromTracepoints() && (!plan_->Chose(AttachType::kKprobe) || TaskStorageUsableFromKprobes());
  });
  epoch_ = 1;
  marks_complete_ = true;
  Changed();
}

int WorkloadTracker::marks_map_fd() const {
  if (!skeleton_.loaded()) throw InfraError("workload tracker: used before Attach()");
  return bpf_map__fd(skeleton_.get()->maps.pg_tracked_task);
}

bool WorkloadTracker::marks_tasks() const {
  if (!plan_ || !skeleton_.loaded() || !skeleton_.get()->rodata->pg_tracked_marks) return false;
  for (const HookChoice& choice : plan_->Choices()) {
    if (choice.hook == "sched_process_fork") return choice.attach_type == ToString(AttachType::kTpBtf);
  }
  return false;
}

// Task-local storage is keyed by a pidfd from user space; a thread that is
// not its process's leader needs PIDFD_THREAD (Linux 6.9), whose value is
// O_EXCL and which older kernel headers lack.
bool WorkloadTracker::Mark(pid_t pid, uint32_t tid) {
  constexpr unsigned kPidfdThread = O_EXCL;
  const int pidfd = static_cast<int>(
      syscall(SYS_pidfd_open, static_cast<pid_t>(tid), static_cast<pid_t>(tid) == pid ? 0u : kPidfdThread));
  if (pidfd < 0) return false;
  // Written whole: the scheduler probes' waits in it start empty.
  pg_tracked_mark mark{};
  mark.epoch = epoch_;
  const bool marked = bpf_map_update_elem(marks_map_fd(), &pidfd, &mark, BPF_ANY) == 0;
  close(pidfd);
  return marked;
}

int WorkloadTracker::map_fd() const {
  if (!skeleton_.loaded()) throw InfraError("workload tracker: used before Attach()");
  return bpf_map__fd(skeleton_.get()->maps.pg_tracked);
}

int WorkloadTracker::gen_map_fd() const {
  if (!skeleton_.loaded()) throw InfraError("workload tracker: used before Attach()");
  return bpf_map__fd(skeleton_.get()->maps.pg_tracked_gen);
}

void WorkloadTracker::Track(pid_t pid) {
  int fd = map_fd();
  const uint32_t tgid = static_cast<uint32_t>(pid);
  const bool marking = marks_tasks();
  for (uint32_t tid : ThreadsOf(pid)) {
    if (bpf_map_update_elem(fd, &tid, &tgid, BPF_ANY) != 0)
      throw InfraError("workload tracker: track pid " + std::to_string(pid) + ": " + ErrnoText(errno));
    // An unmarked thread would look untracked to a hook reading marks: the
    // epoch's marks are then not used at all.
    if (marking && !Mark(pid, tid)) marks_complete_ = false;
  }
  Changed();
}

// The old marks stay on their threads (user space cannot list them); a new
// epoch makes them stale.
void WorkloadTracker::Clear() {
  int fd = map_fd();
  ClearMap<uint32_t>(fd);
  ++epoch_;
  marks_complete_ = true;
  Changed();
}

// After the map changed: the user half of the generation, whose only writer
// this is (the hooks bump the kernel half).
void WorkloadTracker::Changed() {
  const uint32_t zero = 0;
  pg_tracked_gen gen{};
  int fd = gen_map_fd();
  if (bpf_map_lookup_elem(fd, &zero, &gen) != 0)
    throw InfraError("workload tracker: read the tracked map's generation: " + ErrnoText(errno));
  // Written whole, so the kernel half may lose a bump made meanwhile: one
  // more user bump keeps the pair different from any pair seen before.
  ++gen.user;
  // The same goes for a fork hook's note that it could not mark a child
  // (epoch 0), lost only if it raced with Track() or Clear(), which run while
  // the workload is held or gone.
  gen.epoch = marks_complete_ ? epoch_ : 0;
  if (bpf_map_update_elem(fd, &zero, &gen, BPF_ANY) != 0)
    throw InfraError("workload tracker: bump the tracked map's generation: " + ErrnoText(errno));
}

void ScopeTrackedMaps(bpf_map* tracked, bpf_map* gen, const WorkloadTracker* tracker, const std::string& probe) {
  int err = 0;
  if (tracker != nullptr) {
    err = bpf_map__reuse_fd(tracked, tracker->map_fd());
    if (err == 0) err = bpf_map__reuse_fd(gen, tracker->gen_map_fd());
  } else {
    err = bpf_map__set_max_entries(tracked, 1);
  }
  if (err != 0) throw InfraError("probe " + probe + ": scope the tracked map: " + ErrnoText(-err));
}

bool ScopeTrackedMarks(bpf_map* marks, const WorkloadTracker* tracker, const std::string& probe) {
  if (tracker == nullptr) return false;
  int err = bpf_map__reuse_fd(marks, tracker->marks_map_fd());
  if (err != 0) throw InfraError("probe " + probe + ": share the tracked threads' marks: " + ErrnoText(-err));
  return tracker->marks_tasks();
}

size_t WorkloadTracker::TrackedCount() const { return MapKeys<uint32_t>(map_fd()).size(); }

ProbeReport WorkloadTracker::Report() const {
  ProbeReport report = UnattachedReport(kTrackerName, ProbeScope::kWorkload);
  if (!plan_ || !skeleton_.loaded()) return report;
  report.hooks = plan_->Choices();
  ProgramRunStats stats = ReadRunStats(skeleton_.ProgramFds());
  report.run_count = stats.run_count;
  report.run_time_ns = stats.run_time_ns;
  report.drops = stats.recursion_misses;
  return report;
}

void WorkloadTracker::Unhook() { skeleton_.Unhook(); }

void WorkloadTracker::Detach() {
  skeleton_.Destroy();
  plan_.reset();
}

}  // namespace perfgate
