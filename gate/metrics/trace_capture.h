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

struct TraceCapture {
  std::vector<pg_trace_event> events;             // as read from the ring buffer
  std::map<uint32_t, TraceThread> threads;        // by thread id
  std::map<uint32_t, std::string> processes;      // name by process id
  uint32_t workload_pid = 0;                      // the workload's first process (its phases go there)
  std::vector<WorkloadPhase> phases;              // what the workload reported of itself
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
