#include "report/perfetto_writer.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"
#include "gate/report/perfetto_trace.pb.h"

namespace perfgate {

namespace {

namespace pb = perfgate::perfetto;

// Process-level tracks (processes, their counters) and their events are on
// this sequence, which declares no thread; each thread with a track has a
// sequence of its own (see ThreadSequence). trace_processor takes the last
// ThreadDescriptor declared on a sequence as the thread of every later
// process-level event of that sequence, so a thread declared here would be
// named as the source of the process's counters.
constexpr uint32_t kProcessSequence = 1;

// Track uuids: the kind of track in the high bits, the pid or tid below.
enum class TrackKind : uint64_t { kProcess = 1, kThread, kPageAllocs, kRunQueueLatency, kPhases, kBlockIo };
uint64_t Uuid(TrackKind kind, uint32_t id) { return static_cast<uint64_t>(kind) << 32 | id; }

std::string ReclaimName(uint32_t kind) {
  switch (kind) {
    case 0:
      return "direct reclaim";
    case 1:
      return "memcg reclaim";
    case 2:
      return "memcg soft-limit reclaim";
    default:
      return "reclaim";
  }
}

std::string OffCpuName(uint32_t reason) {
  switch (reason) {
    case 0:
      return "off-CPU: sleep";
    case 1:
      return "off-CPU: I/O";
    case 2:
      return "off-CPU: preempted";
    default:
      return "off-CPU: other";
  }
}

std::string SyscallSliceName(const TraceCapture& capture, uint32_t nr) {
  if (nr == PG_TRACE_NO_NR) return "syscall";
  auto it = capture.syscall_names.find(nr);
  return "syscall " + (it != capture.syscall_names.end() ? it->second : std::to_string(nr));
}

// One TrackEvent to be written, ordered by time.
struct Item {
  uint64_t ts = 0;
  pb::TrackEvent::Type type = pb::TrackEvent::TYPE_UNSPECIFIED;
  uint64_t track = 0;
  uint64_t name_iid = 0;  // slices
  double value = 0;       // counters
  bool integer = true;    // counters: counter_value, else double_counter_value
  uint32_t sequence = kProcessSequence;
};

struct Slice {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t name_iid = 0;
};

class TraceBuilder {
 public:
  explicit TraceBuilder(const TraceCapture& capture) : capture_(capture) {}

  std::string Build(PerfettoTraceStats& stats) {
    for (const auto& e : capture_.events) Add(e, stats);
    AddPhases();
    AddBlockIo();
    AddPageAllocRates(stats);
    for (auto& [track, slices] : slices_) Nest(track, slices, stats);

    AssignSequences();
    AppendSequenceStarts();
    AppendTracks(stats);
    std::stable_sort(items_.begin(), items_.end(), [](const Item& a, const Item& b) { return a.ts < b.ts; });
    for (const Item& item : items_) AppendEvent(item);
    return std::move(out_);
  }

 private:
  uint64_t Intern(const std::string& name) {
    auto [it, added] = names_.emplace(name, names_.size() + 1);
    return it->second;
  }

  // The process of a thread: what /proc said while it ran, else the record's.
  uint32_t ProcessOf(const pg_trace_event& e) {
    auto it = capture_.threads.find(e.tid);
    uint32_t tgid = it != capture_.threads.end() ? it->second.tgid : (e.tgid != 0 ? e.tgid : e.tid);
    threads_.emplace(e.tid, tgid);
    processes_.insert(tgid);
    return tgid;
  }

  void Add(const pg_trace_event& e, PerfettoTraceStats& stats) {
    switch (e.type) {
      case PG_TRACE_RECLAIM:
      case PG_TRACE_OFFCPU:
      case PG_TRACE_SYSCALL: {
        ProcessOf(e);
        const std::string name = e.type == PG_TRACE_RECLAIM  ? ReclaimName(e.arg)
                                 : e.type == PG_TRACE_OFFCPU ? OffCpuName(e.arg)
                                                             : SyscallSliceName(capture_, e.arg);
        slices_[Uuid(TrackKind::kThread, e.tid)].push_back({e.ts, e.ts + e.value, Intern(name)});
        break;
      }
      case PG_TRACE_PAGE_ALLOC:
        page_pages_[ProcessOf(e)][e.ts / kPageAllocBucketNs] += e.value;
        break;
      case PG_TRACE_BLOCK_IO:
        block_io_.push_back({e.ts, e.ts + e.value, Intern("block I/O " + SizeText(e.arg))});
        break;
      case PG_TRACE_RUNQ_LATENCY: {
        const uint32_t tgid = ProcessOf(e);
        runq_processes_.insert(tgid);
        items_.push_back({e.ts, pb::TrackEvent::TYPE_COUNTER, Uuid(TrackKind::kRunQueueLatency, tgid), 0,
                          static_cast<double>(e.value), true});
        ++stats.counter_values;
        break;
      }
      default:
        return;  // a record type this writer does not know: not shown
    }
    ++stats.records;
  }

