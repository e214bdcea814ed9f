// Evidence: when a scenario's check fails (suite `evidence: on-failure`, the
// default) or always (`evidence: always`), one extra repetition after the
// measured ones with the profile probe (on-CPU samples) and the offcpu probe
// with stacks attached on top of the scenario's own probes; its stacks,
// symbolized and folded, say which code the failing check points at.
//
// An extra repetition, like the traced one (run/trace_run.h), rather than
// sampling the measured ones: green runs stay exactly as fast as without
// evidence (nothing extra attached), and the sampling cost never reaches the
// numbers the verdicts rest on.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "config/suite.h"
#include "metrics/evidence.h"
#include "metrics/results.h"
#include "run/runner.h"

namespace perfgate {

// Why `scenario` gets an evidence repetition under `mode`: "always", the
// first failing check ("workload.wall_time: regression (+12.3 %)"), or
// nullopt for none (a green scenario under on-failure, `never`, a scenario
// that did not run).
std::optional<std::string> EvidenceReason(EvidenceMode mode, const ScenarioResult& scenario);

// Runs the evidence repetition of `spec` and returns its stacks as `side`
// ("baseline" | "candidate"); `measured_wall_s` (the median wall time of the
// measured repetitions, 0 when unknown) gives Evidence::slowdown. Throws
// InfraError when the probes cannot attach or the workload fails.
Evidence EvidenceRepetition(const ScenarioSpec& spec, const RunOptions& options, const std::string& side,
                            const std::string& reason, double measured_wall_s);

// The median workload.wall_time of `repetitions`, 0 when there is none.
double MedianWallTime(const std::vector<Repetition>& repetitions);

// Adds the evidence a stored baseline was recorded with (`evidence: always`)
// to every scenario of `results` that has candidate evidence, as its
// "baseline" side; a scenario that already has a baseline side keeps it.
void AddBaselineEvidence(RunResults& results, const std::map<std::string, ScenarioResult>& baselines);

}  // namespace perfgate
