// block.io_latency, block.io, block.io_bytes and block.<disk>.io_latency:
// block requests from issue to completion; see bpf/biolat.bpf.c for how
// requests are matched and attributed to the workload.
#include "biolat.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "biolat.skel.h"
#include "metrics/metric.h"
#include "probes/biolat_devices.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/features.h"
#include "probes/hist_read.h"
#include "probes/percpu.h"

namespace perfgate {
namespace {

class BlockLatencyProbe final : public BpfProbe<biolat_bpf> {
 public:
  BlockLatencyProbe() : BpfProbe("biolat", {biolat_bpf__open, biolat_bpf__destroy}) {}

  void Reset() override {
    ZeroPerCpu<pg_biolat_stats>(StatsFd(), "probe biolat");
    // Disks get an entry at their first completion; dropping them all
    // zeroes them and reports only the disks of this repetition.
    for (uint32_t dev : DeviceKeys()) {
      if (bpf_map_delete_elem(DevicesFd(), &dev) != 0 && errno != ENOENT)
        throw InfraError("probe biolat: reset per-disk latency: " + ErrnoText(errno));
    }
  }

  void Collect(double duration_s, MetricSet& out) override {
    auto per_cpu = ReadPerCpu<pg_biolat_stats>(StatsFd(), "probe biolat");
    double requests = 0, bytes = 0;
    for (const auto& cpu : per_cpu) {
      requests += static_cast<double>(cpu.requests);
      bytes += static_cast<double>(cpu.bytes);
    }
    out[kBlockIoLatency] = HistogramMetric(kBlockIoLatency, "ns", MergeCpuHistograms(per_cpu), duration_s);
    out["block.io"] = CounterMetric("block.io", "count", requests, duration_s);
    out["block.io_bytes"] = CounterMetric("block.io_bytes", "bytes", bytes, duration_s);
    for (uint32_t dev : DeviceKeys()) {
      std::vector<pg_biolat_device_stats> device(PossibleCpus());
      if (bpf_map_lookup_elem(DevicesFd(), &dev, device.data()) != 0) {
        if (errno == ENOENT) continue;
        throw InfraError("probe biolat: read per-disk latency: " + ErrnoText(errno));
      }
      std::string name = "block." + DeviceName(dev) + ".io_latency";
      out[name] = HistogramMetric(name, "ns", MergeCpuHistograms(device), duration_s);
    }
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    // Function variants where one function fires the event (bpf/biolat.bpf.c).
    return {TracepointHook("block", "block_rq_insert", "biolat_insert"),
            TracepointHook("block", "block_rq_issue", "biolat_issue", {"blk_mq_start_request"}),
            TracepointHook("block", "block_rq_complete", "biolat_complete", {"blk_update_request"})};
  }

  // Requests are keyed by address when every hook sees it the same way: the
  // tracepoint records carry none, and tp_btf and raw_tp programs compute
  // different numbers from it (see bpf/biolat.bpf.c).
  void Configure(biolat_bpf& skel) override {
    auto type = plan().CommonType();
    skel.rodata->key_by_request = type && *type != AttachType::kTracepoint;
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.biolat_stats); }
  int DevicesFd() const { return bpf_map__fd(skel().maps.biolat_device_stats); }

  static size_t PossibleCpus() {
    int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) throw InfraError("probe biolat: cannot count possible CPUs: " + ErrnoText(-cpus));
    return static_cast<size_t>(cpus);
  }

  // The disks in the per-disk map (at most PG_BIOLAT_DEVICES_MAX; the BPF
  // side only adds entries, so iterating is stable).
  std::vector<uint32_t> DeviceKeys() const {
    std::vector<uint32_t> keys;
    uint32_t key = 0, next = 0;
    while (keys.size() < PG_BIOLAT_DEVICES_MAX &&
           bpf_map_get_next_key(DevicesFd(), keys.empty() ? nullptr : &key, &next) == 0) {
      keys.push_back(next);
      key = next;
    }
    return keys;
  }

  // Disk names are read from sysfs once per disk and probe.
  const std::string& DeviceName(uint32_t dev) {
    auto it = device_names_.find(dev);
    if (it == device_names_.end()) it = device_names_.emplace(dev, BlockDeviceName(dev)).first;
    return it->second;
  }

  std::map<uint32_t, std::string> device_names_;
};

}  // namespace

ProbeDefinition DefineBlockLatencyProbe() { return DefineProbe<BlockLatencyProbe>(DeclaredProbe("biolat")); }

}  // namespace perfgate