  // A workload's phases are its main thread's: a track of their own under
  // that thread (trace_processor gives a child track its parent's thread), so
  // that they never have to be cut to nest with the probes' slices.
  void AddPhases() {
    for (const TracedWorkload& workload : capture_.workloads) {
      if (workload.phases.empty()) continue;
      const uint32_t pid = workload.pid;
      threads_.emplace(pid, pid);
      processes_.insert(pid);
      auto& phases = slices_[Uuid(TrackKind::kPhases, pid)];
      for (const auto& p : workload.phases) phases.push_back({p.begin_ns, p.end_ns, Intern(p.name)});
    }
  }

  // The process block requests go under: the workload's first process, when
  // one workload was traced (with two sides, a request's completion does not
  // say whose it was: the lanes then stand on their own).
  uint32_t BlockIoProcess() const { return capture_.workloads.size() == 1 ? capture_.workloads.front().pid : 0; }

  // Block requests overlap (a disk has a queue), so they are laid out on
  // lanes, each a track where they follow one another: a request takes the
  // first lane free when it is issued. The lanes share a name, which
  // Perfetto's UI shows as one track of stacked slices. They go under the
  // workload's first process (BlockIoProcess): in workload scope a thread of
  // its process tree started them, but completion (where they are recorded)
  // does not say which.
  void AddBlockIo() {
    if (block_io_.empty()) return;
    if (BlockIoProcess() != 0) processes_.insert(BlockIoProcess());
    std::sort(block_io_.begin(), block_io_.end(),
              [](const Slice& a, const Slice& b) { return a.begin != b.begin ? a.begin < b.begin : a.end > b.end; });
    std::vector<uint64_t> lane_ends;
    for (const Slice& s : block_io_) {
      size_t lane = 0;
      while (lane < lane_ends.size() && lane_ends[lane] > s.begin) ++lane;
      if (lane == lane_ends.size()) lane_ends.push_back(0);
      lane_ends[lane] = s.end;
      slices_[Uuid(TrackKind::kBlockIo, static_cast<uint32_t>(lane))].push_back(s);
    }
    block_io_lanes_ = static_cast<uint32_t>(lane_ends.size());
  }

  static std::string SizeText(uint32_t bytes) {
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " B";
  }

  // The sequence of each thread, and of each track and event: a thread's own
  // track and its phases go on the thread's sequence, everything else on the
  // process sequence.
  void AssignSequences() {
    uint32_t next = kProcessSequence + 1;
    for (const auto& [tid, tgid] : threads_) thread_sequences_[tid] = next++;
    for (Item& item : items_) {
      item.sequence = SequenceOf(item.track);
      if (item.type == pb::TrackEvent::TYPE_SLICE_BEGIN) sequence_names_[item.sequence].insert(item.name_iid);
    }
  }

  uint32_t SequenceOf(uint64_t track) const {
    const auto kind = static_cast<TrackKind>(track >> 32);
    if (kind != TrackKind::kThread && kind != TrackKind::kPhases) return kProcessSequence;
    return thread_sequences_.at(static_cast<uint32_t>(track));
  }

  // Pages per bucket become pages/s at the bucket's start, back to 0 after a
  // bucket with no allocations, so that the counter does not hold a rate
  // across an idle stretch.
  void AddPageAllocRates(PerfettoTraceStats& stats) {
    const double bucket_s = static_cast<double>(kPageAllocBucketNs) / 1e9;
    for (const auto& [tgid, buckets] : page_pages_) {
      const uint64_t track = Uuid(TrackKind::kPageAllocs, tgid);
      for (auto it = buckets.begin(); it != buckets.end(); ++it) {
        items_.push_back({it->first * kPageAllocBucketNs, pb::TrackEvent::TYPE_COUNTER, track, 0,
                          static_cast<double>(it->second) / bucket_s, false});
        ++stats.counter_values;
        auto next = std::next(it);
        if (next == buckets.end() || next->first != it->first + 1) {
          items_.push_back({(it->first + 1) * kPageAllocBucketNs, pb::TrackEvent::TYPE_COUNTER, track, 0, 0, false});
          ++stats.counter_values;
        }
      }
    }
  }

