// One repetition of a scenario: a fresh process of the workload, run under
// the scenario's probes, turned into metrics. The runner and the overhead
// measurement share it.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/adapter.h"
#include "config/suite.h"
#include "metrics/results.h"
#include "probes/probe.h"
#include "probes/tracker.h"
#include "run/canary.h"
#include "run/runner.h"

namespace perfgate {

// argv[0] as exec would find it: a path with a '/' (relative to cwd), else the
// first executable in PATH; empty when there is none.
std::string ResolveExecutable(const std::string& name, const std::string& cwd);

// The probes of one scenario, attached for as long as this lives; with an
// empty `probes` list, nothing is loaded (the bare workload).
class ScenarioProbes {
 public:
  // With `trace`, the probes write trace records to it (`perfgate run --trace`).
  ScenarioProbes(const ScenarioSpec& spec, const std::vector<ProbeSpec>& probes, const std::vector<std::string>& argv,
                 const RunOptions& options, const TraceBuffer* trace = nullptr);
  ~ScenarioProbes();
  ScenarioProbes(const ScenarioProbes&) = delete;
  ScenarioProbes& operator=(const ScenarioProbes&) = delete;

  // Takes every probe and the tracker off their hooks, loaded as they are
  // (Probe::Unhook()): the repetitions then pay for their loading and
  // Prepare() as the probed ones do, but none of their events, and collect
  // nothing. False when a probe cannot be unhooked (perf_event counters,
  // uprobes): those before it may be off their hooks already, so the caller
  // drops the whole set.
  bool Unhook();
  // Tracks the held workload process and zeroes the probes' aggregates.
  void Prepare(pid_t pid);
  // BPF run-time stats on or off.
  void MeasureProbeCost(bool on);
  void Collect(double duration_s, MetricSet& out);
  // The holders of the workload's CPUs in the repetition last collected (Probe::CpuHolders).
  std::vector<CpuHolder> CpuHolders() const;
  // Counts a repetition's CPU time towards the probes' cost share when the
  // run-time stats were on during it.
  void CountWorkloadCpu(const Repetition& rep);
  // Every probe's report, and the tracker's (its fork/exit hooks cost too).
  std::vector<ProbeReport> Reports() const;
  // The workload process of the last Prepare().
  pid_t workload_pid() const { return workload_pid_; }
  // The attached probe named `name`, or nullptr.
  Probe* Find(const std::string& name) const;
  // The tracker's thread map (probes/tracker.h); -1 without workload-scope probes.
  int tracked_map_fd() const { return tracker_ ? tracker_->map_fd() : -1; }

 private:
  struct Attached {
    std::unique_ptr<Probe> probe;
    std::string scope;
  };
  // BPF run-time stats cost two clock reads per program run, so they are on
  // only while the warm-up runs (or, without warm-up, throughout): the probe
  // cost is measured without distorting the measured repetitions.
  std::optional<BpfStatsEnabler> stats_;
  std::unique_ptr<WorkloadTracker> tracker_;
  std::vector<Attached> probes_;
  std::vector<ProbeReport> not_attached_;  // optional probes that could not attach
  uint64_t workload_cpu_ns_ = 0;
  pid_t workload_pid_ = 0;
  bool unhooked_ = false;
};

// One fresh process run of the workload under the attached probes, after the
// adapter's PrepareLaunch. A failed run has Repetition::failure set (crash,
// timeout, non-zero exit). With `canary`, the host canary runs right before
// the launch and its reading joins the metrics (run/canary.h).
Repetition RunRepetition(const ScenarioSpec& spec, const WorkloadAdapter& adapter, const std::vector<std::string>& argv,
                         ScenarioProbes& probes, const RunOptions& options, HostCanary* canary = nullptr);

}  // namespace perfgate
