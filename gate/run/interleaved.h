// perfgate ab: a baseline and a candidate variant of one suite (other
// commands, binaries or variables) measured in the same job, interleaved:
// warm-ups of both, then pairs of repetitions in alternating order (AB, BA,
// AB, ...), so drift of the machine during the job — thermal state, other
// tenants, page cache — falls on both sides alike, and a linear trend
// cancels within every two pairs. One set of probes, attached once, measures
// both sides.
#pragma once

#include <functional>

#include "config/suite.h"
#include "metrics/results.h"
#include "run/runner.h"

namespace perfgate {

struct InterleavedRun {
  RunResults baseline;
  RunResults candidate;  // checks not yet evaluated
};

// Adaptive scenarios: called after each pair from `min` on with both sides
// so far; false stops the scenario. Unset: `max` pairs. Set, a scenario of a
// fixed count measured on a busy host becomes adaptive up to
// kBusyHostRoundsFactor times that count (run/schedule.h busy_rounds).
using MorePairs = std::function<bool(const ScenarioResult& candidate, const ScenarioResult& baseline)>;

// `baseline` and `candidate` are the same suite loaded with different
// substitutions: the same scenarios in the same order (InputError otherwise).
// The probes are the candidate's. options.more_repetitions is not used.
InterleavedRun RunInterleaved(const Suite& baseline, const Suite& candidate, const RunOptions& options,
                              const MorePairs& more_pairs);

}  // namespace perfgate
