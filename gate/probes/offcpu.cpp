// sched.offcpu: how long tracked threads stay off the CPU, and why they left
// it; see bpf/offcpu.bpf.c for the in-kernel side.
#include "offcpu.h"

#include <bpf/bpf.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "metrics/metric.h"
#include "offcpu.skel.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/features.h"
#include "probes/map_keys.h"
#include "probes/offcpu_stacks.h"
#include "probes/percpu.h"
#include "probes/stack_map.h"

namespace perfgate {

std::vector<OffCpuStack> MostOffCpuTime(std::vector<OffCpuStack> stacks, size_t n) {
  auto more = [](const OffCpuStack& a, const OffCpuStack& b) {
    if (a.time_ns != b.time_ns) return a.time_ns > b.time_ns;
    if (a.count != b.count) return a.count > b.count;
    return a.tgid < b.tgid;
  };
  n = std::min(n, stacks.size());
  std::partial_sort(stacks.begin(), stacks.begin() + static_cast<std::ptrdiff_t>(n), stacks.end(), more);
  stacks.resize(n);
  return stacks;
}

namespace {

const char* const kOffcpuWhat = "probe offcpu";

// Distinct stacks kept per repetition when `stacks` is on; the stack map has
// room for both the kernel and the user stack of each.
constexpr uint32_t kOffcpuStackSums = 2048;
constexpr uint32_t kOffcpuStackTraces = 2 * kOffcpuStackSums;

// The reasons with a metric of their own; PG_OFFCPU_OTHER (stopped, traced,
// parked) is in sched.offcpu only.
struct Reason {
  uint32_t key;
  const char* metric;
};
constexpr Reason kReasons[] = {{PG_OFFCPU_SLEEP, kSchedOffcpuSleep},
                               {PG_OFFCPU_IO, "sched.offcpu.io"},
                               {PG_OFFCPU_PREEMPTED, kSchedOffcpuPreempted}};

// Every CPU's copy of one slot of a per-CPU array whose value is T (percpu.h
// reads slot 0; the stats here have one slot per reason).
template <class T>
std::vector<T> ReadSlot(int map_fd, uint32_t key) {
  static_assert(sizeof(T) % 8 == 0);
  int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) throw InfraError(std::string(kOffcpuWhat) + ": cannot count possible CPUs: " + ErrnoText(-cpus));
  std::vector<T> values(static_cast<size_t>(cpus));
  if (bpf_map_lookup_elem(map_fd, &key, values.data()) != 0)
    throw InfraError(std::string(kOffcpuWhat) + ": read per-CPU map: " + ErrnoText(errno));
  return values;
}

template <class T>
void ZeroSlot(int map_fd, uint32_t key) {
  static_assert(sizeof(T) % 8 == 0);
  int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) throw InfraError(std::string(kOffcpuWhat) + ": cannot count possible CPUs: " + ErrnoText(-cpus));
  std::vector<T> zeros(static_cast<size_t>(cpus));
  if (bpf_map_update_elem(map_fd, &key, zeros.data(), BPF_ANY) != 0)
    throw InfraError(std::string(kOffcpuWhat) + ": reset per-CPU map: " + ErrnoText(errno));
}

class OffCpuProbe final : public BpfProbe<offcpu_bpf>, public OffCpuStackSource {
 public:
  OffCpuProbe() : BpfProbe("offcpu", {offcpu_bpf__open, offcpu_bpf__destroy}) {}

  void Attach(const ProbeOptions& options, WorkloadTracker* tracker) override {
    stacks_ = options.params.value("stacks", false);
    BpfProbe::Attach(options, tracker);
  }

  void Reset() override {
    for (uint32_t key = 0; key < PG_OFFCPU_REASONS; ++key) ZeroSlot<pg_offcpu_stats>(StatsFd(), key);
    ZeroPerCpu<pg_offcpu_drops>(bpf_map__fd(skel().maps.offcpu_drops), kOffcpuWhat);
    if (stacks_) {
      ClearMap<pg_stack_key>(bpf_map__fd(skel().maps.offcpu_by_stack));
      ClearStacks(StacksFd());
    }
    // Waits in progress go last, with the stacks they would name: a wait
    // left by a thread the tracker followed before (one that came back
    // unseen, bpf/offcpu.bpf.c, and was forgotten since) must not end in
    // this repetition when the thread dies, and a wait that began while the
    // stacks were cleared would name a stack that is gone.
    ClearMap<uint32_t>(bpf_map__fd(skel().maps.offcpu_since));
  }

  void Collect(double duration_s, MetricSet& out) override {
    LogLinearHistogram all;
    double time_ns = 0;
    for (uint32_t key = 0; key < PG_OFFCPU_REASONS; ++key) {
      LogLinearHistogram hist;
      for (const auto& cpu : ReadSlot<pg_offcpu_stats>(StatsFd(), key)) {
        time_ns += static_cast<double>(cpu.time_ns);
        for (unsigned i = 0; i < PG_HIST_BUCKETS; ++i) hist.AddBucket(i, cpu.hist[i]);
      }
      all.Merge(hist);
      for (const auto& reason : kReasons) {
        if (reason.key == key) out[reason.metric] = HistogramMetric(reason.metric, "ns", hist, duration_s);
      }
    }
    out[kSchedOffcpu] = HistogramMetric(kSchedOffcpu, "ns", std::move(all), duration_s);
    out["sched.offcpu_time"] = CounterMetric("sched.offcpu_time", "ns", time_ns, duration_s);
    for (const auto& cpu : ReadPerCpu<pg_offcpu_drops>(bpf_map__fd(skel().maps.offcpu_drops), kOffcpuWhat))
      CountDrops(cpu.starts + cpu.stacks + cpu.stack_sums);
  }

  std::vector<OffCpuStack> TopOffCpuStacks(size_t n) const override {
    if (!stacks_) return {};
    std::vector<OffCpuStack> stacks;
    for (const auto& [key, total] :
         MapEntries<pg_stack_key, pg_offcpu_stack_total>(bpf_map__fd(skel().maps.offcpu_by_stack))) {
      OffCpuStack stack;
      stack.tgid = key.tgid;
      stack.time_ns = total.time_ns;
      stack.count = total.count;
      stack.preempted = key.reason == PG_OFFCPU_PREEMPTED;
      stack.kernel_stack_id = key.kernel_stack;
      stack.user_stack_id = key.user_stack;
      stacks.push_back(std::move(stack));
    }
    stacks = MostOffCpuTime(std::move(stacks), n);
    for (auto& stack : stacks) {
      stack.kernel_ips = ReadStack(StacksFd(), stack.kernel_stack_id);
      stack.user_ips = ReadStack(StacksFd(), stack.user_stack_id);
    }
    return stacks;
  }

 protected:
  std::vector<HookSpec> Hooks() const override { return {TracepointHook("sched", "sched_switch", "offcpu_switch")}; }

  void Configure(offcpu_bpf& skel) override {
    skel.rodata->capture_stacks = stacks_;
    // Without stacks the maps stay at the one entry they are declared with.
    if (stacks_) {
      bpf_map__set_max_entries(skel.maps.offcpu_stacks, kOffcpuStackTraces);
      bpf_map__set_max_entries(skel.maps.offcpu_by_stack, kOffcpuStackSums);
    }
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.offcpu_stats); }
  int StacksFd() const { return bpf_map__fd(skel().maps.offcpu_stacks); }

  bool stacks_ = false;
};

}  // namespace

ProbeDefinition DefineOffCpuProbe() { return DefineProbe<OffCpuProbe>(DeclaredProbe("offcpu")); }

}  // namespace perfgate
