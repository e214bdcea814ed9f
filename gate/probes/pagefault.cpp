// mm.page_faults and its split into mm.page_faults.major / .minor; see
// bpf/pagefault.bpf.c for why the split is read from the threads' own fault
// counters rather than from the fault event.
#include "pagefault.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <vector>

#include "metrics/error.h"
#include "pagefault.skel.h"
#include "metrics/metric.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/features.h"
#include "probes/percpu.h"

namespace perfgate {
namespace {

class PageFaultProbe final : public BpfProbe<pagefault_bpf> {
 public:
  PageFaultProbe() : BpfProbe("pagefault", {pagefault_bpf__open, pagefault_bpf__destroy}) {}

  void Reset() override {
    ZeroPerCpu<pg_pagefault_stats>(StatsFd(), "probe pagefault");
    ForgetCountersSeen();
  }

  void Collect(double duration_s, MetricSet& out) override {
    const auto total = ReadPerCpuTotal<pg_pagefault_stats>(StatsFd(), "probe pagefault");
    out["mm.page_faults"] = CounterMetric("mm.page_faults", "count", static_cast<double>(total.faults), duration_s);
    out["mm.page_faults.major"] =
        CounterMetric("mm.page_faults.major", "count", static_cast<double>(total.major), duration_s);
    out["mm.page_faults.minor"] =
        CounterMetric("mm.page_faults.minor", "count", static_cast<double>(total.minor), duration_s);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    return {TracepointHook("exceptions", "page_fault_user", "pagefault_fault"),
            TracepointHook("sched", "sched_process_exit", "pagefault_exit")};
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.pagefault_stats); }

  // Counters a thread showed before this repetition must not be its
  // baseline in this one: entries of an older generation start over. The
  // object is loaded without bpf_object__load_skeleton, so skel().data is
  // not the map's memory: write the map.
  void ForgetCountersSeen() {
    auto data = *skel().data;
    data.reset_gen = ++reset_gen_;
    const uint32_t zero = 0;
    if (bpf_map_update_elem(bpf_map__fd(skel().maps.data), &zero, &data, BPF_ANY) != 0)
      throw InfraError("probe pagefault: bump the reset generation: " + ErrnoText(errno));
  }

  uint32_t reset_gen_ = 1;  // as bpf/pagefault.bpf.c initializes it
};

}  // namespace

std::unique_ptr<Probe> MakePageFaultProbe() { return std::make_unique<PageFaultProbe>(); }

}  // namespace perfgate
