// syscalls.count and syscalls.latency from raw_syscalls sys_enter/sys_exit.
#include <initializer_list>
#include <memory>

#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/hist_read.h"
#include "probes/percpu.h"
#include "stats.h"
#include "syscalls.skel.h"

namespace perfgate {
namespace {

// Task-local storage is the cheapest per-thread slot for the start time, but
// older kernels do not offer its helpers to tracepoint programs.
bool TaskStorageUsableFromTracepoints() {
  static const bool usable = [] {
    for (bpf_prog_type type : {BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_PROG_TYPE_TRACEPOINT}) {
      if (libbpf_probe_bpf_helper(type, BPF_FUNC_task_storage_get, nullptr) != 1 ||
          libbpf_probe_bpf_helper(type, BPF_FUNC_get_current_task_btf, nullptr) != 1)
        return false;
    }
    return true;
  }();
  return usable;
}

class SyscallsProbe final : public BpfProbe<syscalls_bpf> {
 public:
  SyscallsProbe() : BpfProbe("syscalls", {syscalls_bpf__open, syscalls_bpf__destroy}) {}

  void Reset() override { ZeroPerCpu<pg_syscalls_stats>(StatsFd(), "probe syscalls"); }

  void Collect(double duration_s, MetricSet& out) override {
    auto per_cpu = ReadPerCpu<pg_syscalls_stats>(StatsFd(), "probe syscalls");
    Metric count;
    count.name = "syscalls.count";
    count.kind = MetricKind::kCounter;
    count.unit = "count";
    count.better = Better::kLower;
    count.duration_s = duration_s;
    for (const auto& cpu : per_cpu) count.value += static_cast<double>(cpu.count);

    Metric latency;
    latency.name = "syscalls.latency";
    latency.kind = MetricKind::kHistogram;
    latency.unit = "ns";
    latency.better = Better::kLower;
    latency.duration_s = duration_s;
    latency.hist = MergeCpuHistograms(per_cpu);

    out[count.name] = std::move(count);
    out[latency.name] = std::move(latency);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    return {TracepointHook("raw_syscalls", "sys_enter", "syscalls_enter"),
            TracepointHook("raw_syscalls", "sys_exit", "syscalls_exit")};
  }

  void Configure(syscalls_bpf& skel) override {
    skel.rodata->use_task_storage = TaskStorageUsableFromTracepoints();
    // The map left unused still gets created; keep it minimal.
    if (skel.rodata->use_task_storage) bpf_map__set_max_entries(skel.maps.start_by_tid, 1);
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.syscalls_stats); }
};

}  // namespace

std::unique_ptr<Probe> MakeSyscallsProbe() { return std::make_unique<SyscallsProbe>(); }

}  // namespace perfgate
