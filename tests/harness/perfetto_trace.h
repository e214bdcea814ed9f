// A Perfetto trace decoded with protobuf and checked against the rules
// trace_processor reads it by, so that a trace that parses but shows the
// wrong thing (an event on a track nobody declared, a slice end without its
// begin, a counter value on a slice track, a process-level event that
// trace_processor would pin on a thread) fails a test instead of a viewer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gate/report/perfetto_trace.pb.h"

namespace perfgate::testing {

struct TraceSlice {
  uint64_t track = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
  std::string name;
  int depth = 0;  // 0 for a slice no other slice of its track encloses
};

struct DecodedTrace {
  std::map<uint64_t, perfetto::TrackDescriptor> tracks;                   // by uuid
  std::map<uint64_t, uint32_t> track_sequence;                            // uuid -> sequence that declared it
  std::vector<TraceSlice> slices;                                         // completed, in order of their ends
  std::map<uint64_t, std::vector<std::pair<uint64_t, double>>> counters;  // track -> (time, value)
  std::set<uint32_t> clocks;                                              // of the clock snapshots
  std::vector<std::string> problems;                                      // empty for a well-formed trace

  // The thread descriptor a track belongs to: its own, else its nearest ancestor's.
  const perfetto::ThreadDescriptor* ThreadOf(uint64_t uuid) const {
    for (int hops = 0; hops < 64; ++hops) {
      auto it = tracks.find(uuid);
      if (it == tracks.end()) return nullptr;
      if (it->second.has_thread()) return &it->second.thread();
      if (!it->second.has_parent_uuid()) return nullptr;
      uuid = it->second.parent_uuid();
    }
    return nullptr;
  }

  // The process a track belongs to: a thread's pid, else the nearest process descriptor's.
  std::optional<int32_t> ProcessOf(uint64_t uuid) const {
    if (const auto* thread = ThreadOf(uuid)) return thread->pid();
    for (int hops = 0; hops < 64; ++hops) {
      auto it = tracks.find(uuid);
      if (it == tracks.end()) return std::nullopt;
      if (it->second.has_process()) return it->second.process().pid();
      if (!it->second.has_parent_uuid()) return std::nullopt;
      uuid = it->second.parent_uuid();
    }
    return std::nullopt;
  }

