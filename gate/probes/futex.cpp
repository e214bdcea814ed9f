// lock.futex_wait: how long the workload's threads wait in futex(2) for user
// locks (mutexes, condition variables, semaphores, joins), and on which futex
// words; see bpf/futex.bpf.c for the in-kernel side.
#include "futex.h"

#include <bpf/bpf.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "futex.skel.h"
#include "metrics/metric.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/futex_contention.h"
#include "probes/hist_read.h"
#include "probes/map_keys.h"
#include "probes/percpu.h"
#include "probes/stack_map.h"

namespace perfgate {

std::vector<ContendedFutex> MostContendedFutexes(const std::vector<FutexWaitSum>& sums, size_t n) {
  struct Word {
    ContendedFutex futex;
    uint64_t stack_time_ns = 0;  // of futex.user_stack_id
  };
  std::map<std::pair<uint32_t, uint64_t>, Word> words;
  for (const auto& sum : sums) {
    Word& word = words[{sum.tgid, sum.uaddr}];
    word.futex.tgid = sum.tgid;
    word.futex.uaddr = sum.uaddr;
    word.futex.time_ns += sum.time_ns;
    word.futex.count += sum.count;
    if (sum.user_stack_id >= 0 && (word.futex.user_stack_id < 0 || sum.time_ns > word.stack_time_ns)) {
      word.futex.user_stack_id = sum.user_stack_id;
      word.stack_time_ns = sum.time_ns;
    }
  }
  std::vector<ContendedFutex> top;
  for (auto& [key, word] : words) top.push_back(std::move(word.futex));
  auto more = [](const ContendedFutex& a, const ContendedFutex& b) {
    if (a.time_ns != b.time_ns) return a.time_ns > b.time_ns;
    if (a.count != b.count) return a.count > b.count;
    if (a.tgid != b.tgid) return a.tgid < b.tgid;
    return a.uaddr < b.uaddr;
  };
  n = std::min(n, top.size());
  std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(n), top.end(), more);
  top.resize(n);
  return top;
}

namespace {

const char* const kFutexWhat = "probe futex";

// Distinct user stacks kept per repetition when `stacks` is on.
constexpr uint32_t kFutexStackTraces = 2048;

// The syscalls that wait on a futex, each with its own syscalls:sys_enter_*
// and sys_exit_* tracepoints; futex itself first.
constexpr const char* kWaitSyscalls[] = {"futex", "futex_wait", "futex_waitv"};

// Whether the futex syscalls' own tracepoints can be used: then only futex
// calls run the probe's programs, instead of every syscall of the machine
// at raw_syscalls. Options that rule tracepoints out (a test forcing tp_btf
// or raw_tp) get the raw_syscalls hooks.
bool PerSyscallTracepoints(const ProbeOptions& options) {
  const auto& allowed = options.allowed_attach_types;
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), AttachType::kTracepoint) == allowed.end())
    return false;
  return TracepointExists("syscalls", "sys_enter_futex").supported &&
         TracepointExists("syscalls", "sys_exit_futex").supported;
}

class FutexProbe final : public BpfProbe<futex_bpf>, public FutexContentionSource {
 public:
  FutexProbe() : BpfProbe("futex", {futex_bpf__open, futex_bpf__destroy}) {}

  void Attach(const ProbeOptions& options, WorkloadTracker* tracker) override {
    stacks_ = options.params.value("stacks", false);
    per_syscall_ = PerSyscallTracepoints(options);
    BpfProbe::Attach(options, tracker);
  }

  void Reset() override {
    ZeroPerCpu<pg_futex_stats>(StatsFd(), kFutexWhat);
    ZeroPerCpu<pg_futex_drops>(bpf_map__fd(skel().maps.futex_drops), kFutexWhat);
    ClearMap<pg_futex_address_key>(bpf_map__fd(skel().maps.futex_by_address));
    if (stacks_) ClearStacks(StacksFd());
  }

  void Collect(double duration_s, MetricSet& out) override {
    const auto total = ReadPerCpuTotal<pg_futex_stats>(StatsFd(), kFutexWhat);
    out["lock.futex_wait"] = HistogramMetric("lock.futex_wait", "ns", HistogramOfBuckets(total.hist), duration_s);
    out["lock.futex_waits"] = CounterMetric("lock.futex_waits", "count", static_cast<double>(total.waits), duration_s);
    out["lock.futex_wait_time"] =
        CounterMetric("lock.futex_wait_time", "ns", static_cast<double>(total.time_ns), duration_s);
    const auto lost = ReadPerCpuTotal<pg_futex_drops>(bpf_map__fd(skel().maps.futex_drops), kFutexWhat);
    CountDrops(lost.starts + lost.stacks + lost.addresses);
  }

  std::vector<ContendedFutex> TopContendedFutexes(size_t n) const override {
    const int fd = bpf_map__fd(skel().maps.futex_by_address);
    const int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) throw InfraError(std::string(kFutexWhat) + ": cannot count possible CPUs: " + ErrnoText(-cpus));
    std::vector<FutexWaitSum> sums;
    std::vector<pg_futex_address_total> per_cpu(static_cast<size_t>(cpus));
    for (const auto& key : MapKeys<pg_futex_address_key>(fd)) {
      if (bpf_map_lookup_elem(fd, &key, per_cpu.data()) != 0) continue;  // deleted meanwhile
      FutexWaitSum sum{key.tgid, key.uaddr, key.user_stack, 0, 0};
      for (const auto& cpu : per_cpu) {
        sum.time_ns += cpu.time_ns;
        sum.count += cpu.count;
      }
      sums.push_back(sum);
    }
    std::vector<ContendedFutex> top = MostContendedFutexes(sums, n);
    for (auto& futex : top) futex.user_ips = ReadStack(StacksFd(), futex.user_stack_id);
    return top;
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    if (!per_syscall_)
      return {TracepointHook("raw_syscalls", "sys_enter", "futex_enter"),
              TracepointHook("raw_syscalls", "sys_exit", "futex_exit")};
    std::vector<HookSpec> hooks;
    for (const char* call : kWaitSyscalls) {
      for (const char* end : {"enter", "exit"}) {
        const std::string event = std::string("sys_") + end + "_" + call;
        // futex_waitv (5.16) and futex_wait (6.7) are newer than futex.
        if (call != kWaitSyscalls[0] && !TracepointExists("syscalls", event).supported) continue;
        hooks.push_back(
            {event, "syscalls", {{AttachType::kTracepoint, std::string("futex_") + end + "_" + call + "_tracepoint"}}});
      }
    }
    return hooks;
  }

  void Configure(futex_bpf& skel) override {
    skel.rodata->use_task_storage = TaskStorageUsableFromTracepoints();
    // The map left unused still gets created; keep it minimal.
    if (skel.rodata->use_task_storage) bpf_map__set_max_entries(skel.maps.futex_since, 1);
    skel.rodata->capture_stacks = stacks_;
    // Without stacks the map stays at the one entry it is declared with.
    if (stacks_) bpf_map__set_max_entries(skel.maps.futex_stacks, kFutexStackTraces);
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.futex_stats); }
  int StacksFd() const { return bpf_map__fd(skel().maps.futex_stacks); }

  bool stacks_ = false;
  bool per_syscall_ = false;
};

}  // namespace

ProbeDefinition DefineFutexProbe() { return DefineProbe<FutexProbe>(DeclaredProbe("futex")); }

}  // namespace perfgate
