// mm.reclaim_latency, mm.memcg_reclaim_latency and their counts: how long
// the workload's threads spent reclaiming memory themselves, directly
// (global memory shortage) or for their memory cgroup; see bpf/reclaim.bpf.c.
#include "reclaim.h"

#include <bpf/libbpf.h>

#include <memory>
#include <string>
#include <vector>

#include "metrics/metric.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/features.h"
#include "probes/hist_read.h"
#include "probes/percpu.h"
#include "reclaim.skel.h"

namespace perfgate {
namespace {

// Soft-limit reclaim belongs to cgroup-v1 memory controllers, and kernels
// may drop its events; the probe then does without them. A raw tracepoint
// exists for every tracepoint the kernel has, tracefs mounted or not.
bool SoftLimitEventsExist() {
  static const bool exist = RawTpSupported("mm_vmscan_memcg_softlimit_reclaim_begin").supported ||
                            TracepointExists("vmscan", "mm_vmscan_memcg_softlimit_reclaim_begin").supported;
  return exist;
}

class ReclaimProbe final : public BpfProbe<reclaim_bpf> {
 public:
  ReclaimProbe() : BpfProbe("reclaim", {reclaim_bpf__open, reclaim_bpf__destroy}) {}

  void Reset() override { ZeroPerCpu<pg_reclaim_stats>(StatsFd(), "probe reclaim"); }

  void Collect(double duration_s, MetricSet& out) override {
    const auto total = ReadPerCpuTotal<pg_reclaim_stats>(StatsFd(), "probe reclaim");
    out["mm.reclaim_latency"] =
        HistogramMetric("mm.reclaim_latency", "ns", HistogramOfBuckets(total.direct_hist), duration_s);
    out["mm.memcg_reclaim_latency"] =
        HistogramMetric("mm.memcg_reclaim_latency", "ns", HistogramOfBuckets(total.memcg_hist), duration_s);
    out[kMmReclaim] = CounterMetric(kMmReclaim, "count", static_cast<double>(total.direct), duration_s);
    out[kMmMemcgReclaim] =
        CounterMetric(kMmMemcgReclaim, "count", static_cast<double>(total.memcg + total.softlimit), duration_s);
    // Soft-limit reclaim runs inside direct reclaim (or kswapd), whose
    // nr_reclaimed already includes its pages: counting them again would
    // count them twice.
    out["mm.reclaim_pages"] = CounterMetric("mm.reclaim_pages", "pages",
                                            static_cast<double>(total.direct_pages + total.memcg_pages), duration_s);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    std::vector<HookSpec> hooks = {
        TracepointHook("vmscan", "mm_vmscan_direct_reclaim_begin", "reclaim_direct_begin", {"try_to_free_pages"}),
        TracepointHook("vmscan", "mm_vmscan_direct_reclaim_end", "reclaim_direct_end", {"try_to_free_pages"}),
        TracepointHook("vmscan", "mm_vmscan_memcg_reclaim_begin", "reclaim_memcg_begin",
                       {"try_to_free_mem_cgroup_pages"}),
        TracepointHook("vmscan", "mm_vmscan_memcg_reclaim_end", "reclaim_memcg_end", {"try_to_free_mem_cgroup_pages"}),
    };
    if (SoftLimitEventsExist()) {
      hooks.push_back(TracepointHook("vmscan", "mm_vmscan_memcg_softlimit_reclaim_begin", "reclaim_softlimit_begin",
                                     {"mem_cgroup_shrink_node"}));
      hooks.push_back(TracepointHook("vmscan", "mm_vmscan_memcg_softlimit_reclaim_end", "reclaim_softlimit_end",
                                     {"mem_cgroup_shrink_node"}));
    }
    return hooks;
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.reclaim_stats); }
};

}  // namespace

ProbeDefinition DefineReclaimProbe() { return DefineProbe<ReclaimProbe>(DeclaredProbe("reclaim")); }

}  // namespace perfgate
