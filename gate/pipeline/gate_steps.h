// Steps of the gate's flows (pipeline.cpp) that the flows on a device
// (on_target.cpp) and the kernel A/B (kernel_ab.cpp) take too.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compare/compare.h"
#include "config/suite.h"
#include "metrics/results.h"
#include "pipeline/pipeline.h"
#include "triage/acceptance.h"

namespace perfgate {

// The suite in `file` with the gate's vocabulary; `suite_dir` is what
// ${suite_dir} names (empty: the file's directory).
Suite LoadSuiteFile(const std::string& file, std::map<std::string, std::string> overrides = {},
                    const std::string& suite_dir = "");

// Whether SIGINT or SIGTERM asked the run to stop.
inline bool Stopped(const GateOptions& o) { return o.stop != nullptr && o.stop->load(); }

// What people decided about the suite's checks (gate/triage/), checked
// against the whole suite before anything is measured: a bad acceptance or
// date is bad input now, not after the run.
struct TriagePolicy {
  std::vector<Acceptance> acceptances;
  std::vector<std::string> skipped_trailers;  // --skip-bad-trailers: each one line, for the reports
  std::vector<QuarantineEntry> quarantine;
  std::string today;
};

// The suite with only this runner's shard of the scenarios (all without
// --shard); `policy`, when given, gets the triage resolved against all of them.
Suite LoadGateSuite(const GateOptions& o, std::map<std::string, std::string> overrides = {},
                    TriagePolicy* policy = nullptr);

// Accepted and quarantined checks, after the verdicts (and their
// confirmation) and before the evidence, which failing checks alone need.
void TriageVerdicts(RunResults& results, const TriagePolicy& policy);

// The regression checks of the suite's scenarios (`selected`; empty: all).
size_t RegressionChecks(const Suite& suite, const std::vector<std::string>& selected);

// The checks against `baselines` (whose provenance is `source`), the verdict
// and the exit code.
void Evaluate(RunResults& results, const std::map<std::string, ScenarioResult>& baselines,
              std::optional<Environment> baseline_env, const std::string& source, bool strict,
              const CompareOptions& co);

// results.json's text.
std::string ResultsText(const RunResults& results);

// The why of the failing checks (gate/explain/), once the verdicts and the
// evidence are in, then every report.
void WriteExplainedReports(RunResults& results, const std::string& out_dir);

// The baselines of the scenarios that ran without error, stored all or none
// while no other perfgate reads or writes the baseline directory; with
// `say_skipped`, a scenario that failed is said. The files written, with
// their repetitions.
std::vector<std::pair<std::string, size_t>> StoreBaselines(const Suite& suite, const RunResults& results,
                                                           const std::string& baseline_dir, bool say_skipped);

}  // namespace perfgate
