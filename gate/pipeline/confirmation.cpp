#include "pipeline/confirmation.h"

#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "base/log.h"
#include "compare/confirm.h"
#include "run/evidence_run.h"
#include "run/interleaved.h"
#include "run/schedule.h"

namespace perfgate {

namespace {

// How long the confirmation of a run against stored numbers waits first:
// as long as the flagged scenario's first round took, between these bounds.
// A host that runs slower for a second or two (on the project's virtual
// machines, with nothing in the guest to show it) slows every repetition of
// a short scenario alike; the wait lets that moment pass, so the fresh
// repetitions sample the host anew (docs/verdicts.md, "A slower host").
constexpr double kStoredConfirmationMinPause = 2;
constexpr double kStoredConfirmationMaxPause = 10;

// Sleeps `seconds`, or less when a signal stops the run.
void PauseUnlessStopped(double seconds, const RunOptions& ro) {
  const double until = MonotonicSeconds() + seconds;
  while (!(ro.stop && ro.stop->load()) && MonotonicSeconds() < until) usleep(20 * 1000);
}

}  // namespace

void ConfirmRegressions(const Suite* baseline, const Suite& candidate, const RunOptions& ro, const CompareOptions& co,
                        RunResults& results, const std::map<std::string, ScenarioResult>& stored) {
  const std::map<std::string, std::vector<size_t>> flagged = ChecksToConfirm(results);
  if (flagged.empty()) return;
  size_t family_size = 0;
  for (const auto& [name, checks] : flagged) family_size += checks.size();
  std::map<std::string, ScenarioResult> again, again_baseline;
  std::map<std::string, double> seconds;
  for (const auto& [name, checks] : flagged) {
    if (ro.stop && ro.stop->load()) break;
    const ScenarioResult* first = nullptr;
    for (const ScenarioResult& s : results.scenarios) {
      if (s.name == name) first = &s;
    }
    RunOptions fresh = ro;
    fresh.scenarios = {name};
    // As many as the first round measured, or the suite's count where a busy
    // host extended it; a busy host may extend the confirmation in turn while
    // a flagged check could still be confirmed.
    const bool extended = first->adaptive && first->adaptive->busy_host;
    fresh.repetitions = extended ? first->adaptive->min : static_cast<int>(first->repetitions.size());
    fresh.on_scenario_done = nullptr;
    const double t0 = MonotonicSeconds();
    if (baseline != nullptr) {
      if (!ro.quiet)
        log::Progress("%s: confirming %zu flagged regression%s in %d fresh pairs\n", name.c_str(), checks.size(),
                      checks.size() == 1 ? "" : "s", *fresh.repetitions);
      InterleavedRun run =
          RunInterleaved(*baseline, candidate, fresh, [&](const ScenarioResult& c, const ScenarioResult& b) {
            return ConfirmationNeedsMore(c, b, checks, results.environment, co, family_size);
          });
      seconds[name] = MonotonicSeconds() - t0;
      if (run.candidate.scenarios.empty() || !run.candidate.scenarios[0].error.empty()) continue;
      again.emplace(name, std::move(run.candidate.scenarios[0]));
      again_baseline.emplace(name, std::move(run.baseline.scenarios[0]));
      continue;
    }
    const auto stored_side = stored.find(name);
    if (stored_side == stored.end()) continue;
    const double first_round = MedianWallTime(first->repetitions) * static_cast<double>(first->repetitions.size());
    const double pause = std::clamp(first_round, kStoredConfirmationMinPause, kStoredConfirmationMaxPause);
    if (!ro.quiet)
      log::Progress("%s: confirming %zu flagged regression%s in %d fresh repetitions after %.0f s\n", name.c_str(),
                    checks.size(), checks.size() == 1 ? "" : "s", *fresh.repetitions, pause);
    PauseUnlessStopped(pause, ro);
    if (ro.stop && ro.stop->load()) break;
    fresh.more_repetitions = [&](const ScenarioResult& c) {
      return ConfirmationNeedsMore(c, stored_side->second, checks, results.environment, co, family_size);
    };
    RunResults run = RunSuite(candidate, fresh);
    seconds[name] = MonotonicSeconds() - t0;
    if (run.scenarios.empty() || !run.scenarios[0].error.empty()) continue;
    again.emplace(name, std::move(run.scenarios[0]));
  }
  ApplyConfirmation(results, again, baseline != nullptr ? again_baseline : stored, co, seconds);
  results.verdict = OverallVerdict(results);
  results.exit_code = ExitCodeFor(results, results.strict);
}

}  // namespace perfgate
