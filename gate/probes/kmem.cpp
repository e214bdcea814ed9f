// mm.page_alloc and mm.kmalloc, and with the `frees` parameter mm.page_free
// and mm.kfree: page and slab allocations and frees, as counts over the
// repetition so that checks can gate on their rate. Frees are off by
// default: they double the events of an allocation-heavy workload (every
// page it faults in is freed again at exit) and rarely explain a regression.
#include <memory>

#include "kmem.skel.h"
#include "metrics/metric.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/percpu.h"
#include "stats.h"

namespace perfgate {
namespace {

class KernelMemoryProbe final : public BpfProbe<kmem_bpf> {
 public:
  KernelMemoryProbe() : BpfProbe("kmem", {kmem_bpf__open, kmem_bpf__destroy}) {}

  void Attach(const ProbeOptions& options, WorkloadTracker* tracker) override {
    frees_ = options.params.value("frees", false);
    BpfProbe::Attach(options, tracker);
  }

  void Reset() override { ZeroPerCpu<pg_kmem_stats>(StatsFd(), "probe kmem"); }

  void Collect(double duration_s, MetricSet& out) override {
    const auto total = ReadPerCpuTotal<pg_kmem_stats>(StatsFd(), "probe kmem");
    out[kMmPageAlloc] = CounterMetric(kMmPageAlloc, "pages", static_cast<double>(total.pages), duration_s);
    out["mm.kmalloc"] =
        CounterMetric("mm.kmalloc", "count", static_cast<double>(total.kmalloc + total.kmem_cache_alloc), duration_s);
    if (!frees_) return;
    out["mm.page_free"] = CounterMetric("mm.page_free", "pages", static_cast<double>(total.pages_freed), duration_s);
    out["mm.kfree"] =
        CounterMetric("mm.kfree", "count", static_cast<double>(total.kfree + total.kmem_cache_free), duration_s);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    std::vector<HookSpec> hooks = {TracepointHook("kmem", "mm_page_alloc", "kmem_page_alloc"),
                                   TracepointHook("kmem", "kmalloc", "kmem_kmalloc"),
                                   TracepointHook("kmem", "kmem_cache_alloc", "kmem_cache_alloc")};
    if (frees_) {
      hooks.push_back(TracepointHook("kmem", "mm_page_free", "kmem_page_free"));
      hooks.push_back(TracepointHook("kmem", "kfree", "kmem_kfree"));
      hooks.push_back(TracepointHook("kmem", "kmem_cache_free", "kmem_cache_free"));
    }
    return hooks;
  }

 private:
  bool frees_ = false;
  int StatsFd() const { return bpf_map__fd(skel().maps.kmem_stats); }
};

}  // namespace

ProbeDefinition DefineKernelMemoryProbe() { return DefineProbe<KernelMemoryProbe>(DeclaredProbe("kmem")); }

}  // namespace perfgate
