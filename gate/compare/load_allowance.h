// What a busy host can do to a metric, so that a check measured beside other
// work is decided whenever the load cannot explain what it saw. Other work
// on the CPUs stretches waits and wall time without bound (the workload
// queues behind it), but it adds no instructions, system calls or page
// faults, and it inflates the CPU time the workload is charged only by what
// sharing caches and the memory bus costs: a bounded amount, measured by
// bench/contention_inflation.sh (docs/instruction-counts.md).
#pragma once

#include <string>

namespace perfgate {

enum class LoadInflation {
  kNone,        // counts: the load adds nothing to them
  kLowersOnly,  // rates per second of such counts: the load adds no events and
                // stretches the time they take, so it can lower a rate, never raise it
  kBounded,     // CPU time: by at most `pct`
  kUnbounded,   // wall time, waits, latencies, the workload's own numbers
};

struct LoadAllowance {
  LoadInflation inflation = LoadInflation::kUnbounded;
  double pct = 0;  // kBounded: the most the load adds, in percent
};

// The CPU time a busy host can add to a workload's own, in percent: on the
// 2-CPU CI hosts beside one constant CPU burner the median CPU time of a
// CPU-bound and of a cache-bound loop moved by -2 to +1 %, the worst single
// run by +12 % (bench/contention_inflation.sh); the allowance leaves room
// above that worst case and stays far below the +50 % of a real regression.
inline constexpr double kContentionCpuTimePct = 20;

// The allowance of a check's metric and statistic with its unit.
LoadAllowance AllowanceOf(const std::string& metric, const std::string& statistic, const std::string& unit);

// How far a check's value may go past `bound` before the load can no longer
// explain it: bound × (1 + pct / 100) for an upper bound of a metric the
// load inflates; for a lower bound of a rate, which the load lowers without
// limit, -infinity; the bound itself otherwise.
double BoundTheLoadCanExplain(double bound, bool upper, const LoadAllowance& allowance);

// "contention inflates CPU time by at most 20 %", "the load adds nothing to
// counts", "the load adds no events to a rate, it only stretches its time";
// "" for kUnbounded.
std::string AllowanceText(const LoadAllowance& allowance);

}  // namespace perfgate
