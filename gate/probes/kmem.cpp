// mm.page_alloc and mm.kmalloc: page and slab allocations, as counts over the
// repetition so that checks can gate on their rate.
#include <memory>

#include "kmem.skel.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/percpu.h"
#include "probes/probe_metrics.h"
#include "stats.h"

namespace perfgate {
namespace {

class KernelMemoryProbe final : public BpfProbe<kmem_bpf> {
 public:
  KernelMemoryProbe() : BpfProbe("kmem", {kmem_bpf__open, kmem_bpf__destroy}) {}

  void Reset() override { ZeroPerCpu<pg_kmem_stats>(StatsFd(), "probe kmem"); }

  void Collect(double duration_s, MetricSet& out) override {
    pg_kmem_stats total{};
    for (const auto& cpu : ReadPerCpu<pg_kmem_stats>(StatsFd(), "probe kmem")) {
      total.pages += cpu.pages;
      total.kmalloc += cpu.kmalloc;
      total.kmem_cache_alloc += cpu.kmem_cache_alloc;
    }
    out["mm.page_alloc"] = CounterMetric("mm.page_alloc", "pages", static_cast<double>(total.pages), duration_s);
    out["mm.kmalloc"] =
        CounterMetric("mm.kmalloc", "count", static_cast<double>(total.kmalloc + total.kmem_cache_alloc), duration_s);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    return {TracepointHook("kmem", "mm_page_alloc", "kmem_page_alloc"),
            TracepointHook("kmem", "kmalloc", "kmem_kmalloc"),
            TracepointHook("kmem", "kmem_cache_alloc", "kmem_cache_alloc")};
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.kmem_stats); }
};

}  // namespace

std::unique_ptr<Probe> MakeKernelMemoryProbe() { return std::make_unique<KernelMemoryProbe>(); }

}  // namespace perfgate
