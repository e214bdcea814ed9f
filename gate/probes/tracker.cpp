#include "probes/tracker.h"

#include <bpf/bpf.h>
#include <dirent.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "metrics/error.h"
#include "probes/bpf_stats.h"
#include "probes/features.h"
#include "tracker.skel.h"

namespace perfgate {
namespace {

const char* const kName = "tracker";

std::vector<HookSpec> TrackerHooks() {
  return {TracepointHook("sched", "sched_process_fork", "tracker_fork"),
          TracepointHook("sched", "sched_process_exit", "tracker_exit")};
}

// Thread ids of `pid` from /proc; just `pid` when it is gone or unreadable.
std::vector<uint32_t> ThreadsOf(pid_t pid) {
  std::vector<uint32_t> tids;
  std::string path = "/proc/" + std::to_string(pid) + "/task";
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') tids.push_back(static_cast<uint32_t>(std::stoul(entry->d_name)));
    }
    closedir(dir);
  }
  if (tids.empty()) tids.push_back(static_cast<uint32_t>(pid));
  return tids;
}

}  // namespace

WorkloadTracker::WorkloadTracker() : skeleton_({tracker_bpf__open, tracker_bpf__destroy}) {}

WorkloadTracker::~WorkloadTracker() { Detach(); }

void WorkloadTracker::Attach(const ProbeOptions& options) {
  Detach();
  plan_.emplace(kName, TrackerHooks(), options);
  skeleton_.Load(*plan_, [](tracker_bpf&) {});
}

int WorkloadTracker::map_fd() const {
  if (!skeleton_.loaded()) throw InfraError("workload tracker: used before Attach()");
  return bpf_map__fd(skeleton_.get()->maps.pg_tracked);
}

void WorkloadTracker::Track(pid_t pid) {
  int fd = map_fd();
  const uint32_t tgid = static_cast<uint32_t>(pid);
  for (uint32_t tid : ThreadsOf(pid)) {
    if (bpf_map_update_elem(fd, &tid, &tgid, BPF_ANY) != 0)
      throw InfraError("workload tracker: track pid " + std::to_string(pid) + ": " + ErrnoText(errno));
  }
}

void WorkloadTracker::Clear() {
  int fd = map_fd();
  // Deleting while iterating restarts the walk, so collect the keys first.
  std::vector<uint32_t> keys;
  uint32_t key = 0;
  const void* previous = nullptr;
  while (bpf_map_get_next_key(fd, previous, &key) == 0) {
    keys.push_back(key);
    previous = &keys.back();
  }
  for (uint32_t tid : keys) bpf_map_delete_elem(fd, &tid);  // ENOENT: it exited meanwhile
}

size_t WorkloadTracker::TrackedCount() const {
  int fd = map_fd();
  size_t count = 0;
  uint32_t key = 0, next = 0;
  const void* previous = nullptr;
  while (bpf_map_get_next_key(fd, previous, &next) == 0) {
    ++count;
    key = next;
    previous = &key;
  }
  return count;
}

ProbeReport WorkloadTracker::Report() const {
  ProbeReport report;
  report.name = kName;
  report.scope = "workload";
  if (!plan_ || !skeleton_.loaded()) return report;
  report.hooks = plan_->Choices();
  ProgramRunStats stats = ReadRunStats(skeleton_.ProgramFds());
  report.run_count = stats.run_count;
  report.run_time_ns = stats.run_time_ns;
  report.drops = stats.recursion_misses;
  return report;
}

void WorkloadTracker::Detach() {
  skeleton_.Destroy();
  plan_.reset();
}

}  // namespace perfgate