  std::vector<TraceSlice> SlicesOn(uint64_t track) const {
    std::vector<TraceSlice> out;
    for (const auto& s : slices) {
      if (s.track == track) out.push_back(s);
    }
    return out;
  }
};

inline DecodedTrace DecodePerfettoTrace(const std::string& bytes) {
  namespace pb = perfgate::perfetto;
  DecodedTrace d;
  pb::Trace trace;
  if (!trace.ParseFromString(bytes)) {
    d.problems.push_back("not a Trace message");
    return d;
  }
  struct Open {
    uint64_t begin;
    std::string name;
  };
  struct SequenceState {
    bool cleared = false;
    std::map<uint64_t, std::string> names;  // interned, per sequence as trace_processor keeps them
    std::optional<int64_t> thread;          // tid of the ThreadDescriptor declared on it
  };
  std::map<uint32_t, SequenceState> sequences;
  std::map<uint64_t, std::vector<Open>> open;  // per track
  std::map<uint64_t, uint64_t> last_ts;        // per track
  for (int i = 0; i < trace.packet_size(); ++i) {
    const pb::TracePacket& p = trace.packet(i);
    const std::string at = "packet " + std::to_string(i) + ": ";
    if (!p.has_trusted_packet_sequence_id() || p.trusted_packet_sequence_id() == 0) {
      d.problems.push_back(at + "no trusted_packet_sequence_id");
      continue;
    }
    const uint32_t seq_id = p.trusted_packet_sequence_id();
    SequenceState& seq = sequences[seq_id];
    if (p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      seq.cleared = true;
      seq.names.clear();
    }
    if ((p.sequence_flags() & pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE) && !seq.cleared)
      d.problems.push_back(at + "needs incremental state its sequence never cleared");
    for (const auto& n : p.interned_data().event_names()) seq.names[n.iid()] = n.name();
    if (p.has_clock_snapshot()) {
      for (const auto& c : p.clock_snapshot().clocks()) d.clocks.insert(c.clock_id());
    }

    if (p.has_track_descriptor()) {
      const pb::TrackDescriptor& t = p.track_descriptor();
      if (t.uuid() == 0) d.problems.push_back(at + "track without a uuid");
      if (d.tracks.count(t.uuid())) d.problems.push_back(at + "track " + std::to_string(t.uuid()) + " declared twice");
      if (t.has_parent_uuid() && !d.tracks.count(t.parent_uuid()))
        d.problems.push_back(at + "track " + std::to_string(t.uuid()) + " names a parent not declared before it");
      if (t.has_process() && !t.process().has_pid()) d.problems.push_back(at + "process track without a pid");
      if (t.has_thread()) {
        if (!t.thread().has_pid() || !t.thread().has_tid()) d.problems.push_back(at + "thread track without pid/tid");
        if (seq.thread && *seq.thread != t.thread().tid())
          d.problems.push_back(at + "threads " + std::to_string(*seq.thread) + " and " +
                               std::to_string(t.thread().tid()) + " declared on sequence " + std::to_string(seq_id));
        seq.thread = t.thread().tid();
      }
      d.tracks[t.uuid()] = t;
      d.track_sequence[t.uuid()] = seq_id;
    }

    if (!p.has_track_event()) continue;
    const pb::TrackEvent& e = p.track_event();
    const uint64_t track = e.track_uuid();
    auto declared = d.tracks.find(track);
    if (declared == d.tracks.end()) {
      d.problems.push_back(at + "event on track " + std::to_string(track) + " before its descriptor");
      continue;
    }
    if (!p.has_timestamp()) d.problems.push_back(at + "event without a timestamp");
    if (p.timestamp() < last_ts[track]) d.problems.push_back(at + "event earlier than the one before it on its track");
    last_ts[track] = p.timestamp();
    // trace_processor attaches the thread declared on an event's sequence to
    // events of tracks that are not that thread's.
    if (seq.thread) {
      const pb::ThreadDescriptor* owner = d.ThreadOf(track);
      if (owner == nullptr || owner->tid() != *seq.thread)
        d.problems.push_back(at + "event on track " + std::to_string(track) + " on the sequence of thread " +
                             std::to_string(*seq.thread) + ", which is not its thread");
    }
    const bool counter_track = declared->second.has_counter();
    switch (e.type()) {
      case pb::TrackEvent::TYPE_SLICE_BEGIN: {
        if (counter_track) d.problems.push_back(at + "slice on counter track " + std::to_string(track));
        std::string name = e.name();
        if (e.has_name_iid()) {
          auto n = seq.names.find(e.name_iid());
          if (n == seq.names.end()) {
            d.problems.push_back(at + "name iid " + std::to_string(e.name_iid()) + " not interned on its sequence");
          } else {
            name = n->second;
          }
        }
        open[track].push_back({p.timestamp(), name});
        break;
      }
      case pb::TrackEvent::TYPE_SLICE_END: {
        auto& stack = open[track];
        if (stack.empty()) {
          d.problems.push_back(at + "slice end without a begin on track " + std::to_string(track));
          break;
        }
        d.slices.push_back(
            {track, stack.back().begin, p.timestamp(), stack.back().name, static_cast<int>(stack.size()) - 1});
        stack.pop_back();
        break;
      }
      case pb::TrackEvent::TYPE_COUNTER:
        if (!counter_track) d.problems.push_back(at + "counter value on track " + std::to_string(track));
        if (!e.has_counter_value() && !e.has_double_counter_value())
          d.problems.push_back(at + "counter event without a value");
        d.counters[track].emplace_back(p.timestamp(), e.has_double_counter_value()
                                                          ? e.double_counter_value()
                                                          : static_cast<double>(e.counter_value()));
        break;
      default:
        d.problems.push_back(at + "event of type " + std::to_string(e.type()));
    }
  }
  for (const auto& [track, stack] : open) {
    if (!stack.empty()) d.problems.push_back("track " + std::to_string(track) + " ends with a slice open");
  }
  return d;
}

}  // namespace perfgate::testing
