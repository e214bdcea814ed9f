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

namespace {

ScenarioResult RunScenario(const ScenarioSpec& spec, const RunOptions& options) {
  ScenarioResult result;
  result.name = spec.name;
  result.workload_kind = spec.workload.kind;
  result.timestamp = UtcTimestamp();
  for (const auto& c : spec.checks) {
    CheckResult check;
    check.spec = c;
    result.checks.push_back(std::move(check));
  }
  timespec t0{}, t1{};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  try {
    const WorkloadAdapter* adapter = FindAdapter(spec.workload.kind);
    if (!adapter) throw InputError("unknown workload kind \"" + spec.workload.kind + "\"");
    std::vector<std::string> argv = adapter->LaunchArgv(spec.workload);
    ScenarioProbes probes(spec, spec.probes, argv, options);
    const bool adaptive = !options.repetitions && spec.repetitions_max > spec.repetitions_min;
    if (adaptive) result.adaptive = AdaptiveRepetitions{spec.repetitions_min, spec.repetitions_max, false};
    const int reps = options.repetitions.value_or(spec.repetitions_max);
    std::set<std::string> warned;
    for (int i = -spec.warmup; i < reps; ++i) {
      if (options.stop && options.stop->load()) throw InfraError("interrupted");
      probes.MeasureProbeCost(i < 0 || spec.warmup == 0);
      Repetition rep = RunRepetition(spec, *adapter, argv, probes, options);
      probes.CountWorkloadCpu(rep);
      std::string label = i < 0 ? "warm-up " + std::to_string(i + spec.warmup + 1)
                                : "repetition " + std::to_string(i + 1);
      if (!rep.failure.empty()) throw InfraError("scenario \"" + spec.name + "\": " + label + ": workload " + rep.failure);
      // Said once per scenario, even with --quiet: a metric may be missing.
      for (const auto& warning : rep.warnings) {
        if (warned.insert(warning).second)
          std::fprintf(stderr, "perfgate: warning: %s: %s: %s\n", spec.name.c_str(), label.c_str(), warning.c_str());
      }
      if (!options.quiet) {
        auto wall = rep.metrics.find("workload.wall_time");
        std::fprintf(stderr, "perfgate: %s: %s: %.3f s\n", spec.name.c_str(), label.c_str(),
                     wall == rep.metrics.end() ? 0.0 : wall->second.value);
      }
      if (i < 0) continue;
      rep.index = i;
      result.repetitions.push_back(std::move(rep));
      if (adaptive && i + 1 >= spec.repetitions_min && i + 1 < reps && options.more_repetitions &&
          !options.more_repetitions(result)) {
        if (!options.quiet)
          std::fprintf(stderr, "perfgate: %s: stopped after %d of at most %d repetitions: no check can still regress\n",
                       spec.name.c_str(), i + 1, reps);
        break;
      }
    }
    result.probes = probes.Reports();
  } catch (const Error& e) {
    if (e.code() == ExitCode::kBadInput) throw;
    // Probe and adapter errors name what failed; the scenario is said here once.
    const std::string what = e.what();
    result.error = what.rfind("scenario \"", 0) == 0 ? what : "scenario \"" + spec.name + "\": " + what;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  result.duration_s = static_cast<double>(t1.tv_sec - t0.tv_sec) + static_cast<double>(t1.tv_nsec - t0.tv_nsec) / 1e9;
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
