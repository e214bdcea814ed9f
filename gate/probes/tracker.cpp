#include "probes/tracker.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "metrics/error.h"
#include "probes/bpf_stats.h"
#include "probes/features.h"
#include "probes/map_keys.h"
#include "probes/proc_threads.h"
#include "filter.h"
#include "tracker.skel.h"

namespace perfgate {
namespace {

const char* const kName = "tracker";

std::vector<HookSpec> TrackerHooks() {
  return {TracepointHook("sched", "sched_process_fork", "tracker_fork"),
          TracepointHook("sched", "sched_process_exit", "tracker_exit")};
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

int WorkloadTracker::gen_map_fd() const {
  if (!skeleton_.loaded()) throw InfraError("workload tracker: used before Attach()");
  return bpf_map__fd(skeleton_.get()->maps.pg_tracked_gen);
}

void WorkloadTracker::Track(pid_t pid) {
  int fd = map_fd();
  const uint32_t tgid = static_cast<uint32_t>(pid);
  for (uint32_t tid : ThreadsOf(pid)) {
    if (bpf_map_update_elem(fd, &tid, &tgid, BPF_ANY) != 0)
      throw InfraError("workload tracker: track pid " + std::to_string(pid) + ": " + ErrnoText(errno));
  }
  Changed();
}

void WorkloadTracker::Clear() {
  int fd = map_fd();
  ClearMap<uint32_t>(fd);
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

size_t WorkloadTracker::TrackedCount() const { return MapKeys<uint32_t>(map_fd()).size(); }

ProbeReport WorkloadTracker::Report() const {
  ProbeReport report = UnattachedReport(kName, ProbeScope::kWorkload);
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
