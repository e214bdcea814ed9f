// What one traced repetition recorded (`perfgate run --trace`): the probes'
// trace records, who the threads were, the workload's own phases, and the
// counts that show whether anything was lost. The Perfetto writer
// (report/perfetto_writer.h) turns it into a trace file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "metrics/results.h"
#include "trace_events.h"

namespace perfgate {

struct TraceThread {
  uint32_t tgid = 0;
  std::string name;  // comm, read from /proc while the thread was alive
};

// A workload the capture traced: its first process (where its phases go)
// and what it reported of itself.
struct TracedWorkload {
  uint32_t pid = 0;
  std::vector<WorkloadPhase> phases;
};

struct TraceCapture {
  std::vector<pg_trace_event> events;         // as read from the ring buffer
  std::map<uint32_t, TraceThread> threads;    // by thread id
  std::map<uint32_t, std::string> processes;  // name by process id
  // The workloads traced, in the order they ran: one for `run --trace`; for
  // `ab --trace` the baseline's, then the candidate's, their processes named
  // after their side ("baseline: pg-smoke").
  std::vector<TracedWorkload> workloads;
  std::map<uint32_t, std::string> syscall_names;  // of the syscall numbers in the records
  uint64_t produced = 0;                          // records the probes wrote or tried to (kernel count)
  uint64_t dropped = 0;                           // records the ring buffer had no room for (kernel count)
  uint64_t buffer_bytes = 0;                      // ring buffer size
  // One reading of CLOCK_MONOTONIC (the records' clock) and CLOCK_BOOTTIME
  // taken together, so that a trace viewer can line them up.
  uint64_t monotonic_ns = 0;
  uint64_t boottime_ns = 0;
};

}  // namespace perfgate