  // Slices of one track must nest: longest first among those that start
  // together, and one that outlasts the slice it started in ends with it.
  void Nest(uint64_t track, std::vector<Slice>& slices, PerfettoTraceStats& stats) {
    std::sort(slices.begin(), slices.end(),
              [](const Slice& a, const Slice& b) { return a.begin != b.begin ? a.begin < b.begin : a.end > b.end; });
    std::vector<uint64_t> open_ends;
    auto close_until = [&](uint64_t t) {
      while (!open_ends.empty() && open_ends.back() <= t) {
        items_.push_back({open_ends.back(), pb::TrackEvent::TYPE_SLICE_END, track, 0, 0, true});
        open_ends.pop_back();
      }
    };
    for (Slice s : slices) {
      close_until(s.begin);
      if (!open_ends.empty() && s.end > open_ends.back()) {
        s.end = open_ends.back();
        ++stats.clipped_slices;
      }
      items_.push_back({s.begin, pb::TrackEvent::TYPE_SLICE_BEGIN, track, s.name_iid, 0, true});
      open_ends.push_back(s.end);
      ++stats.slices;
    }
    close_until(UINT64_MAX);
  }

  void AppendPacket(const pb::TracePacket& packet) {
    // Trace.packet is field 1, length-delimited: the file is the packets one
    // after another, never the whole Trace message in memory.
    out_.push_back(static_cast<char>(1 << 3 | 2));
    uint64_t size = packet.ByteSizeLong();
    do {
      uint8_t byte = size & 0x7f;
      size >>= 7;
      out_.push_back(static_cast<char>(size != 0 ? byte | 0x80 : byte));
    } while (size != 0);
    packet.AppendToString(&out_);
  }

  static pb::TracePacket NewPacket(uint32_t sequence) {
    pb::TracePacket packet;
    packet.set_trusted_packet_sequence_id(sequence);
    return packet;
  }

  // The first packet of every sequence clears its incremental state and
  // carries the event names its events use (interning is per sequence); the
  // process sequence's also lines the clocks up.
  void AppendSequenceStarts() {
    std::map<uint64_t, const std::string*> by_iid;
    for (const auto& [name, iid] : names_) by_iid[iid] = &name;
    auto start = [&](uint32_t sequence) {
      pb::TracePacket packet = NewPacket(sequence);
      packet.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
      for (uint64_t iid : sequence_names_[sequence]) {
        auto* n = packet.mutable_interned_data()->add_event_names();
        n->set_iid(iid);
        n->set_name(*by_iid.at(iid));
      }
      return packet;
    };
    pb::TracePacket first = start(kProcessSequence);
    auto* snapshot = first.mutable_clock_snapshot();
    auto* mono = snapshot->add_clocks();
    mono->set_clock_id(pb::BUILTIN_CLOCK_MONOTONIC);
    mono->set_timestamp(capture_.monotonic_ns);
    auto* boot = snapshot->add_clocks();
    boot->set_clock_id(pb::BUILTIN_CLOCK_BOOTTIME);
    boot->set_timestamp(capture_.boottime_ns);
    AppendPacket(first);
    for (const auto& [tid, sequence] : thread_sequences_) AppendPacket(start(sequence));
  }

  void AppendTrack(uint64_t uuid, uint64_t parent, const std::string& name, const pb::CounterDescriptor::Unit* unit,
                   PerfettoTraceStats& stats) {
    pb::TracePacket packet = NewPacket(SequenceOf(uuid));
    auto* track = packet.mutable_track_descriptor();
    track->set_uuid(uuid);
    if (parent != 0) track->set_parent_uuid(parent);
    track->set_name(name);
    if (unit != nullptr) track->mutable_counter()->set_unit(*unit);
    AppendPacket(packet);
    ++stats.tracks;
  }

