// lock.mmap_lock_wait: how long the workload's threads take to acquire their
// process's mm lock (mmap_lock); see bpf/mmaplock.bpf.c for the in-kernel side.
#include "mmaplock.h"

#include <bpf/libbpf.h>

#include <memory>
#include <vector>

#include "metrics/metric.h"
#include "mmaplock.skel.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/features.h"
#include "probes/hist_read.h"
#include "probes/percpu.h"

namespace perfgate {
namespace {

const char* const kMmaplockWhat = "probe mmaplock";

class MmapLockProbe final : public BpfProbe<mmaplock_bpf> {
 public:
  MmapLockProbe() : BpfProbe("mmaplock", {mmaplock_bpf__open, mmaplock_bpf__destroy}) {}

  void Reset() override { ZeroPerCpu<pg_mmaplock_stats>(StatsFd(), kMmaplockWhat); }

  void Collect(double duration_s, MetricSet& out) override {
    const auto total = ReadPerCpuTotal<pg_mmaplock_stats>(StatsFd(), kMmaplockWhat);
    out["lock.mmap_lock_wait"] =
        HistogramMetric("lock.mmap_lock_wait", "ns", HistogramOfBuckets(total.hist), duration_s);
    out["lock.mmap_lock_waits"] =
        CounterMetric("lock.mmap_lock_waits", "count", static_cast<double>(total.waits), duration_s);
    out["lock.mmap_lock_wait_time"] =
        CounterMetric("lock.mmap_lock_wait_time", "ns", static_cast<double>(total.time_ns), duration_s);
    CountDrops(total.lost);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    return {TracepointHook("mmap_lock", "mmap_lock_start_locking", "mmaplock_start"),
            TracepointHook("mmap_lock", "mmap_lock_acquire_returned", "mmaplock_acquired")};
  }

  void Configure(mmaplock_bpf& skel) override {
    skel.rodata->use_task_storage = TaskStorageUsableFromTracepoints();
    // The map left unused still gets created; keep it minimal.
    if (skel.rodata->use_task_storage) bpf_map__set_max_entries(skel.maps.locking_since, 1);
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.mmaplock_stats); }
};

}  // namespace

ProbeDefinition DefineMmapLockProbe() { return DefineProbe<MmapLockProbe>(DeclaredProbe("mmaplock")); }

}  // namespace perfgate
