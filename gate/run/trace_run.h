// `perfgate run --trace`: one extra repetition of the scenario with the worst
// check, run after the measured ones under the same probes with their trace
// paths on, its records drained from a ring buffer sized from the measured
// repetitions' event rates.
//
// Why an extra repetition rather than keeping the worst measured one: the
// trace paths cost the workload time (a ring-buffer record per slow syscall,
// wait, page allocation and run-queue wait, and timing every syscall), so
// tracing a measured repetition would change the numbers the verdicts rest
// on; and which repetition is "worst" is only known once every repetition has
// been compared with the baseline.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/suite.h"
#include "metrics/results.h"
#include "metrics/trace_capture.h"
#include "probes/trace_buffer.h"
#include "run/runner.h"

namespace perfgate {

struct TraceTarget {
  size_t scenario = 0;  // index into RunResults::scenarios
  std::string reason;   // "workload.wall_time: regression (+12.3 %)"
};

// The scenario to trace: the first with a failed check (regression or budget
// exceeded), else the one whose check changed most in its bad direction,
// else the first that ran. nullopt when no scenario ran.
std::optional<TraceTarget> WorstScenario(const RunResults& results);

// Trace records per second the measured repetitions imply, at most (the
// busiest repetition): slow syscalls, long off-CPU waits, page allocations,
// run-queue waits, block requests and reclaims, from the probes' own metrics.
double ExpectedTraceRate(const ScenarioResult& measured, const TraceSettings& settings);

// Runs the traced repetition of `spec`. Throws InfraError when the probes
// cannot attach or the workload fails.
TraceCapture TraceRepetition(const ScenarioSpec& spec, const RunOptions& options, const TraceSettings& settings);

// The traced repetitions of both sides of `perfgate ab --trace` (side name,
// capture; in the order they ran) as one capture: every record, each
// process named after its side ("baseline: pg-smoke"), both workloads and
// their phases; the loss counts summed.
TraceCapture MergeTraceSides(std::vector<std::pair<std::string, TraceCapture>> sides);

}  // namespace perfgate
