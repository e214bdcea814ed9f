// sched.switches, sched.wakeups and sched.migrations: scheduler events of
// tracked threads, as counts over the repetition so that checks can gate on
// their rate or per-operation cost.
#include <memory>

#include "metrics/metric.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/percpu.h"
#include "sched.skel.h"
#include "sched_stats.h"

namespace perfgate {
namespace {

class SchedulerEventsProbe final : public BpfProbe<sched_bpf> {
 public:
  SchedulerEventsProbe() : BpfProbe("sched", {sched_bpf__open, sched_bpf__destroy}) {}

  void Reset() override { ZeroPerCpu<pg_sched_stats>(StatsFd(), "probe sched"); }

  void Collect(double duration_s, MetricSet& out) override {
    const auto total = ReadPerCpuTotal<pg_sched_stats>(StatsFd(), "probe sched");
    out["sched.switches"] = CounterMetric("sched.switches", "count", static_cast<double>(total.switches), duration_s);
    out["sched.wakeups"] = CounterMetric("sched.wakeups", "count", static_cast<double>(total.wakeups), duration_s);
    out["sched.migrations"] =
        CounterMetric("sched.migrations", "count", static_cast<double>(total.migrations), duration_s);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    return {TracepointHook("sched", "sched_switch", "sched_switch"),
            TracepointHook("sched", "sched_wakeup", "sched_wakeup"),
            TracepointHook("sched", "sched_migrate_task", "sched_migrate")};
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.sched_stats); }
};

}  // namespace

ProbeDefinition DefineSchedulerEventsProbe() { return DefineProbe<SchedulerEventsProbe>(DeclaredProbe("sched")); }

}  // namespace perfgate
