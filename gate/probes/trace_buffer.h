// The ring buffer of `perfgate run --trace` (bpf/trace_events.bpf.h), shared
// by every probe object of a traced repetition, and the thread that drains it
// while the workload runs.
#pragma once

#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "metrics/trace_capture.h"

namespace perfgate {

struct TraceSettings {
  uint64_t buffer_bytes = 4 << 20;  // rounded up to a power of two of at least a page
  uint64_t slow_syscall_ns = 1'000'000;
  uint64_t long_offcpu_ns = 1'000'000;
  int poll_interval_ms = 10;
};

// Ring-buffer bytes one record takes: the record and its header.
inline constexpr uint64_t kTraceRecordBytes = sizeof(pg_trace_event) + BPF_RINGBUF_HDR_SZ;

// Ring buffer bytes for `records_per_s` (a repetition's average): what
// arrives in 25 poll intervals, a power of two between 1 MiB and 512 MiB.
// The margin is for bursts far above the average (a benchmark suite's
// syscall benchmark among slower ones) and for a reader that waits for a CPU
// on a busy host; on the micro-benchmark suite 4 intervals' worth dropped 2 %.
uint64_t TraceBufferBytes(double records_per_s, int poll_interval_ms);

class TraceBuffer {
 public:
  // Creates the ring buffer and the per-CPU counts; throws InfraError.
  explicit TraceBuffer(const TraceSettings& settings);
  ~TraceBuffer();
  TraceBuffer(const TraceBuffer&) = delete;
  TraceBuffer& operator=(const TraceBuffer&) = delete;

  const TraceSettings& settings() const { return settings_; }
  int events_fd() const { return events_fd_; }
  int counts_fd() const { return counts_fd_; }

  // Starts draining the ring buffer on a thread of its own.
  void Start();
  // Stops the thread after a last drain and returns what was read, with the
  // kernel's counts. Call after the probes are detached, so that every
  // record produced was either read or dropped.
  TraceCapture Finish();

 private:
  static int OnRecord(void* ctx, void* data, size_t size);
  void Drain();
  void NameThread(uint32_t tid, uint32_t tgid_hint);

  TraceSettings settings_;
  int events_fd_ = -1;
  int counts_fd_ = -1;
  ring_buffer* ring_ = nullptr;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  TraceCapture capture_;
};

// Before a probe object that includes bpf/trace_events.bpf.h loads: shares
// `trace`'s maps with it and turns its trace paths on, or without a trace
// leaves them off (the verifier then drops them). Throws InfraError naming `probe`.
void ScopeTraceMaps(bpf_map* events, bpf_map* counts, const TraceBuffer* trace, const std::string& probe);

}  // namespace perfgate
