#include "run/overhead.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "metrics/error.h"
#include "run/schedule.h"
#include "stats/descriptive.h"
#include "stats/relative_change.h"

namespace perfgate {

namespace {

double MetricOf(const Repetition& rep, const std::string& metric, const std::string& scenario) {
  auto it = rep.metrics.find(metric);
  if (it == rep.metrics.end())
    throw InputError("scenario \"" + scenario + "\": no metric \"" + metric + "\" to compare");
  return it->second.value;
}

OverheadResult MeasureScenario(const ScenarioSpec& spec, const RunOptions& run, const OverheadOptions& options) {
  OverheadResult result;
  result.scenario = spec.name;
  // The probes are loaded for the probed repetitions only: attached but idle
  // probes still run on every event and would tax the bare side. BPF run-time
  // statistics are on in the probed warm-ups, which measure the probes' CPU
  // cost; the timed repetitions run without them.
  Schedule schedule;
  schedule.arms = {{"bare", &spec, {}}, {"probed", &spec, spec.probes}};
  schedule.warmup = std::max(1, spec.warmup);
  schedule.rounds = options.pairs;
  schedule.lifetime = ProbeLifetime::kRepetition;
  schedule.after_repetition = [&](size_t, const Repetition& rep, ScenarioProbes&) {
    MetricOf(rep, options.metric, spec.name);  // a metric the workload lacks is bad input at once
  };
  std::vector<ScenarioResult> sides;
  RunSchedule(schedule, run, sides);
  for (const Repetition& rep : sides[0].repetitions) result.bare.push_back(MetricOf(rep, options.metric, spec.name));
  for (const Repetition& rep : sides[1].repetitions) result.probed.push_back(MetricOf(rep, options.metric, spec.name));
  result.probes = std::move(sides[1].probes);
  result.bare_median = stats::Median(result.bare);
  result.probed_median = stats::Median(result.probed);
  result.slowdown = result.bare_median > 0 ? result.probed_median / result.bare_median : NAN;
  stats::RelativeChange shift = stats::RelativeShiftOfLogs(result.bare, result.probed, options.confidence);
  if (shift.low && shift.high) {
    result.slowdown_low = 1 + *shift.low;
    result.slowdown_high = 1 + *shift.high;
  }
  return result;
}

}  // namespace

std::vector<OverheadResult> MeasureOverhead(const Suite& suite, const RunOptions& run, const OverheadOptions& options) {
  std::vector<OverheadResult> results;
  for (const ScenarioSpec* spec : SelectedScenarios(suite, run.scenarios)) {
    try {
      results.push_back(MeasureScenario(*spec, run, options));
    } catch (const Error& e) {
      if (e.code() == ExitCode::kBadInput) throw;
      OverheadResult failed;
      failed.scenario = spec->name;
      failed.error = e.what();
      results.push_back(std::move(failed));
      if (run.stop && run.stop->load()) break;
    }
  }
  return results;
}

}  // namespace perfgate
