// mm.page_alloc, mm.kmalloc, mm.page_free and mm.kfree: page and slab
// allocations and frees, as counts over the repetition so that checks can
// gate on their rate.
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

  void Reset() override { ZeroPerCpu<pg_kmem_stats>(StatsFd(), "probe kmem"); }

  void Collect(double duration_s, MetricSet& out) override {
    const auto total = ReadPerCpuTotal<pg_kmem_stats>(StatsFd(), "probe kmem");
    out["mm.page_alloc"] = CounterMetric("mm.page_alloc", "pages", static_cast<double>(total.pages), duration_s);
    out["mm.kmalloc"] =
        CounterMetric("mm.kmalloc", "count", static_cast<double>(total.kmalloc + total.kmem_cache_alloc), duration_s);
    out["mm.page_free"] = CounterMetric("mm.page_free", "pages", static_cast<double>(total.pages_freed), duration_s);
    out["mm.kfree"] =
        CounterMetric("mm.kfree", "count", static_cast<double>(total.kfree + total.kmem_cache_free), duration_s);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    return {TracepointHook("kmem", "mm_page_alloc", "kmem_page_alloc"),
            TracepointHook("kmem", "kmalloc", "kmem_kmalloc"),
            TracepointHook("kmem", "kmem_cache_alloc", "kmem_cache_alloc"),
            TracepointHook("kmem", "mm_page_free", "kmem_page_free"),
            TracepointHook("kmem", "kfree", "kmem_kfree"),
            TracepointHook("kmem", "kmem_cache_free", "kmem_cache_free")};
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.kmem_stats); }
};

}  // namespace

std::unique_ptr<Probe> MakeKernelMemoryProbe() { return std::make_unique<KernelMemoryProbe>(); }

}  // namespace perfgate
