#include "report/outcome.h"

#include <algorithm>

#include "report/format.h"

namespace perfgate {

Outcome OutcomeOf(const CheckResult& check) {
  switch (check.verdict) {
    case Verdict::kPass:
      return Outcome::kPassed;
    case Verdict::kImprovement:
      return Outcome::kImproved;
    case Verdict::kInconclusive:
      return Outcome::kInconclusive;
    case Verdict::kError:
      return Outcome::kError;
    case Verdict::kRegression:
      return check.spec.type == CheckSpec::Type::kBudget ? Outcome::kOverBudget : Outcome::kRegressed;
    case Verdict::kAccepted:
      return Outcome::kAccepted;
    case Verdict::kQuarantined:
      return Outcome::kQuarantined;
  }
  return Outcome::kError;
}

std::string ToString(Outcome outcome) {
  switch (outcome) {
    case Outcome::kRegressed:
      return "regression";
    case Outcome::kOverBudget:
      return "over budget";
    case Outcome::kError:
      return "error";
    case Outcome::kInconclusive:
      return "inconclusive";
    case Outcome::kAccepted:
      return "accepted";
    case Outcome::kQuarantined:
      return "quarantined";
    case Outcome::kImproved:
      return "improvement";
    case Outcome::kPassed:
      return "pass";
  }
  return "error";
}

std::string Slug(Outcome outcome) {
  switch (outcome) {
    case Outcome::kRegressed:
      return "regressed";
    case Outcome::kOverBudget:
      return "over-budget";
    case Outcome::kError:
      return "error";
    case Outcome::kInconclusive:
      return "inconclusive";
    case Outcome::kAccepted:
      return "accepted";
    case Outcome::kQuarantined:
      return "quarantined";
    case Outcome::kImproved:
      return "improved";
    case Outcome::kPassed:
      return "passed";
  }
  return "error";
}

bool IsFailure(Outcome outcome) { return outcome == Outcome::kRegressed || outcome == Outcome::kOverBudget; }

bool IsTriaged(Outcome outcome) { return outcome == Outcome::kAccepted || outcome == Outcome::kQuarantined; }

bool NeedsAttention(Outcome outcome) {
  return IsFailure(outcome) || outcome == Outcome::kError || outcome == Outcome::kInconclusive;
}

void OutcomeCounts::Add(Outcome outcome) {
  switch (outcome) {
    case Outcome::kRegressed:
      ++regressed;
      break;
    case Outcome::kOverBudget:
      ++over_budget;
      break;
    case Outcome::kError:
      ++errors;
      break;
    case Outcome::kInconclusive:
      ++inconclusive;
      break;
    case Outcome::kAccepted:
      ++accepted;
      break;
    case Outcome::kQuarantined:
      ++quarantined;
      break;
    case Outcome::kImproved:
      ++improved;
      break;
    case Outcome::kPassed:
      ++passed;
      break;
  }
}

OutcomeCounts CountOutcomes(const ScenarioResult& scenario) {
  OutcomeCounts counts;
  if (!scenario.error.empty()) counts.Add(Outcome::kError);
  for (const CheckResult& check : scenario.checks) counts.Add(OutcomeOf(check));
  return counts;
}

OutcomeCounts CountOutcomes(const RunResults& results) {
  OutcomeCounts total;
  for (const ScenarioResult& scenario : results.scenarios) {
    OutcomeCounts c = CountOutcomes(scenario);
    total.regressed += c.regressed;
    total.over_budget += c.over_budget;
    total.errors += c.errors;
    total.inconclusive += c.inconclusive;
    total.accepted += c.accepted;
    total.quarantined += c.quarantined;
    total.improved += c.improved;
    total.passed += c.passed;
  }
  return total;
}

std::string DescribeCounts(const OutcomeCounts& c) {
  std::string text = Plural(c.regressed, "regression", "regressions");
  if (c.over_budget > 0) text += ", " + std::to_string(c.over_budget) + " over budget";
  if (c.errors > 0) text += ", " + Plural(c.errors, "error", "errors");
  text += ", " + std::to_string(c.inconclusive) + " inconclusive";
  if (c.accepted > 0) text += ", " + std::to_string(c.accepted) + " accepted";
  if (c.quarantined > 0) text += ", " + std::to_string(c.quarantined) + " quarantined";
  if (c.improved > 0) text += ", " + Plural(c.improved, "improvement", "improvements");
  text += ", " + std::to_string(c.passed) + " passed";
  return text;
}

std::string StatusWord(const RunResults& results) {
  switch (OverallVerdict(results)) {
    case Verdict::kError:
      return "ERROR";
    case Verdict::kRegression:
      return "FAIL";
    case Verdict::kInconclusive:
      return results.exit_code == 1 ? "FAIL" : "INCONCLUSIVE";
    case Verdict::kPass:
    case Verdict::kImprovement:
    case Verdict::kAccepted:
    case Verdict::kQuarantined:
      break;
  }
  return results.partial ? "INCOMPLETE" : "PASS";
}

std::vector<Finding> FindingsOf(const RunResults& results) {
  std::vector<Finding> findings;
  for (size_t i = 0; i < results.scenarios.size(); ++i) {
    const ScenarioResult& scenario = results.scenarios[i];
    if (!scenario.error.empty()) findings.push_back({&scenario, i, nullptr, Outcome::kError});
    for (const CheckResult& check : scenario.checks) {
      Outcome outcome = OutcomeOf(check);
      if (NeedsAttention(outcome)) findings.push_back({&scenario, i, &check, outcome});
    }
  }
  // Outcome's declaration order is its severity.
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.outcome < b.outcome; });
  return findings;
}

std::vector<Finding> TriagedOf(const RunResults& results) {
  std::vector<Finding> triaged;
  for (size_t i = 0; i < results.scenarios.size(); ++i) {
    const ScenarioResult& scenario = results.scenarios[i];
    for (const CheckResult& check : scenario.checks) {
      if (check.triage) triaged.push_back({&scenario, i, &check, OutcomeOf(check)});
    }
  }
  return triaged;
}

}  // namespace perfgate
