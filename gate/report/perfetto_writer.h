// The Perfetto reporter: a traced repetition (metrics/trace_capture.h) as a
// protobuf TrackEvent trace that ui.perfetto.dev and trace_processor open.
#pragma once

#include <cstdint>
#include <string>

#include "metrics/trace_capture.h"

namespace perfgate {

struct PerfettoTraceStats {
  uint64_t records = 0;         // capture records the trace shows (each in a slice or a counter)
  uint64_t slices = 0;          // slices written (phases included)
  uint64_t clipped_slices = 0;  // slices cut short to nest inside the one they started in
  uint64_t counter_values = 0;
  uint64_t tracks = 0;
};

// The serialized trace. Process tracks hold their threads' tracks (slices of
// reclaim, long off-CPU waits and slow syscalls), a counter of page
// allocations per second and one of run-queue latency, the workload's block
// requests (issue to completion, on lanes named "block I/O"); its phases
// are a track under its main thread. Each thread's track and events are on a
// packet sequence of their own, the process-level ones on a sequence that
// declares no thread. Timestamps are CLOCK_MONOTONIC, lined up with
// CLOCK_BOOTTIME by a clock snapshot.
std::string PerfettoTrace(const TraceCapture& capture, PerfettoTraceStats* stats = nullptr);

// Writes PerfettoTrace(capture) to `file` (atomically); throws InfraError naming it.
PerfettoTraceStats WritePerfettoTrace(const TraceCapture& capture, const std::string& file);

// Bucket width of the page allocation rate counter.
inline constexpr uint64_t kPageAllocBucketNs = 10'000'000;

}  // namespace perfgate
