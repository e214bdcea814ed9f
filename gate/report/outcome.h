// How every reporter classifies and counts checks, so that the JUnit counts,
// the Markdown verdict line and the HTML header always agree.
#pragma once

#include <string>
#include <vector>

#include "metrics/results.h"

namespace perfgate {

// A check's verdict refined by its type: a failed budget check is "over
// budget", not a "regression" against a baseline it never had.
// Accepted and quarantined checks (gate/triage/) pass; a reader still sees them.
enum class Outcome { kRegressed, kOverBudget, kError, kInconclusive, kAccepted, kQuarantined, kImproved, kPassed };

Outcome OutcomeOf(const CheckResult& check);
// "regression", "over budget", "error", "inconclusive", "improvement", "pass".
std::string ToString(Outcome outcome);
// CSS class / slug: "regressed", "over-budget", "error", ...
std::string Slug(Outcome outcome);
// Regressed and over budget: the outcomes that fail the gate by themselves.
bool IsFailure(Outcome outcome);
// Everything a reader must look at: failures, errors, inconclusive checks.
bool NeedsAttention(Outcome outcome);
// Accepted or quarantined: passes because a person said so, shown with who and why.
bool IsTriaged(Outcome outcome);

struct OutcomeCounts {
  int regressed = 0;
  int over_budget = 0;
  int errors = 0;  // checks in error plus scenarios that failed to run
  int inconclusive = 0;
  int accepted = 0;
  int quarantined = 0;
  int improved = 0;
  int passed = 0;

  int total() const {
    return regressed + over_budget + errors + inconclusive + accepted + quarantined + improved + passed;
  }
  void Add(Outcome outcome);
};

OutcomeCounts CountOutcomes(const ScenarioResult& scenario);
OutcomeCounts CountOutcomes(const RunResults& results);
// "1 regression, 0 inconclusive, 12 passed" (zero errors/improvements/budget omitted).
std::string DescribeCounts(const OutcomeCounts& counts);

// The gate's decision in one word: "PASS", "FAIL", "ERROR", "INCONCLUSIVE"
// or "INCOMPLETE" (partial run). Inconclusive reads as FAIL when the run's
// exit code says --strict made it fail.
std::string StatusWord(const RunResults& results);

// One check that needs attention, with where it lives; a scenario that
// failed to run appears with check == nullptr.
struct Finding {
  const ScenarioResult* scenario = nullptr;
  size_t scenario_index = 0;
  const CheckResult* check = nullptr;
  Outcome outcome = Outcome::kError;
};

// All findings of the run, most severe outcome first, then in suite order.
std::vector<Finding> FindingsOf(const RunResults& results);
// The accepted and quarantined checks, and those whose acceptance was
// exceeded or whose quarantine expired, in suite order.
std::vector<Finding> TriagedOf(const RunResults& results);

}  // namespace perfgate
