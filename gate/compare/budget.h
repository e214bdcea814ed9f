// Budget checks: the candidate's median against an absolute bound
// (CheckSpec::max / min), decided on the repetitions a busy host left alone
// when the load could explain the crossing (compare/load_allowance.h).
#pragma once

#include "metrics/results.h"

namespace perfgate {

// Sets the verdict and message of a resolved budget check (ResolveCandidate).
void EvaluateBudget(CheckResult& check, const ScenarioResult& scenario);

}  // namespace perfgate
