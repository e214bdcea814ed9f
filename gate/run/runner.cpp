#include "run/runner.h"

#include <string>
#include <vector>

#include "base/error.h"
#include "run/environment.h"
#include "run/schedule.h"

namespace perfgate {

namespace {

ScenarioResult RunScenario(const ScenarioSpec& spec, const RunOptions& options) {
  const double t0 = MonotonicSeconds();
  std::vector<ScenarioResult> arms;
  try {
    Schedule schedule;
    schedule.arms = {{"", &spec, spec.probes}};
    schedule.warmup = spec.warmup;
    schedule.rounds = options.repetitions.value_or(spec.repetitions_max);
    schedule.max_retakes = RetakeBudget(schedule.rounds);
    if (!options.repetitions && spec.repetitions_max > spec.repetitions_min) schedule.min_rounds = spec.repetitions_min;
    if (options.more_repetitions)
      schedule.more = [&](const std::vector<ScenarioResult>& arms) { return options.more_repetitions(arms[0]); };
    RunSchedule(schedule, options, arms);
  } catch (const Error& e) {
    if (e.code() == ExitCode::kBadInput) throw;
    if (arms.empty()) arms.push_back(NewScenarioResult(spec));
    arms[0].error = ScenarioErrorText(spec, e);
  }
  ScenarioResult result = std::move(arms[0]);
  result.duration_s = MonotonicSeconds() - t0;
  return result;
}

}  // namespace

RunResults RunSuite(const Suite& suite, const RunOptions& options) {
  RunResults results;
  results.suite = suite.name;
  results.suite_file = suite.file;
  results.environment = CaptureEnvironment();
  for (const ScenarioSpec* spec : SelectedScenarios(suite, options.scenarios)) {
    if (options.stop && options.stop->load()) {
      results.partial = true;
      break;
    }
    try {
      results.scenarios.push_back(RunScenario(*spec, options));
    } catch (const Error& e) {
      // Bad input found only at run time (a probe parameter, a probe's scope):
      // name the suite file and the scenario.
      if (e.code() != ExitCode::kBadInput) throw;
      throw InputError(suite.file + ": scenario \"" + spec->name + "\": " + e.what());
    }
    if (options.stop && options.stop->load()) results.partial = true;
    if (options.on_scenario_done) options.on_scenario_done(results);
  }
  return results;
}

}  // namespace perfgate
