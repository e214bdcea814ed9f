// Runs the scenarios of a suite: probes attached before the workload execs,
// warm-up runs, then measured repetitions, each a fresh process.
#pragma once

#include <sys/resource.h>

#include <atomic>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "adapters/adapter.h"
#include "config/suite.h"
#include "metrics/error.h"
#include "metrics/results.h"
#include "probes/probe.h"

namespace perfgate {

struct RunOptions {
  std::vector<std::string> scenarios;  // empty = all
  std::optional<int> repetitions;      // overrides the suite
  std::vector<AttachType> allowed_attach_types;
  const std::atomic<bool>* stop = nullptr;  // set by SIGINT/SIGTERM
  // Called after each scenario, e.g. to write partial results.
  std::function<void(const RunResults&)> on_scenario_done;
  // Adaptive repetitions (suite `repetitions: {min, max}`): called after each
  // measured repetition from `min` on with the scenario so far; false stops
  // it. Unset: every adaptive scenario runs `max` repetitions.
  std::function<bool(const ScenarioResult&)> more_repetitions;
  bool quiet = false;
};

// Returns the measured run; check verdicts are filled in later by compare.
// Scenario failures (probe attach, workload crash, timeout) are recorded in
// ScenarioResult::error, and the run goes on with the next scenario.
RunResults RunSuite(const Suite& suite, const RunOptions& options);

// ---- steps shared by the runner and the interleaved A/B runner ----------

double MonotonicSeconds();
// A scenario's result before anything ran: name, kind, timestamp, its checks' specs.
ScenarioResult NewScenarioResult(const ScenarioSpec& spec);
// The scenario's adapter; InputError for an unknown kind.
const WorkloadAdapter& AdapterFor(const ScenarioSpec& spec);

struct RepetitionLabel {
  std::string text;                 // "warm-up 1", "candidate repetition 3"
  bool measure_probe_cost = false;  // BPF run-time stats on during it
};
// One repetition as the runner runs it: honours the stop flag, says each new
// adapter warning once per scenario (`warned`) and the progress line unless
// quiet; a failed workload throws InfraError naming scenario and repetition.
class ScenarioProbes;
Repetition RunScenarioRepetition(const ScenarioSpec& spec, const WorkloadAdapter& adapter,
                                 const std::vector<std::string>& argv, ScenarioProbes& probes,
                                 const RunOptions& options, const RepetitionLabel& label,
                                 std::set<std::string>& warned);
// The progress line of an adaptive scenario that stopped before its maximum.
void SayStoppedEarly(const ScenarioSpec& spec, int done, int max, const RunOptions& options);
// The text of ScenarioResult::error for an infrastructure error thrown while
// running the scenario (bad input is not one: it ends the run with exit 2).
std::string ScenarioErrorText(const ScenarioSpec& spec, const Error& e);

// Metrics from the workload's rusage and wall time.
void AddRusageMetrics(const ::rusage& usage, double wall_s, MetricSet& out);

}  // namespace perfgate
