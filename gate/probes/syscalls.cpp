// syscalls.count (exact) and syscalls.latency (sampled) from raw_syscalls
// sys_enter/sys_exit; see bpf/syscalls.bpf.c for the in-kernel side.
#include "probes/syscalls.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "metrics/error.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/hist_read.h"
#include "probes/percpu.h"
#include "probes/probe_metrics.h"
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
  explicit SyscallsProbe(const SyscallsProbeOptions& options)
      : BpfProbe("syscalls", {syscalls_bpf__open, syscalls_bpf__destroy}), options_(options) {}

  void Reset() override {
    ZeroPerCpu<pg_syscalls_stats>(StatsFd(), "probe syscalls");
    // The tracker has just been cleared and re-seeded: drop the threads'
    // cached "tracked" verdicts. The object is loaded without
    // bpf_object__load_skeleton, so skel().data is not the map's memory:
    // write the map.
    auto data = *skel().data;
    data.tracked_gen = ++tracked_gen_;
    const uint32_t zero = 0;
    if (bpf_map_update_elem(bpf_map__fd(skel().maps.data), &zero, &data, BPF_ANY) != 0)
      throw InfraError("probe syscalls: bump the tracked generation: " + ErrnoText(errno));
  }

  void Collect(double duration_s, MetricSet& out) override {
    auto per_cpu = ReadPerCpu<pg_syscalls_stats>(StatsFd(), "probe syscalls");
    double count = 0;
    for (const auto& cpu : per_cpu) count += static_cast<double>(cpu.count);
    out["syscalls.count"] = CounterMetric("syscalls.count", "count", count, duration_s);
    // Sampled: about 1 in latency_sample_every syscalls per CPU, so its
    // count is of sampled calls; its shape and quantiles are what matter.
    out["syscalls.latency"] = HistogramMetric("syscalls.latency", "ns", MergeCpuHistograms(per_cpu), duration_s);
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
    skel.rodata->sample_threshold = (uint64_t{1} << 32) / options_.latency_sample_every;
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.syscalls_stats); }

  SyscallsProbeOptions options_;
  uint32_t tracked_gen_ = 1;  // as bpf/syscalls.bpf.c initializes it
};

}  // namespace

std::unique_ptr<Probe> MakeSyscallsProbe(const SyscallsProbeOptions& options) {
  uint32_t every = options.latency_sample_every;
  if (every == 0 || (every & (every - 1)) != 0)
    throw InputError("probe syscalls: latency sample rate must be a power of two, not " + std::to_string(every));
  return std::make_unique<SyscallsProbe>(options);
}

std::unique_ptr<Probe> MakeSyscallsProbe() { return MakeSyscallsProbe(SyscallsProbeOptions{}); }

}  // namespace perfgate
