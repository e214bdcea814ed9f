// What every in-kernel probe shares: the hook plan, the skeleton, workload
// scoping through the tracker's map, and the report. A probe adds its hooks,
// its rodata and the reading of its per-CPU aggregates.
#pragma once

#include <bpf/libbpf.h>

#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "probes/bpf_stats.h"
#include "probes/features.h"
#include "probes/hooks.h"
#include "probes/probe.h"
#include "probes/skeleton.h"
#include "probes/trace_buffer.h"
#include "probes/tracker.h"

namespace perfgate {

// Skel is a generated skeleton whose object includes bpf/filter.bpf.h.
template <class Skel>
class BpfProbe : public Probe {
 public:
  ~BpfProbe() override { BpfProbe::Detach(); }
  const std::string& name() const override { return name_; }

  void Attach(const ProbeOptions& options, WorkloadTracker* tracker) override {
    Detach();
    bool workload = options.scope == ProbeScope::kWorkload;
    if (workload && tracker == nullptr) throw InfraError("probe " + name_ + ": workload scope needs a WorkloadTracker");
    plan_.emplace(name_, Hooks(), options);
    scope_ = options.scope;
    skeleton_.Load(*plan_, [&](Skel& skel) {
      skel.rodata->pg_filter_tracked = workload;
      ScopeTrackedMaps(skel.maps.pg_tracked, skel.maps.pg_tracked_gen, workload ? tracker : nullptr, name_);
      skel.rodata->pg_tracked_marks = ScopeTrackedMarks(skel.maps.pg_tracked_task, workload ? tracker : nullptr, name_);
      // Only the objects that include bpf/trace_events.bpf.h write trace records.
      if constexpr (requires { skel.maps.pg_trace_events; }) {
        ScopeTraceMaps(skel.maps.pg_trace_events, skel.maps.pg_trace_counts, options.trace, name_);
        skel.rodata->pg_trace_enabled = options.trace != nullptr;
        if (options.trace != nullptr) {
          skel.rodata->pg_trace_slow_syscall_ns = options.trace->settings().slow_syscall_ns;
          skel.rodata->pg_trace_long_offcpu_ns = options.trace->settings().long_offcpu_ns;
        }
      }
      Configure(skel);
    });
  }

  ProbeReport Report() const override {
    ProbeReport report = UnattachedReport(name_, scope_);
    if (!plan_ || !skeleton_.loaded()) return report;
    report.hooks = plan_->Choices();
    ProgramRunStats stats = ReadRunStats(skeleton_.ProgramFds());
    report.run_count = stats.run_count;
    report.run_time_ns = stats.run_time_ns;
    report.drops = stats.recursion_misses + dropped_;
    return report;
  }

  void Detach() override {
    skeleton_.Destroy();
    plan_.reset();
  }

  bool Unhook() override {
    skeleton_.Unhook();
    return true;
  }

 protected:
  BpfProbe(std::string name, SkeletonOps<Skel> ops) : name_(std::move(name)), skeleton_(ops) {}

  // The probe's hooks, each with its variants fastest first.
  virtual std::vector<HookSpec> Hooks() const = 0;
  // Probe-specific rodata and map sizes, before load; plan() holds the
  // variants this load attempt uses.
  virtual void Configure(Skel&) {}

  const HookPlan& plan() const { return *plan_; }

  // The scope of the last Attach().
  ProbeScope scope() const { return scope_; }

  // Events the probe's BPF side could not record (a full map), counted by
  // the probe as it collects; Report() adds them to the programs' misses.
  void CountDrops(uint64_t n) { dropped_ += n; }

  // The loaded skeleton; throws when the probe is not attached.
  Skel& skel() const {
    if (!skeleton_.loaded()) throw InfraError("probe " + name_ + ": used before Attach()");
    return *skeleton_.get();
  }

 private:
  std::string name_;
  AttachedSkeleton<Skel> skeleton_;
  std::optional<HookPlan> plan_;
  ProbeScope scope_ = ProbeScope::kWorkload;
  uint64_t dropped_ = 0;  // over every repetition collected
};

}  // namespace perfgate
