#include "probes/trace_buffer.h"

#include <bpf/bpf.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <string>

#include "base/error.h"
#include "probes/features.h"
#include "probes/percpu.h"

namespace perfgate {

namespace {

uint64_t ClockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t RoundUpToPowerOfTwo(uint64_t n) {
  uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// "Name:" and "Tgid:" of /proc/<tid>/status; /proc/<tid> exists for every
// thread, not only for process leaders.
bool ReadThreadStatus(uint32_t tid, TraceThread& out) {
  std::ifstream in("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  bool named = false, grouped = false;
  while ((!named || !grouped) && std::getline(in, line)) {
    if (line.rfind("Name:", 0) == 0) {
      const size_t start = line.find_first_not_of(" \t", 5);
      out.name = start == std::string::npos ? std::string() : line.substr(start);
      named = true;
    } else if (line.rfind("Tgid:", 0) == 0) {
      out.tgid = static_cast<uint32_t>(std::strtoul(line.c_str() + 5, nullptr, 10));
      grouped = true;
    }
  }
  return named && grouped;
}

}  // namespace

uint64_t TraceBufferBytes(double records_per_s, int poll_interval_ms) {
  constexpr uint64_t kMin = 1 << 20, kMax = uint64_t{512} << 20;
  constexpr int kPolls = 25;
  const double bytes = std::max(0.0, records_per_s) * kTraceRecordBytes * kPolls * poll_interval_ms / 1000.0;
  if (bytes >= static_cast<double>(kMax)) return kMax;
  return std::clamp(RoundUpToPowerOfTwo(static_cast<uint64_t>(bytes)), kMin, kMax);
}

TraceBuffer::TraceBuffer(const TraceSettings& settings) : settings_(settings) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  settings_.buffer_bytes = RoundUpToPowerOfTwo(std::max(settings_.buffer_bytes, page));
  if (settings_.poll_interval_ms <= 0) settings_.poll_interval_ms = 10;
  events_fd_ = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "pg_trace_events", 0, 0,
                              static_cast<uint32_t>(settings_.buffer_bytes), nullptr);
  if (events_fd_ < 0)
    throw InfraError("trace: create a ring buffer of " + std::to_string(settings_.buffer_bytes) +
                     " bytes: " + ErrnoText(errno));
  counts_fd_ = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "pg_trace_counts", sizeof(uint32_t), sizeof(pg_trace_counts),
                              1, nullptr);
  if (counts_fd_ < 0) {
    const int err = errno;
    close(events_fd_);
    throw InfraError("trace: create the drop counters: " + ErrnoText(err));
  }
  capture_.buffer_bytes = settings_.buffer_bytes;
}

TraceBuffer::~TraceBuffer() {
  if (thread_.joinable()) {
    stop_.store(true);
    thread_.join();
  }
  if (ring_ != nullptr) ring_buffer__free(ring_);
  if (counts_fd_ >= 0) close(counts_fd_);
  if (events_fd_ >= 0) close(events_fd_);
}

void TraceBuffer::Start() {
  ring_ = ring_buffer__new(events_fd_, &TraceBuffer::OnRecord, this, nullptr);
  if (ring_ == nullptr) throw InfraError("trace: open the ring buffer: " + ErrnoText(errno));
  capture_.monotonic_ns = ClockNs(CLOCK_MONOTONIC);
  capture_.boottime_ns = ClockNs(CLOCK_BOOTTIME);
  stop_.store(false);
  // Polled on a timer: the records are written without waking the reader,
  // since a wake-up per record costs the workload more than the record.
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      Drain();
      std::this_thread::sleep_for(std::chrono::milliseconds(settings_.poll_interval_ms));
    }
  });
}

void TraceBuffer::Drain() {
  if (ring_ != nullptr) ring_buffer__consume(ring_);
}

int TraceBuffer::OnRecord(void* ctx, void* data, size_t size) {
  auto* self = static_cast<TraceBuffer*>(ctx);
  if (size < sizeof(pg_trace_event)) return 0;
  const auto* event = static_cast<const pg_trace_event*>(data);
  self->capture_.events.push_back(*event);
  if (!self->capture_.threads.count(event->tid)) self->NameThread(event->tid, event->tgid);
  return 0;
}

// Names are read when a thread is first seen, while it most likely still
// runs; a thread gone by then keeps its id as its name.
void TraceBuffer::NameThread(uint32_t tid, uint32_t tgid_hint) {
  TraceThread thread;
  if (!ReadThreadStatus(tid, thread) || (tgid_hint != 0 && thread.tgid != tgid_hint)) {
    thread.tgid = tgid_hint != 0 ? tgid_hint : tid;
    thread.name = "thread " + std::to_string(tid);
  }
  if (!capture_.processes.count(thread.tgid)) {
    TraceThread leader;
    capture_.processes[thread.tgid] = ReadThreadStatus(thread.tgid, leader) && leader.tgid == thread.tgid
                                          ? leader.name
                                          : "process " + std::to_string(thread.tgid);
  }
  capture_.threads[tid] = std::move(thread);
}

TraceCapture TraceBuffer::Finish() {
  if (thread_.joinable()) {
    stop_.store(true);
    thread_.join();
  }
  Drain();
  const auto counts = ReadPerCpuTotal<pg_trace_counts>(counts_fd_, "trace");
  capture_.produced = counts.produced;
  capture_.dropped = counts.dropped;
  TraceCapture out = std::move(capture_);
  capture_ = TraceCapture{};
  return out;
}

void ScopeTraceMaps(bpf_map* events, bpf_map* counts, const TraceBuffer* trace, const std::string& probe) {
  int err = 0;
  if (trace != nullptr) {
    err = bpf_map__reuse_fd(events, trace->events_fd());
    if (err == 0) err = bpf_map__reuse_fd(counts, trace->counts_fd());
  } else if (static const bool ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) == 1; ringbuf) {
    // The smallest ring buffer there is: one page.
    err = bpf_map__set_max_entries(events, static_cast<uint32_t>(sysconf(_SC_PAGESIZE)));
  } else {
    // A kernel without ring buffers (before 5.8) can still load an untraced
    // object: its trace paths are unreachable, so the verifier never checks
    // them against the map, which only has to exist.
    err = bpf_map__set_type(events, BPF_MAP_TYPE_ARRAY);
    if (err == 0) err = bpf_map__set_key_size(events, sizeof(uint32_t));
    if (err == 0) err = bpf_map__set_value_size(events, sizeof(uint32_t));
    if (err == 0) err = bpf_map__set_max_entries(events, 1);
  }
  if (err != 0) throw InfraError("probe " + probe + ": share the trace ring buffer: " + ErrnoText(-err));
}

}  // namespace perfgate
