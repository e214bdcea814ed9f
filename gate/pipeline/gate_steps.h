// Steps of the gate's flows (pipeline.cpp) that the flows on a device
// (on_target.cpp) take too.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config/suite.h"
#include "metrics/results.h"

namespace perfgate {

// The suite in `file` with the gate's vocabulary; `suite_dir` is what
// ${suite_dir} names (empty: the file's directory).
Suite LoadSuiteFile(const std::string& file, std::map<std::string, std::string> overrides = {},
                    const std::string& suite_dir = "");

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
