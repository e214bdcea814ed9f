#include "run/interleaved.h"

#include <algorithm>
#include <string>
#include <vector>

#include "run/environment.h"
#include "run/schedule.h"

namespace perfgate {

InterleavedRun RunInterleaved(const Suite& baseline, const Suite& candidate, const RunOptions& options,
                              const MorePairs& more_pairs) {
  if (baseline.scenarios.size() != candidate.scenarios.size())
    throw InputError(candidate.file + ": the baseline and candidate variants have different scenarios");
  SelectedScenarios(candidate, options.scenarios);  // an unknown name is bad input before anything runs
  InterleavedRun run;
  for (RunResults* side : {&run.baseline, &run.candidate}) {
    side->suite = candidate.name;
    side->suite_file = candidate.file;
    side->environment = CaptureEnvironment();
  }
  for (size_t s = 0; s < candidate.scenarios.size(); ++s) {
    const ScenarioSpec& b_spec = baseline.scenarios[s];
    const ScenarioSpec& c_spec = candidate.scenarios[s];
    if (b_spec.name != c_spec.name)
      throw InputError(candidate.file + ": the variants' scenario " + std::to_string(s + 1) + " is named \"" +
                       b_spec.name + "\" and \"" + c_spec.name + "\"");
    const auto& selected = options.scenarios;
    if (!selected.empty() && std::find(selected.begin(), selected.end(), c_spec.name) == selected.end()) continue;
    if (options.stop && options.stop->load()) break;

    const double t0 = MonotonicSeconds();
    std::vector<ScenarioResult> sides;
    try {
      // One set of probes, the candidate's, measures both sides.
      Schedule schedule;
      schedule.arms = {{"baseline", &b_spec, b_spec.probes}, {"candidate", &c_spec, c_spec.probes}};
      schedule.warmup = c_spec.warmup;
      schedule.rounds = options.repetitions.value_or(c_spec.repetitions_max);
      schedule.max_retakes = RetakeBudget(schedule.rounds);
      if (!options.repetitions && c_spec.repetitions_max > c_spec.repetitions_min)
        schedule.min_rounds = c_spec.repetitions_min;
      if (more_pairs) {
        schedule.more = [&](const std::vector<ScenarioResult>& arms) { return more_pairs(arms[1], arms[0]); };
        // A busy host's fair pairs vary more: it may buy them back (run/schedule.h).
        if (schedule.min_rounds == 0) schedule.busy_rounds = kBusyHostRoundsFactor * schedule.rounds;
      }
      RunSchedule(schedule, options, sides);
    } catch (const Error& e) {
      if (e.code() == ExitCode::kBadInput)
        throw InputError(candidate.file + ": scenario \"" + c_spec.name + "\": " + e.what());
      if (sides.empty()) sides = {NewScenarioResult(b_spec), NewScenarioResult(c_spec)};
      sides[0].error = sides[1].error = ScenarioErrorText(c_spec, e);
    }
    sides[0].duration_s = sides[1].duration_s = MonotonicSeconds() - t0;
    run.baseline.scenarios.push_back(std::move(sides[0]));
    run.candidate.scenarios.push_back(std::move(sides[1]));
    if (options.on_scenario_done) options.on_scenario_done(run.candidate);
  }
  if (options.stop && options.stop->load()) run.baseline.partial = run.candidate.partial = true;
  return run;
}

}  // namespace perfgate
