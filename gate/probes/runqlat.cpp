// sched.runq_latency: how long runnable threads wait for a CPU.
#include <memory>

#include "metrics/metric.h"
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
    out["sched.runq_latency"] =
        HistogramMetric("sched.runq_latency", "ns",
                        MergeCpuHistograms(ReadPerCpu<pg_runqlat_stats>(StatsFd(), "probe runqlat")), duration_s);
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
