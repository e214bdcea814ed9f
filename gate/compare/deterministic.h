// Checks on near-deterministic metrics: instruction counts repeat to a few
// parts per million, where times vary by percents. The rank tests cannot use
// that: their smallest p depends only on the number of repetitions (3 a side
// cannot go below 0.05), so a 0.5 % change would need as many repetitions as
// a noisy time does. Such a check is decided by an interval of the change
// built from the extremes of both sides instead, once the repetitions have
// shown that they are as repeatable as claimed; a sudden spread (a workload
// whose path depends on timing, an address-dependent hash) sends the check
// back to the rank tests, and the message says so.
#pragma once

#include <string>
#include <vector>

#include "metrics/results.h"

namespace perfgate {

// Metrics declared near-deterministic: instructions counted by Valgrind
// (instr.*) or by the PMU (cpu.instructions and its .user and .kernel parts;
// metrics/metric.h IsInstructionCount).
bool IsNearDeterministic(const std::string& metric);

// Most a side's repetitions may spread ((max - min) / median) for the
// interval to decide: 100 times the spread of instruction counts of a
// program run twice (ASLR, environment size), and 5 to 50 times below the
// spread of any timing on the CI hosts.
inline constexpr double kDeterministicSpreadPct = 0.1;
// Fewest repetitions a side needs: one value shows no spread at all.
inline constexpr size_t kDeterministicMinRepetitions = 2;

// Decides `check` (its baseline and candidate values and medians filled in)
// by the interval of the relative change from each side's extremes, each
// widened by its own spread again (an unseen repetition may lie as far
// beyond the range as the range is wide): a regression when all of it lies
// beyond the threshold, a pass when none of it does, an improvement when all
// of it lies beyond the threshold the good way, inconclusive otherwise.
// False, with `fallback` saying why, when the values are not repeatable
// enough: the caller decides with the rank tests and adds `fallback` to the
// message.
bool DecideNearDeterministic(CheckResult& check, std::string& fallback);

}  // namespace perfgate
