// mm.page_faults and its split into mm.page_faults.major / .minor, read from
// the threads' own fault counters: at fork and exit by bpf/pagefault.bpf.c,
// at the start and end of a repetition from /proc (see there for why).
#include "pagefault.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/error.h"
#include "metrics/metric.h"
#include "pagefault.skel.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/features.h"
#include "probes/map_keys.h"
#include "probes/percpu.h"
#include "probes/proc_threads.h"

namespace perfgate {
namespace {

const char* const kPagefaultWhat = "probe pagefault";

class PageFaultProbe final : public BpfProbe<pagefault_bpf> {
 public:
  PageFaultProbe() : BpfProbe("pagefault", {pagefault_bpf__open, pagefault_bpf__destroy}) {}

  // The old entries go first, then the generation changes, so that threads
  // forked from here on keep the zero baseline the fork hook gives them.
  void Reset() override {
    ZeroPerCpu<pg_pagefault_stats>(StatsFd(), kPagefaultWhat);
    int fd = BaselinesFd();
    ClearMap<uint32_t>(fd);
    BumpGeneration();
    const std::vector<uint32_t> threads =
        scope() == ProbeScope::kWorkload ? MapKeys<uint32_t>(bpf_map__fd(skel().maps.pg_tracked)) : AllThreads();
    for (uint32_t tid : threads) {
      auto counters = ThreadFaultCounters(tid);
      if (!counters) continue;  // it exited meanwhile
      // Forked since the new generation: its zero baseline is exact. (An
      // entry of the old one is from a fork just before the bump.)
      pg_fault_baseline existing{};
      if (bpf_map_lookup_elem(fd, &tid, &existing) == 0 && existing.reset_gen == generation_) continue;
      pg_fault_baseline baseline{counters->major, counters->minor, generation_, 0};
      // E2BIG: more threads than the map holds; the rest are not counted.
      bpf_map_update_elem(fd, &tid, &baseline, BPF_ANY);
    }
  }

  // Threads still alive: their growth from /proc. The exit hook deletes an
  // entry too, and only whoever deletes it counts the thread.
  void Collect(double duration_s, MetricSet& out) override {
    uint64_t major = 0, minor = 0;
    int fd = BaselinesFd();
    for (uint32_t tid : MapKeys<uint32_t>(fd)) {
      pg_fault_baseline baseline{};
      if (bpf_map_lookup_elem(fd, &tid, &baseline) != 0) continue;
      auto now = ThreadFaultCounters(tid);
      if (bpf_map_delete_elem(fd, &tid) != 0 || !now || baseline.reset_gen != generation_) continue;
      if (now->major >= baseline.maj_flt) major += now->major - baseline.maj_flt;
      if (now->minor >= baseline.min_flt) minor += now->minor - baseline.min_flt;
    }
    const auto exited = ReadPerCpuTotal<pg_pagefault_stats>(StatsFd(), kPagefaultWhat);
    major += exited.major;
    minor += exited.minor;
    auto counter = [&](const char* name, uint64_t value) {
      out[name] = CounterMetric(name, "count", static_cast<double>(value), duration_s);
    };
    counter("mm.page_faults", major + minor);
    counter("mm.page_faults.major", major);
    counter("mm.page_faults.minor", minor);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    return {ProcessForkHook("pagefault_fork"), ThreadExitHook("pagefault_exit")};
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.pagefault_stats); }
  int BaselinesFd() const { return bpf_map__fd(skel().maps.baselines); }

  // The object is loaded without bpf_object__load_skeleton, so skel().data
  // is not the map's memory: write the map.
  void BumpGeneration() {
    auto data = *skel().data;
    data.reset_gen = ++generation_;
    const uint32_t zero = 0;
    if (bpf_map_update_elem(bpf_map__fd(skel().maps.data), &zero, &data, BPF_ANY) != 0)
      throw InfraError(std::string(kPagefaultWhat) + ": bump the reset generation: " + ErrnoText(errno));
  }

  uint32_t generation_ = 1;  // as bpf/pagefault.bpf.c initializes it
};

}  // namespace

ProbeDefinition DefinePageFaultProbe() { return DefineProbe<PageFaultProbe>(DeclaredProbe("pagefault")); }

}  // namespace perfgate
