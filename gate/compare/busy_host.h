// How busy the host was while a check's sides ran: other work's CPUs then
// and now, and the CPUs the candidate had to spare (stored baselines only;
// interleaved sides shared the load of the moment).
#pragma once

#include <optional>
#include <utility>

#include "compare/check_values.h"

namespace perfgate {

// A timing regression measured while other work kept this many more CPUs busy
// than when the baseline was recorded is not attributed to the change: on
// the 2-CPU CI hosts a parallel build next to the workload alone slows it by
// 30-80 %. A quarter CPU is well above /proc/stat's tick resolution.
inline constexpr double kBusierHostCpus = 0.25;

// Idle CPUs per candidate repetition, their median: with none to spare, the
// workload queued behind other work and its times say nothing about the change.
std::optional<double> SpareCpus(const Repetitions& candidate, int cpu_count);

// The median CPUs of other work on the host during the candidate's and the
// baseline's repetitions, when both recorded it.
std::optional<std::pair<double, double>> HostOtherCpus(const Repetitions& candidate, const ScenarioResult* baseline);

}  // namespace perfgate
