#include "run/runner.h"

#include <time.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "adapters/adapter.h"
#include "metrics/error.h"
#include "run/environment.h"
#include "run/repetition.h"

namespace perfgate {

double MonotonicSeconds() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

ScenarioResult NewScenarioResult(const ScenarioSpec& spec) {
  ScenarioResult result;
  result.name = spec.name;
  result.workload_kind = spec.workload.kind;
  result.timestamp = UtcTimestamp();
  for (const auto& c : spec.checks) {
    CheckResult check;
    check.spec = c;
    result.checks.push_back(std::move(check));
  }
  return result;
}

const WorkloadAdapter& AdapterFor(const ScenarioSpec& spec) {
  const WorkloadAdapter* adapter = FindAdapter(spec.workload.kind);
  if (!adapter) throw InputError("unknown workload kind \"" + spec.workload.kind + "\"");
  return *adapter;
}

Repetition RunScenarioRepetition(const ScenarioSpec& spec, const WorkloadAdapter& adapter,
                                 const std::vector<std::string>& argv, ScenarioProbes& probes,
                                 const RunOptions& options, const RepetitionLabel& label,
                                 std::set<std::string>& warned) {
  if (options.stop && options.stop->load()) throw InfraError("interrupted");
  probes.MeasureProbeCost(label.measure_probe_cost);
  Repetition rep = RunRepetition(spec, adapter, argv, probes, options);
  probes.CountWorkloadCpu(rep);
  if (!rep.failure.empty())
    throw InfraError("scenario \"" + spec.name + "\": " + label.text + ": workload " + rep.failure);
  // Said once per scenario, even with --quiet: a metric may be missing.
  for (const auto& warning : rep.warnings) {
    if (warned.insert(warning).second)
      std::fprintf(stderr, "perfgate: warning: %s: %s: %s\n", spec.name.c_str(), label.text.c_str(), warning.c_str());
  }
  if (!options.quiet) {
    auto wall = rep.metrics.find("workload.wall_time");
    std::fprintf(stderr, "perfgate: %s: %s: %.3f s\n", spec.name.c_str(), label.text.c_str(),
                 wall == rep.metrics.end() ? 0.0 : wall->second.value);
  }
  return rep;
}

void SayStoppedEarly(const ScenarioSpec& spec, int done, int max, const RunOptions& options) {
  if (options.quiet) return;
  std::fprintf(stderr, "perfgate: %s: stopped after %d of at most %d repetitions: no check can still regress\n",
               spec.name.c_str(), done, max);
}

std::string ScenarioErrorText(const ScenarioSpec& spec, const Error& e) {
  // Probe and adapter errors name what failed; the scenario is said here once.
  const std::string what = e.what();
  return what.rfind("scenario \"", 0) == 0 ? what : "scenario \"" + spec.name + "\": " + what;
}

namespace {

ScenarioResult RunScenario(const ScenarioSpec& spec, const RunOptions& options) {
  ScenarioResult result = NewScenarioResult(spec);
  const double t0 = MonotonicSeconds();
  try {
    const WorkloadAdapter& adapter = AdapterFor(spec);
    std::vector<std::string> argv = adapter.LaunchArgv(spec.workload);
    ScenarioProbes probes(spec, spec.probes, argv, options);
    const bool adaptive = !options.repetitions && spec.repetitions_max > spec.repetitions_min;
    if (adaptive) result.adaptive = AdaptiveRepetitions{spec.repetitions_min, spec.repetitions_max, false};
    const int reps = options.repetitions.value_or(spec.repetitions_max);
    std::set<std::string> warned;
    for (int i = -spec.warmup; i < reps; ++i) {
      const std::string label = i < 0 ? "warm-up " + std::to_string(i + spec.warmup + 1)
                                      : "repetition " + std::to_string(i + 1);
      Repetition rep = RunScenarioRepetition(spec, adapter, argv, probes, options,
                                             {label, i < 0 || spec.warmup == 0}, warned);
      if (i < 0) continue;
      rep.index = i;
      result.repetitions.push_back(std::move(rep));
      if (adaptive && i + 1 >= spec.repetitions_min && i + 1 < reps && options.more_repetitions &&
          !options.more_repetitions(result)) {
        SayStoppedEarly(spec, i + 1, reps, options);
        break;
      }
    }
    result.probes = probes.Reports();
  } catch (const Error& e) {
    if (e.code() == ExitCode::kBadInput) throw;
    result.error = ScenarioErrorText(spec, e);
  }
  result.duration_s = MonotonicSeconds() - t0;
  return result;
}

}  // namespace

RunResults RunSuite(const Suite& suite, const RunOptions& options) {
  RunResults results;
  results.suite = suite.name;
  results.suite_file = suite.file;
  results.environment = CaptureEnvironment();
  for (const auto& name : options.scenarios) {
    bool found = false;
    for (const auto& s : suite.scenarios) found |= s.name == name;
    if (!found) throw InputError(suite.file + ": no scenario named \"" + name + "\"");
  }
  for (const auto& spec : suite.scenarios) {
    if (!options.scenarios.empty() &&
        std::find(options.scenarios.begin(), options.scenarios.end(), spec.name) == options.scenarios.end()) {
      continue;
    }
    if (options.stop && options.stop->load()) {
      results.partial = true;
      break;
    }
    try {
      results.scenarios.push_back(RunScenario(spec, options));
    } catch (const Error& e) {
      // Bad input found only at run time (a probe parameter, a probe's scope):
      // name the suite file and the scenario.
      if (e.code() != ExitCode::kBadInput) throw;
      throw InputError(suite.file + ": scenario \"" + spec.name + "\": " + e.what());
    }
    if (options.stop && options.stop->load()) results.partial = true;
    if (options.on_scenario_done) options.on_scenario_done(results);
  }
  return results;
}

}  // namespace perfgate