  void AppendTracks(PerfettoTraceStats& stats) {
    for (uint32_t tgid : processes_) {
      pb::TracePacket packet = NewPacket(kProcessSequence);
      auto* track = packet.mutable_track_descriptor();
      track->set_uuid(Uuid(TrackKind::kProcess, tgid));
      track->mutable_process()->set_pid(static_cast<int32_t>(tgid));
      auto name = capture_.processes.find(tgid);
      track->mutable_process()->set_process_name(name != capture_.processes.end() ? name->second
                                                                                  : "process " + std::to_string(tgid));
      AppendPacket(packet);
      ++stats.tracks;
    }
    for (const auto& [tid, tgid] : threads_) {
      pb::TracePacket packet = NewPacket(thread_sequences_.at(tid));
      auto* track = packet.mutable_track_descriptor();
      // Perfetto puts a thread under its process by the descriptor's pid.
      track->set_uuid(Uuid(TrackKind::kThread, tid));
      track->mutable_thread()->set_pid(static_cast<int32_t>(tgid));
      track->mutable_thread()->set_tid(static_cast<int64_t>(tid));
      track->mutable_thread()->set_thread_name(ThreadName(tid, tgid));
      AppendPacket(packet);
      ++stats.tracks;
    }
    const auto count = pb::CounterDescriptor::UNIT_COUNT;
    const auto ns = pb::CounterDescriptor::UNIT_TIME_NS;
    for (const auto& [tgid, buckets] : page_pages_)
      AppendTrack(Uuid(TrackKind::kPageAllocs, tgid), Uuid(TrackKind::kProcess, tgid), "page allocations/s", &count,
                  stats);
    for (uint32_t tgid : runq_processes_)
      AppendTrack(Uuid(TrackKind::kRunQueueLatency, tgid), Uuid(TrackKind::kProcess, tgid), "run-queue latency", &ns,
                  stats);
    for (uint32_t lane = 0; lane < block_io_lanes_; ++lane) {
      AppendTrack(Uuid(TrackKind::kBlockIo, lane),
                  BlockIoProcess() != 0 ? Uuid(TrackKind::kProcess, BlockIoProcess()) : 0, "block I/O", nullptr, stats);
    }
    for (const TracedWorkload& workload : capture_.workloads) {
      if (!workload.phases.empty())
        AppendTrack(Uuid(TrackKind::kPhases, workload.pid), Uuid(TrackKind::kThread, workload.pid), "phases", nullptr,
                    stats);
    }
  }

  // A main thread known only from its phases is named after its process.
  std::string ThreadName(uint32_t tid, uint32_t tgid) const {
    if (auto thread = capture_.threads.find(tid); thread != capture_.threads.end()) return thread->second.name;
    if (auto process = capture_.processes.find(tgid); tid == tgid && process != capture_.processes.end())
      return process->second;
    return "thread " + std::to_string(tid);
  }

  void AppendEvent(const Item& item) {
    pb::TracePacket packet = NewPacket(item.sequence);
    packet.set_timestamp(item.ts);
    packet.set_timestamp_clock_id(pb::BUILTIN_CLOCK_MONOTONIC);
    packet.set_sequence_flags(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    auto* event = packet.mutable_track_event();
    event->set_type(item.type);
    event->set_track_uuid(item.track);
    if (item.type == pb::TrackEvent::TYPE_SLICE_BEGIN) event->set_name_iid(item.name_iid);
    if (item.type == pb::TrackEvent::TYPE_COUNTER) {
      if (item.integer) {
        event->set_counter_value(static_cast<int64_t>(item.value));
      } else {
        event->set_double_counter_value(item.value);
      }
    }
    AppendPacket(packet);
  }

  const TraceCapture& capture_;
  std::map<std::string, uint64_t> names_;
  std::map<uint32_t, uint32_t> threads_;  // tid -> tgid, of the threads with records
  std::set<uint32_t> processes_;
  std::set<uint32_t> runq_processes_;
  std::map<uint32_t, std::map<uint64_t, uint64_t>> page_pages_;  // tgid -> bucket -> pages
  std::map<uint64_t, std::vector<Slice>> slices_;                // by track
  std::vector<Slice> block_io_;                                  // requests, before they are laid out on lanes
  uint32_t block_io_lanes_ = 0;
  std::map<uint32_t, uint32_t> thread_sequences_;          // tid -> its sequence
  std::map<uint32_t, std::set<uint64_t>> sequence_names_;  // sequence -> iids its events use
  std::vector<Item> items_;
  std::string out_;
};

}  // namespace

std::string PerfettoTrace(const TraceCapture& capture, PerfettoTraceStats* stats) {
  PerfettoTraceStats local;
  std::string out = TraceBuilder(capture).Build(stats != nullptr ? *stats : local);
  return out;
}

PerfettoTraceStats WritePerfettoTrace(const TraceCapture& capture, const std::string& file) {
  PerfettoTraceStats stats;
  WriteFileAtomic(file, PerfettoTrace(capture, &stats));
  return stats;
}

}  // namespace perfgate
