// proc.forks, proc.threads, proc.execs, proc.exits and proc.lifetime: the
// processes and threads the workload creates; see bpf/lifecycle.bpf.c for why
// exits are matched to forks rather than filtered on the tracked map.
#include "lifecycle.h"

#include <bpf/bpf.h>

#include <memory>
#include <vector>

#include "lifecycle.skel.h"
#include "metrics/metric.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/hist_read.h"
#include "probes/map_keys.h"
#include "probes/percpu.h"

namespace perfgate {
namespace {

class LifecycleProbe final : public BpfProbe<lifecycle_bpf> {
 public:
  LifecycleProbe() : BpfProbe("lifecycle", {lifecycle_bpf__open, lifecycle_bpf__destroy}) {}

  void Reset() override {
    ZeroPerCpu<pg_lifecycle_stats>(StatsFd(), "probe lifecycle");
    // Processes forked in an earlier repetition are not this one's.
    ClearMap<uint32_t>(bpf_map__fd(skel().maps.born));
  }

  void Collect(double duration_s, MetricSet& out) override {
    auto per_cpu = ReadPerCpu<pg_lifecycle_stats>(StatsFd(), "probe lifecycle");
    pg_lifecycle_stats total{};
    for (const auto& cpu : per_cpu) {
      total.forks += cpu.forks;
      total.threads += cpu.threads;
      total.execs += cpu.execs;
      total.exits += cpu.exits;
      total.lost += cpu.lost;
    }
    auto counter = [&](const char* name, uint64_t value) {
      out[name] = CounterMetric(name, "count", static_cast<double>(value), duration_s);
    };
    counter("proc.forks", total.forks);
    counter("proc.threads", total.threads);
    counter("proc.execs", total.execs);
    counter("proc.exits", total.exits);
    out["proc.lifetime"] = HistogramMetric("proc.lifetime", "ns", MergeCpuHistograms(per_cpu), duration_s);
    CountDrops(total.lost);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    // exec: bprm_execve() returning 0; exit: taskstats_exit(), where the
    // process's last thread already shows (bpf/lifecycle.bpf.c).
    return {ProcessForkHook("lifecycle_fork"),
            TracepointHook("sched", "sched_process_exec", "lifecycle_exec", {"bprm_execve"}),
            TracepointHook("sched", "sched_process_exit", "lifecycle_exit", {"taskstats_exit"})};
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.lifecycle_stats); }
};

}  // namespace

ProbeDefinition DefineLifecycleProbe() { return DefineProbe<LifecycleProbe>(DeclaredProbe("lifecycle")); }

}  // namespace perfgate
