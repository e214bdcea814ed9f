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

ProbeDefinition DefineMmapLockProbe() {
  ProbeInfo info{
      .name = "mmaplock",
      .description =
       "mm lock waits: time to acquire the process's mmap_lock, read or write, from "
       "mmap_lock:mmap_lock_start_locking to mmap_lock:mmap_lock_acquire_returned (every acquisition, "
       "contended or not)",
      .metrics = {{.name = "lock.mmap_lock_wait", .kind = MetricKind::kHistogram, .unit = "ns", .better = Better::kLower, .role = MetricRole::kKernel, .price = {.pricing = Pricing::kLatencySum, .within = "sched.offcpu.io", .unless = "lock.mmap_lock_wait_time"}, .help = "time per mmap_lock acquisition"},
           {.name = "lock.mmap_lock_waits", .kind = MetricKind::kCounter, .unit = "count", .better = Better::kLower, .role = MetricRole::kKernel, .price = {.unless = "lock.mmap_lock_wait_time"}, .help = "mmap_lock acquisitions"},
           {.name = "lock.mmap_lock_wait_time", .kind = MetricKind::kCounter, .unit = "ns", .better = Better::kLower, .role = MetricRole::kKernel, .price = {.pricing = Pricing::kWaitTime, .within = "sched.offcpu.io"}, .help = "time acquiring the mmap_lock in total"}},
  };
  return {std::move(info), []() -> std::unique_ptr<Probe> { return std::make_unique<MmapLockProbe>(); }};
}

}  // namespace perfgate
