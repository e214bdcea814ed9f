// The `cold-start` adapter: any command started with its files out of the
// page cache, measured until a readiness marker fires.
//
// Keys: argv, env, cwd; "ready" (readiness.h; default {"exit": true});
// "evict": {"executable": true, "libraries": true, "files": [...], "dirs": [...]}
// (what leaves the page cache before every launch, warm-ups included);
// "drop_caches" (false; true also drops the whole machine's caches);
// "after_ready" ("stop": a still running app is stopped once ready; "wait":
// it runs to its end); "memory_limit_mb" and "antagonist" (memory_limit.h:
// each start in a memory cgroup of its own, optionally filled first by a
// background allocator, for reclaim on the start's critical path).
//
// Metrics: coldstart.time_to_ready (ms from exec to the marker),
// coldstart.major_faults and coldstart.disk_read_bytes (the process tree's,
// until it ended or was stopped), coldstart.phase.<name> (ms) for each phase
// line the app prints (command.h's protocol; the phases also reach the trace),
// and the app's own JSON-lines metrics.
#pragma once

#include <string>
#include <vector>

#include "adapters/adapter.h"

namespace perfgate {

class ColdStartAdapter : public WorkloadAdapter {
 public:
  std::string kind() const override { return "cold-start"; }
  const WorkloadKeys& keys() const override;
  std::vector<MetricDeclaration> metrics() const override;
  std::vector<std::string> LaunchArgv(const WorkloadSpec& spec) const override;
  void PrepareLaunch(const WorkloadSpec& spec) const override;
  WorkloadOutput ParseOutput(const std::string& stdout_text, const WorkloadSpec& spec) const override;
  std::unique_ptr<ReadinessMarker> Readiness(const WorkloadSpec& spec) const override;
  void AddStartMetrics(double ready_s, const ::rusage& usage, const WorkloadSpec& spec, MetricSet& out) const override;
  std::optional<MemoryLimit> MemoryLimitOf(const WorkloadSpec& spec) const override;

 protected:
  // The app's JSON lines (command.h) and a coldstart.phase.<name> metric per phase.
  static WorkloadOutput ParseStartOutput(const std::string& stdout_text, const std::string& source);
};

// The cold-start keys, with the defaults of "ready" (JSON) and "after_ready"
// ("stop" or "wait"): for kinds that are a cold start with defaults of their own.
std::vector<WorkloadKey> ColdStartKeys(const std::string& default_ready, const std::string& default_after_ready);

// The files a launch of `spec` evicts (of its kind, when the kind takes
// "evict"; else as a cold-start): the executable (argv[0] of the command line
// it launches, through PATH)
// and, for a script, its interpreter; their shared libraries; the listed
// files and the files under the listed directories. Without duplicates.
std::vector<std::string> ColdStartFiles(const WorkloadSpec& spec);

}  // namespace perfgate
