// tcp.retransmits, tcp.rtt, tcp.connect_latency and tcp.resets: TCP events
// of the workload's sockets; see bpf/tcp.bpf.c for how sockets are
// attributed to the workload when their events run in softirq context.
#include "tcp.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "metrics/metric.h"
#include "probes/bpf_probe.h"
#include "probes/builtin_probes.h"
#include "probes/features.h"
#include "probes/hist_read.h"
#include "probes/percpu.h"
#include "tcp.skel.h"

namespace perfgate {
namespace {

// Deletes every key of a hash map; `Key` is the map's key type.
template <class Key>
void ClearHashMap(int fd, const std::string& what) {
  // Deleting while iterating restarts the walk, so collect the keys first.
  std::vector<Key> keys;
  Key key{}, next{};
  bool first = true;
  while (bpf_map_get_next_key(fd, first ? nullptr : &key, &next) == 0) {
    keys.push_back(next);
    key = next;
    first = false;
  }
  for (const Key& k : keys) {
    if (bpf_map_delete_elem(fd, &k) != 0 && errno != ENOENT)
      throw InfraError("probe tcp: reset " + what + ": " + ErrnoText(errno));
  }
}

struct ListenerKey {
  uint32_t netns;
  uint32_t port;
};

class TcpProbe final : public BpfProbe<tcp_bpf> {
 public:
  TcpProbe() : BpfProbe("tcp", {tcp_bpf__open, tcp_bpf__destroy}) {}

  // Sockets and listeners of the previous repetition's workload are gone or
  // no longer the workload's: each repetition starts with none.
  void Reset() override {
    ZeroPerCpu<pg_tcp_stats>(StatsFd(), "probe tcp");
    ClearHashMap<uint64_t>(bpf_map__fd(skel().maps.tcp_socks), "sockets");
    ClearHashMap<ListenerKey>(bpf_map__fd(skel().maps.tcp_listeners), "listeners");
  }

  void Collect(double duration_s, MetricSet& out) override {
    const auto total = ReadPerCpuTotal<pg_tcp_stats>(StatsFd(), "probe tcp");
    const auto sent = static_cast<double>(total.resets_sent);
    const auto received = static_cast<double>(total.resets_received);
    out["tcp.retransmits"] =
        CounterMetric("tcp.retransmits", "count", static_cast<double>(total.retransmits), duration_s);
    out["tcp.rtt"] = HistogramMetric("tcp.rtt", "ns", HistogramOfBuckets(total.rtt_hist), duration_s);
    out["tcp.connect_latency"] =
        HistogramMetric("tcp.connect_latency", "ns", HistogramOfBuckets(total.connect_hist), duration_s);
    out["tcp.resets"] = CounterMetric("tcp.resets", "count", sent + received, duration_s);
    out["tcp.resets.sent"] = CounterMetric("tcp.resets.sent", "count", sent, duration_s);
    out["tcp.resets.received"] = CounterMetric("tcp.resets.received", "count", received, duration_s);
  }

 protected:
  std::vector<HookSpec> Hooks() const override {
    // Function variants where one function fires the event (bpf/tcp.bpf.c).
    return {TracepointHook("sock", "inet_sock_set_state", "tcp_state"),
            TracepointHook("tcp", "tcp_probe", "tcp_rtt", {"tcp_rcv_established"}),
            TracepointHook("tcp", "tcp_retransmit_skb", "tcp_retransmit"),
            TracepointHook("tcp", "tcp_send_reset", "tcp_reset_sent"),
            TracepointHook("tcp", "tcp_receive_reset", "tcp_reset_received", {"tcp_reset"})};
  }

  // Listeners are only followed in workload scope; system scope keeps
  // sockets only while they connect.
  void Configure(tcp_bpf& skel) override {
    if (!skel.rodata->pg_filter_tracked && bpf_map__set_max_entries(skel.maps.tcp_listeners, 1) != 0)
      throw InfraError("probe tcp: shrink the unused map of listeners");
  }

 private:
  int StatsFd() const { return bpf_map__fd(skel().maps.tcp_stats); }
};

}  // namespace

ProbeDefinition DefineTcpProbe() { return DefineProbe<TcpProbe>(DeclaredProbe("tcp")); }

}  // namespace perfgate
