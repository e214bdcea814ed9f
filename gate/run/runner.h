// Runs the scenarios of a suite one after the other: probes attached before
// the workload execs, warm-up runs, then measured repetitions, each a fresh
// process (a one-arm schedule, run/schedule.h).
#pragma once

#include <sys/resource.h>

#include <atomic>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "adapters/adapter.h"
#include "base/error.h"
#include "config/suite.h"
#include "metrics/metric_declaration.h"
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

// The metrics every repetition may carry whatever its probes and adapter:
// the workload's rusage, the host's load, reclaim's read-back.
std::vector<MetricDeclaration> RepetitionMetricDeclarations();

// Metrics from the workload's rusage and wall time.
void AddRusageMetrics(const ::rusage& usage, double wall_s, MetricSet& out);

}  // namespace perfgate
