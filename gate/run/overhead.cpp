#include "run/overhead.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "base/error.h"
#include "run/schedule.h"
#include "stats/descriptive.h"
#include "stats/relative_change.h"
#include "stats/signed_rank.h"

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
  // The probes are loaded and attached before every repetition of both
  // sides, and the bare side takes them off their hooks again before its
  // workload starts: attached but idle probes would still run on every event
  // and tax the bare side, and loading them only for the probed side charged
  // it with the loading's aftermath (the verifier's and JIT's work just
  // before the workload starts: a never-firing probe measured 1.02-1.10x on
  // a 12 ms workload). BPF run-time statistics are on in the probed warm-ups, which
  // measure the probes' CPU cost; the timed repetitions run without them.
  Schedule schedule;
  schedule.arms = {{"bare", &spec, spec.probes, true}, {"probed", &spec, spec.probes}};
  schedule.warmup = std::max(1, spec.warmup);
  schedule.rounds = options.pairs;
  schedule.lifetime = ProbeLifetime::kRepetition;
  schedule.canary = false;  // both sides ran in each pair: the host's speed fell on both alike
  schedule.after_repetition = [&](size_t, const Repetition& rep, ScenarioProbes&) {
    MetricOf(rep, options.metric, spec.name);  // a metric the workload lacks is bad input at once
  };
  std::vector<ScenarioResult> sides;
  RunSchedule(schedule, run, sides);
  std::map<int, double> bare_by_round;
  for (const Repetition& rep : sides[0].repetitions) {
    result.bare.push_back(MetricOf(rep, options.metric, spec.name));
    bare_by_round.emplace(rep.index, result.bare.back());
  }
  std::vector<double> log_ratios;
  for (const Repetition& rep : sides[1].repetitions) {
    result.probed.push_back(MetricOf(rep, options.metric, spec.name));
    auto bare = bare_by_round.find(rep.index);
    if (bare != bare_by_round.end() && bare->second > 0 && result.probed.back() > 0)
      log_ratios.push_back(std::log(result.probed.back() / bare->second));
  }
  result.probes = std::move(sides[1].probes);
  result.bare_median = stats::Median(result.bare);
  result.probed_median = stats::Median(result.probed);
  result.slowdown = result.bare_median > 0 ? result.probed_median / result.bare_median : NAN;
  // The bare and probed repetitions of a round ran back to back and shared
  // the host's state of the moment: their ratio cancels drift and a
  // neighbour's slow phase, so the interval is the signed-rank one of the
  // per-round log ratios. With too few rounds for it to reach the confidence,
  // the two-sample interval of the logs.
  const stats::ShiftEstimate paired = stats::PairedShift(log_ratios, options.confidence);
  if (!log_ratios.empty() && paired.confidence >= options.confidence) {
    result.pairs = static_cast<int>(log_ratios.size());
    result.slowdown_low = std::exp(paired.low);
    result.slowdown_high = std::exp(paired.high);
    return result;
  }
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
