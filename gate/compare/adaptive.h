// Adaptive repetitions (suite `repetitions: {min, max}`): when to look at the
// verdicts, what level each look may reject at, and whether to go on.
//
// Looks: after `min` candidate repetitions, then at up to kMaxLooks - 1 more
// counts spread evenly up to `max` (fewer looks keep more of the error for
// the last one). The error is spent over the looks with Lan–DeMets'
// O'Brien–Fleming-type function (stats/sequential.h): a check's one-sided
// p-value at the look where its scenario stopped is compared with that look's
// nominal level instead of alpha, so peeking does not raise the false-alarm
// rate. Information grows with 1/(1/n_baseline + 1/n_candidate): against a
// stored baseline only the candidate grows; in `perfgate ab` both sides do.
//
// Going on: after a look, the scenario runs more repetitions while some
// regression check is inconclusive and could still become a regression by
// `max`: its conditional power — the chance that the estimate at `max`
// clears both the significance boundary and the threshold's interval bound,
// if the change seen so far were the true one — is at least 10 %. Checks
// that passed, or whose estimate sits well inside the threshold, stop the
// spending of repetitions: an A/A run usually stops at `min`. A fixed count
// that a busy host made adaptive (AdaptiveRepetitions::busy_host) takes the
// change seen so far plus kBusyHostOptimism standard errors as the true one:
// the pairs were added because the load made the early estimates noisy, and
// one of them below the threshold must not end the pairs that were added
// to resolve it. Stopping early never raises the error rate (the levels are
// spent by information, whatever the reason to stop).
#pragma once

#include <vector>

#include "compare/compare.h"
#include "metrics/results.h"

namespace perfgate {

inline constexpr int kMaxLooks = 5;
inline constexpr double kMinConditionalPower = 0.20;
// Simulated (VerdictSimulation.BusyHostExtendsFixedPairsAndCatchesATenPercentShift):
// with the change seen so far, a busy host's extension caught a +10 % shift
// at T = 5 % in 68 % of runs; with one standard error more, 97 %, where an
// A/A run measured 11 pairs instead of 7.6 (docs/verdicts.md).
inline constexpr double kBusyHostOptimism = 1.0;

// Candidate repetition counts at which the verdicts are examined, ascending,
// from min to max.
std::vector<int> AdaptiveLooks(int min, int max);

// The nominal level of the look where a scenario stopped, over the fixed
// test's level `alpha`: in (0, 1], 1 for a fixed repetition count.
// `baseline_n` and `candidate_n` are the value counts at the stop.
double SequentialLevelScale(const AdaptiveRepetitions& plan, size_t baseline_n, size_t candidate_n, double alpha);

// After a repetition of an adaptive scenario: true when the runner should
// measure another. Between looks, and without a baseline (there is nothing
// to decide yet; the repetitions may become one), it goes on until max.
// `family_size` is the number of regression checks in the whole run.
bool NeedsMoreRepetitions(const ScenarioResult& so_far, const ScenarioResult* baseline, const Environment& environment,
                          const CompareOptions& options, size_t family_size);

}  // namespace perfgate
