// irq.hardirq_time, irq.softirq_time, irq.hardirqs and irq.softirqs: time
// the CPUs spent in interrupt handlers; see bpf/irq.bpf.c. Interrupts serve
// the whole machine, so the probe only has a system scope.
#include "irq.h"

#include <memory>
#include <vector>

#include "base/error.h"
#include "irq.skel.h"
#include "metrics/metric.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/hist_read.h"
#include "probes/percpu.h"

namespace perfgate {
namespace {

class IrqProbe final : public BpfProbe<irq_bpf> {
 public:
  IrqProbe() : BpfProbe("irq", {irq_bpf__open, irq_bpf__destroy}) {}

  // A hard IRQ or softirq runs in whatever thread it interrupted, so
  // filtering on the workload's threads would count the interrupts that
  // happened to land on them, not the ones their work caused. Refusing is
  // clearer than a silently different meaning.
  void Attach(const ProbeOptions& options, WorkloadTracker* tracker) override {
    if (options.scope == ProbeScope::kWorkload)
      throw InputError(
          "probe irq is a system-scope probe: interrupts run on behalf of no process, so they cannot be "
          "attributed to the workload; list it as {\"name\": \"irq\", \"scope\": \"system\"}");
    BpfProbe::Attach(options, tracker);
  }

  void Reset() override { ZeroPerCpu<pg_irq_stats>(StatsFd(), "probe irq"); }

  void Collect(double duration_s, MetricSet& out) override {
    const auto total = ReadPerCpuTotal<pg_irq_stats>(StatsFd(), "probe irq");
    const LogLinearHistogram hardirq = HistogramOfBuckets(total.hardirq_hist);
    const LogLinearHistogram softirq = HistogramOfBuckets(total.softirq_hist);
    // The counts are the histograms' totals (bpf/irq.h says why).
    out["irq.hardirqs"] = CounterMetric("irq.hardirqs", "count", static_cast<double>(hardirq.count()), duration_s);
    out["irq.softirqs"] = CounterMetric("irq.softirqs", "count", static_cast<double>(softirq.count()), duration_s);
    out["irq.hardirq_time"] = HistogramMetric("irq.hardirq_time", "ns", hardirq, duration_s);
    out["irq.softirq_time"] = HistogramMetric("irq.softirq_time", "ns", softirq, duration_s);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    // Function variants for hard IRQs only (bpf/irq.bpf.c).
    return {TracepointHook("irq", "irq_handler_entry", "irq_hard_entry", {"__handle_irq_event_percpu"}),
            TracepointHook("irq", "irq_handler_exit", "irq_hard_exit", {"__handle_irq_event_percpu"}),
            TracepointHook("irq", "softirq_entry", "irq_soft_entry"),
            TracepointHook("irq", "softirq_exit", "irq_soft_exit")};
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.irq_stats); }
};

}  // namespace

ProbeDefinition DefineIrqProbe() { return DefineProbe<IrqProbe>(DeclaredProbe("irq")); }

}  // namespace perfgate
