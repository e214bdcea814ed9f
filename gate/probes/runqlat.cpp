// sched.runq_latency: how long runnable threads wait for a CPU.
#include <memory>

#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/hist_read.h"
#include "probes/percpu.h"
#include "runqlat.skel.h"
#include "stats.h"

namespace perfgate {
namespace {

class RunQueueLatencyProbe final : public BpfProbe<runqlat_bpf> {
 public:
  RunQueueLatencyProbe() : BpfProbe("runqlat", {runqlat_bpf__open, runqlat_bpf__destroy}) {}

  void Reset() override { ZeroPerCpu<pg_runqlat_stats>(StatsFd(), "probe runqlat"); }

  void Collect(double duration_s, MetricSet& out) override {
    Metric metric;
    metric.name = "sched.runq_latency";
    metric.kind = MetricKind::kHistogram;
    metric.unit = "ns";
    metric.better = Better::kLower;
    metric.duration_s = duration_s;
    metric.hist = MergeCpuHistograms(ReadPerCpu<pg_runqlat_stats>(StatsFd(), "probe runqlat"));
    out[metric.name] = std::move(metric);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    return {TracepointHook("sched", "sched_wakeup", "runqlat_wakeup"),
            TracepointHook("sched", "sched_wakeup_new", "runqlat_wakeup_new"),
            TracepointHook("sched", "sched_switch", "runqlat_switch")};
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.runqlat_stats); }
};

}  // namespace

std::unique_ptr<Probe> MakeRunQueueLatencyProbe() { return std::make_unique<RunQueueLatencyProbe>(); }

}  // namespace perfgate
