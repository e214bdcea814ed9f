// The confirmation round of the gate's flows (compare/confirm.h decides
// it): a regression the first measurement flags is measured again before it
// fails the run.
#pragma once

#include <map>
#include <string>

#include "compare/compare.h"
#include "config/suite.h"
#include "metrics/results.h"
#include "run/runner.h"

namespace perfgate {

// Measures every scenario with a flagged regression again (as many
// repetitions as its first round measured, or as its suite asks where a busy
// host extended the first round) and lets them decide those checks; then
// the run's verdict again. With `baseline` (perfgate ab) both sides run
// again in fresh interleaved pairs; without it the candidate runs again
// alone, after a pause, against the same `stored` baselines.
void ConfirmRegressions(const Suite* baseline, const Suite& candidate, const RunOptions& ro, const CompareOptions& co,
                        RunResults& results, const std::map<std::string, ScenarioResult>& stored = {});

}  // namespace perfgate
