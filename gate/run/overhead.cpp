#include "run/overhead.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "adapters/adapter.h"
#include "metrics/error.h"
#include "run/repetition.h"
#include "stats/descriptive.h"
#include "stats/relative_change.h"

namespace perfgate {

namespace {

double MetricOf(const Repetition& rep, const std::string& metric, const std::string& scenario) {
  auto it = rep.metrics.find(metric);
  if (it == rep.metrics.end()) throw InputError("scenario \"" + scenario + "\": no metric \"" + metric + "\" to compare");
  return it->second.value;
}

OverheadResult MeasureScenario(const ScenarioSpec& spec, const RunOptions& run, const OverheadOptions& options) {
  OverheadResult result;
  result.scenario = spec.name;
  const WorkloadAdapter* adapter = FindAdapter(spec.workload.kind);
  if (!adapter) throw InputError("unknown workload kind \"" + spec.workload.kind + "\"");
  const std::vector<std::string> argv = adapter->LaunchArgv(spec.workload);

  auto repetition = [&](bool probed, bool stats, const std::string& label) {
    if (run.stop && run.stop->load()) throw InfraError("interrupted");
    // The probes are loaded for the probed repetition only: attached but idle
    // probes still run on every event and would tax the bare side.
    ScenarioProbes probes(spec, probed ? spec.probes : std::vector<ProbeSpec>{}, argv, run);
    probes.MeasureProbeCost(stats);
    Repetition rep = RunRepetition(spec, *adapter, argv, probes, run);
    if (!rep.failure.empty()) throw InfraError("scenario \"" + spec.name + "\": " + label + ": workload " + rep.failure);
    probes.CountWorkloadCpu(rep);
    if (stats) result.probes = probes.Reports();
    double value = MetricOf(rep, options.metric, spec.name);
    if (!run.quiet) std::fprintf(stderr, "perfgate: %s: %s: %.6g\n", spec.name.c_str(), label.c_str(), value);
    return value;
  };

  // Warm-up of both sides; the probed one measures the probes' CPU cost.
  for (int i = 0; i < std::max(1, spec.warmup); ++i) {
    repetition(false, false, "warm-up bare");
    repetition(true, true, "warm-up probed");
  }
  for (int i = 0; i < options.pairs; ++i) {
    const bool probed_first = i % 2 == 1;  // ABBA: B A, A B, B A, ...
    for (bool probed : {probed_first, !probed_first}) {
      double value = repetition(probed, false, std::string(probed ? "probed " : "bare ") + std::to_string(i + 1));
      (probed ? result.probed : result.bare).push_back(value);
    }
  }
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
  for (const auto& name : run.scenarios) {
    if (std::none_of(suite.scenarios.begin(), suite.scenarios.end(), [&](const auto& s) { return s.name == name; })) {
      throw InputError(suite.file + ": no scenario named \"" + name + "\"");
    }
  }
  std::vector<OverheadResult> results;
  for (const auto& spec : suite.scenarios) {
    if (!run.scenarios.empty() && std::find(run.scenarios.begin(), run.scenarios.end(), spec.name) == run.scenarios.end()) {
      continue;
    }
    try {
      results.push_back(MeasureScenario(spec, run, options));
    } catch (const Error& e) {
      if (e.code() == ExitCode::kBadInput) throw;
      OverheadResult failed;
      failed.scenario = spec.name;
      failed.error = e.what();
      results.push_back(std::move(failed));
      if (run.stop && run.stop->load()) break;
    }
  }
  return results;
}

}  // namespace perfgate
