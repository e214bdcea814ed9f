// The baselines a run against stored numbers is compared with — stored
// baseline files or the history's newest passing runs — and where each was
// recorded, so the reports say where a verdict's baseline came from and a
// baseline of another machine decides nothing.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "baseline/store.h"
#include "config/suite.h"
#include "metrics/results.h"
#include "pipeline/pipeline.h"

namespace perfgate {

// Where numbers were recorded: "host1 (6.1.0 x86_64, AMD EPYC x 2) at
// 2026-11-25T10:00:00Z, commit 1a2b3c".
std::string RecordedOn(const Environment& e);

// A stored baseline's provenance, and whether it is the machine of `now`
// (the candidate's: this host for run, the results' host for compare and merge).
std::string StoredSource(const std::string& what, const Environment& recorded, const Environment& now);

// What differs between where `recorded` was measured and `now`, in one
// line; empty when it is the same machine.
std::string MachineDifference(const Environment& recorded, const Environment& now);

// The baselines a run is compared with: each scenario's stored result, where
// they were recorded, and which of them another machine recorded.
struct StoredBaselines {
  std::map<std::string, ScenarioResult> scenarios;
  std::optional<Environment> environment;  // the first baseline's
  std::string source;                      // RunResults::baseline_source
  // Scenario -> what differs, for baselines of another machine that the
  // checks must not be judged against (CompareOptions::foreign_baselines).
  std::map<std::string, std::string> foreign;

  // `now`: the machine the candidate ran on; `allow_other_host`: the user
  // opted in to comparing across machines.
  static StoredBaselines From(std::map<std::string, Baseline> baselines, const std::string& dir, const Environment& now,
                              bool allow_other_host);
};

// Baselines for the scenarios that will run, loaded before anything runs so a
// corrupt file fails fast (exit 2) instead of after minutes of measuring.
StoredBaselines LoadSuiteBaselines(const Suite& suite, const GateOptions& o);

// --baseline-from-history: the newest passing runs of this host's
// fingerprint. Scenarios with none are said before anything runs; another
// machine's run, used when there is no run of this one, decides nothing
// unless --allow-other-host, and is an error with --require-same-env.
StoredBaselines LoadHistoryBaselines(const Suite& suite, const GateOptions& o);

}  // namespace perfgate
