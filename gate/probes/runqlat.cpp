// sched.runq_latency: how long runnable threads wait for a CPU. In workload
// scope also "who held the CPU": host.runq_wait_behind_others, the part of
// those waits the CPU spent running other processes' tasks, its share of
// the wait, and the holders by comm.
#include "runqlat.h"

#include <map>
#include <memory>
#include <vector>

#include "metrics/cpu_holders.h"
#include "metrics/metric.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/hist_read.h"
#include "probes/map_keys.h"
#include "probes/percpu.h"
#include "runqlat.skel.h"
#include "stats.h"

namespace perfgate {
namespace {

class RunQueueLatencyProbe final : public BpfProbe<runqlat_bpf> {
 public:
  RunQueueLatencyProbe() : BpfProbe("runqlat", {runqlat_bpf__open, runqlat_bpf__destroy}) {}

  // The workload is held (its threads cannot run) while this runs, so no
  // wait starts between clearing the marks and zeroing the CPUs' counts.
  void Reset() override {
    ZeroPerCpu<pg_runqlat_stats>(StatsFd(), "probe runqlat");
    ClearMap<uint32_t>(bpf_map__fd(skel().maps.runnable_since));
    ClearMap<pg_runq_holder_key>(bpf_map__fd(skel().maps.runq_holders));
    const int fd = bpf_map__fd(skel().maps.runq_cpus);
    const pg_runq_cpu zero{};
    for (uint32_t cpu = 0; cpu < bpf_map__max_entries(skel().maps.runq_cpus); ++cpu)
      bpf_map_update_elem(fd, &cpu, &zero, BPF_ANY);
    holders_.clear();
  }

  void Collect(double duration_s, MetricSet& out) override {
    const std::vector<pg_runqlat_stats> per_cpu = ReadPerCpu<pg_runqlat_stats>(StatsFd(), "probe runqlat");
    out[kSchedRunqLatency] = HistogramMetric(kSchedRunqLatency, "ns", MergeCpuHistograms(per_cpu), duration_s);
    // In system scope every task counts as the workload's: nobody else held a CPU.
    if (scope() != ProbeScope::kWorkload) return;
    uint64_t wait_ns = 0, behind_ns = 0, drops = 0;
    for (const pg_runqlat_stats& cpu : per_cpu) {
      wait_ns += cpu.wait_ns;
      behind_ns += cpu.behind_others_ns;
      drops += cpu.holder_drops;
    }
    CountDrops(drops);
    out[kHostRunqWaitBehindOthers] =
        ScalarMetric(kHostRunqWaitBehindOthers, static_cast<double>(behind_ns) / 1e9, "s", Better::kNone);
    out[kHostRunqWaitBehindOthersShare] = ScalarMetric(
        kHostRunqWaitBehindOthersShare,
        wait_ns > 0 ? static_cast<double>(behind_ns) / static_cast<double>(wait_ns) : 0.0, "fraction", Better::kNone);
    std::map<std::string, double> by_comm;
    for (const auto& [key, ns] : MapEntries<pg_runq_holder_key, uint64_t>(bpf_map__fd(skel().maps.runq_holders)))
      by_comm[PrintableComm(key.comm, sizeof key.comm)] += static_cast<double>(ns) / 1e9;
    holders_ = TopCpuHolders(by_comm, kTopCpuHolders);
  }

  std::vector<CpuHolder> CpuHolders() const override { return holders_; }

 protected:
  std::vector<HookSpec> Hooks() const override {
    return {TracepointHook("sched", "sched_wakeup", "runqlat_wakeup"),
            TracepointHook("sched", "sched_wakeup_new", "runqlat_wakeup_new"),
            TracepointHook("sched", "sched_switch", "runqlat_switch")};
  }

  void Configure(runqlat_bpf& skel) override {
    const int cpus = libbpf_num_possible_cpus();
    if (cpus > 0) bpf_map__set_max_entries(skel.maps.runq_cpus, static_cast<uint32_t>(cpus));
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.runqlat_stats); }

  std::vector<CpuHolder> holders_;
};

}  // namespace

ProbeDefinition DefineRunQueueLatencyProbe() { return DefineProbe<RunQueueLatencyProbe>(DeclaredProbe("runqlat")); }

}  // namespace perfgate
