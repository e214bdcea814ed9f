// syscalls.count and syscalls.latency from raw_syscalls sys_enter/sys_exit.
#include <memory>

#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/hist_read.h"
#include "probes/percpu.h"
#include "stats.h"
#include "syscalls.skel.h"

namespace perfgate {
namespace {

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

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.syscalls_stats); }
};

}  // namespace

std::unique_ptr<Probe> MakeSyscallsProbe() { return std::make_unique<SyscallsProbe>(); }

}  // namespace perfgate
