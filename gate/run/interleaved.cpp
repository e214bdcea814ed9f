#include "run/interleaved.h"

#include <algorithm>
#include <set>
#include <string>

#include "run/environment.h"
#include "run/repetition.h"

namespace perfgate {

namespace {

struct Side {
  const ScenarioSpec& spec;
  const WorkloadAdapter& adapter;
  std::vector<std::string> argv;
  ScenarioResult& result;
  const char* name;  // "baseline" | "candidate"
  std::set<std::string> warned = {};
};

// Runs both sides of one scenario into `baseline` and `candidate`.
void RunPairs(Side& a, Side& b, const RunOptions& options, const MorePairs& more_pairs) {
  const ScenarioSpec& spec = b.spec;
  ScenarioProbes probes(spec, spec.probes, b.argv, options);
  const bool adaptive = !options.repetitions && spec.repetitions_max > spec.repetitions_min;
  if (adaptive) {
    a.result.adaptive = b.result.adaptive = AdaptiveRepetitions{spec.repetitions_min, spec.repetitions_max, true};
  }
  const int pairs = options.repetitions.value_or(spec.repetitions_max);
  for (int i = -spec.warmup; i < pairs; ++i) {
    // Alternate the order of each pair: AB, BA, AB, ...
    Side* order[2] = {&a, &b};
    if (i % 2 != 0) std::swap(order[0], order[1]);
    for (Side* side : order) {
      const std::string label = std::string(side->name) + (i < 0 ? " warm-up " + std::to_string(i + spec.warmup + 1)
                                                                 : " repetition " + std::to_string(i + 1));
      Repetition rep = RunScenarioRepetition(side->spec, side->adapter, side->argv, probes, options,
                                             {label, i < 0 || spec.warmup == 0}, side->warned);
      if (i < 0) continue;
      rep.index = i;
      side->result.repetitions.push_back(std::move(rep));
    }
    if (i >= 0 && adaptive && i + 1 >= spec.repetitions_min && i + 1 < pairs && more_pairs &&
        !more_pairs(b.result, a.result)) {
      SayStoppedEarly(spec, i + 1, pairs, options);
      break;
    }
  }
  b.result.probes = probes.Reports();
}

}  // namespace

InterleavedRun RunInterleaved(const Suite& baseline, const Suite& candidate, const RunOptions& options,
                              const MorePairs& more_pairs) {
  if (baseline.scenarios.size() != candidate.scenarios.size())
    throw InputError(candidate.file + ": the baseline and candidate variants have different scenarios");
  for (const auto& name : options.scenarios) {
    const auto& all = candidate.scenarios;
    if (std::none_of(all.begin(), all.end(), [&](const ScenarioSpec& s) { return s.name == name; }))
      throw InputError(candidate.file + ": no scenario named \"" + name + "\"");
  }
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

    ScenarioResult b_result = NewScenarioResult(b_spec);
    ScenarioResult c_result = NewScenarioResult(c_spec);
    const double t0 = MonotonicSeconds();
    try {
      Side a{b_spec, AdapterFor(b_spec), {}, b_result, "baseline"};
      Side b{c_spec, AdapterFor(c_spec), {}, c_result, "candidate"};
      a.argv = a.adapter.LaunchArgv(b_spec.workload);
      b.argv = b.adapter.LaunchArgv(c_spec.workload);
      RunPairs(a, b, options, more_pairs);
    } catch (const Error& e) {
      if (e.code() == ExitCode::kBadInput) throw InputError(candidate.file + ": scenario \"" + c_spec.name + "\": " + e.what());
      b_result.error = c_result.error = ScenarioErrorText(c_spec, e);
    }
    b_result.duration_s = c_result.duration_s = MonotonicSeconds() - t0;
    run.baseline.scenarios.push_back(std::move(b_result));
    run.candidate.scenarios.push_back(std::move(c_result));
    if (options.on_scenario_done) options.on_scenario_done(run.candidate);
  }
  if (options.stop && options.stop->load()) run.baseline.partial = run.candidate.partial = true;
  return run;
}

}  // namespace perfgate
