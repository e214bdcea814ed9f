// Confirmation before failing (perfgate ab). A neighbour's burst or a
// moment of drift can make one round of interleaved pairs look like a
// regression; a real regression shows again. So the first round flags
// regressions at a screening level (CompareOptions::screen_alpha, 5 %
// family-wise), the runner measures fresh interleaved pairs of just the
// flagged checks' scenarios, and a flagged check stays a regression only if
// the fresh pairs alone confirm it, at level alpha / screen_alpha with Holm
// over the flagged checks. The rounds' data are independent, so a check that
// did not change is confirmed with probability at most
// screen_alpha * (alpha / screen_alpha) = alpha: the family-wise rate the
// run promises. A check the fresh pairs do not confirm takes their verdict
// (pass, or inconclusive), and says what the first round had shown.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "metrics/results.h"

namespace perfgate {

// The default screening level of perfgate ab: the first round flags at 5 %,
// the confirmation decides at 1 % / 5 % = 20 %.
inline constexpr double kScreenAlpha = 0.05;

// Scenario name -> indices of its checks that the first round flagged as
// regressions (in run order of the scenarios).
std::map<std::string, std::vector<size_t>> ChecksToConfirm(const RunResults& run);

// The options a confirmation round is decided with: `options` (the first
// round's, screen_alpha set) at level alpha / screen_alpha, unscreened.
CompareOptions ConfirmationOptions(const CompareOptions& options);

// After a pair of a confirmation round that the host's load made adaptive
// (Schedule::busy_rounds): true while one of `flagged` (indices into the
// scenario's checks) could still be confirmed. `family_size`: the flagged
// checks of the whole run.
bool ConfirmationNeedsMore(const ScenarioResult& so_far, const ScenarioResult& baseline,
                           const std::vector<size_t>& flagged, const Environment& environment,
                           const CompareOptions& options, size_t family_size);

// Decides the flagged checks of `run` from the fresh pairs: `again` and
// `again_baseline` map scenario name -> the candidate's and the baseline's
// side of the confirmation round (the scenarios ChecksToConfirm named).
// `options` are the first round's (screen_alpha set); `seconds` maps a
// scenario to what its confirmation took. A scenario missing from `again`
// (its confirmation could not run) leaves its checks inconclusive, saying why.
void ApplyConfirmation(RunResults& run, const std::map<std::string, ScenarioResult>& again,
                       const std::map<std::string, ScenarioResult>& again_baseline, const CompareOptions& options,
                       const std::map<std::string, double>& seconds);

}  // namespace perfgate
