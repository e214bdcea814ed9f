// Evidence: when a scenario's check fails (suite `evidence: on-failure`, the
// default) or always (`evidence: always`), extra repetitions after the
// measured ones with the profile probe (on-CPU samples) and the offcpu probe
// with stacks attached on top of the scenario's own probes; their stacks,
// symbolized and folded, say which code the failing check points at.
//
// Extra repetitions, like the traced one (run/trace_run.h), rather than
// sampling the measured ones: green runs stay exactly as fast as without
// evidence (nothing extra attached), and the sampling cost never reaches the
// numbers the verdicts rest on.
//
// Enough samples to tell a real difference from sampling noise: on-CPU
// sampling at kEvidenceFrequencyHz (unless the suite's profile probe sets
// its own), and evidence repetitions until every side has
// kEvidenceTargetSamples on-CPU samples (or as many off-CPU waits, for a
// workload that mostly blocks), at most kEvidenceMaxRepetitions per side and
// no new round once kEvidenceBudgetS have passed. The sides of an A/B run
// alternate (AB, BA, ...) under one set of probes, as the measured
// repetitions do, so what the host does meanwhile falls on both alike.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

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

inline constexpr int kEvidenceFrequencyHz = 999;
inline constexpr uint64_t kEvidenceTargetSamples = 2000;
inline constexpr int kEvidenceMaxRepetitions = 30;
inline constexpr double kEvidenceBudgetS = 60;

// One side of the evidence: its scenario, "baseline" | "candidate", and the
// median wall time of its measured repetitions (0 when unknown), which gives
// Evidence::slowdown.
struct EvidenceSide {
  const ScenarioSpec* spec = nullptr;
  std::string side;
  double measured_wall_s = 0;
};

// Runs the evidence repetitions of every side, interleaved, and returns each
// side's stacks in `sides` order. Throws InfraError when the probes cannot
// attach or the workload fails.
std::vector<Evidence> EvidenceRepetitions(const std::vector<EvidenceSide>& sides, const RunOptions& options,
                                          const std::string& reason);

// The evidence of one side alone (a run against a stored baseline).
Evidence EvidenceRepetition(const ScenarioSpec& spec, const RunOptions& options, const std::string& side,
                            const std::string& reason, double measured_wall_s);

// The median workload.wall_time of `repetitions`, 0 when there is none.
double MedianWallTime(const std::vector<Repetition>& repetitions);

// Adds the evidence a stored baseline was recorded with (`evidence: always`)
// to every scenario of `results` that has candidate evidence, as its
// "baseline" side; a scenario that already has a baseline side keeps it.
void AddBaselineEvidence(RunResults& results, const std::map<std::string, ScenarioResult>& baselines);

}  // namespace perfgate
