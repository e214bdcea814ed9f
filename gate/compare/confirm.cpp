#include "compare/confirm.h"

#include <cstdio>
#include <utility>

#include "base/quantity.h"
#include "compare/adaptive.h"
#include "compare/deterministic.h"

namespace perfgate {

std::map<std::string, std::vector<size_t>> ChecksToConfirm(const RunResults& run) {
  std::map<std::string, std::vector<size_t>> flagged;
  for (const ScenarioResult& scenario : run.scenarios) {
    for (size_t i = 0; i < scenario.checks.size(); ++i) {
      const CheckResult& check = scenario.checks[i];
      // A near-deterministic check decided by its interval was never
      // screened at a level: nothing for a confirmation to confirm.
      const bool by_interval = IsNearDeterministic(check.spec.metric) && !check.p_value;
      if (check.spec.type == CheckSpec::Type::kRegression && check.verdict == Verdict::kRegression && !by_interval)
        flagged[scenario.name].push_back(i);
    }
  }
  return flagged;
}

namespace {

// "7 fresh pairs, 1.2 s": interleaved pairs (ab) or repetitions of the
// candidate alone (against stored numbers).
std::string Cost(int pairs, double seconds, bool interleaved) {
  return std::to_string(pairs) + (interleaved ? " fresh pairs, " : " fresh repetitions, ") +
         FormatValue("%.1f", seconds) + " s";
}

}  // namespace

CompareOptions ConfirmationOptions(const CompareOptions& options) {
  CompareOptions confirm = options;
  confirm.alpha = options.screen_alpha > 0 ? options.alpha / options.screen_alpha : options.alpha;
  confirm.screen_alpha = 0;
  confirm.family_size_at_least = 0;
  return confirm;
}

namespace {

// `measured` (its samples) with only the checks `flagged` of `declared`
// (indices into the scenario's checks as the suite declared them).
ScenarioResult WithFlaggedChecks(const ScenarioResult& measured, const ScenarioResult& declared,
                                 const std::vector<size_t>& flagged) {
  ScenarioResult only = measured;
  only.checks.clear();
  for (size_t i : flagged) {
    if (i < declared.checks.size()) only.checks.push_back(declared.checks[i]);
  }
  return only;
}

}  // namespace

bool ConfirmationNeedsMore(const ScenarioResult& so_far, const ScenarioResult& baseline,
                           const std::vector<size_t>& flagged, const Environment& environment,
                           const CompareOptions& options, size_t family_size) {
  return NeedsMoreRepetitions(WithFlaggedChecks(so_far, so_far, flagged), &baseline, environment,
                              ConfirmationOptions(options), family_size);
}

void ApplyConfirmation(RunResults& run, const std::map<std::string, ScenarioResult>& again,
                       const std::map<std::string, ScenarioResult>& again_baseline, const CompareOptions& options,
                       const std::map<std::string, double>& seconds) {
  const std::map<std::string, std::vector<size_t>> flagged = ChecksToConfirm(run);
  if (flagged.empty()) return;

  // The confirmation round: only the flagged checks, one family, decided at
  // alpha / screen_alpha.
  RunResults round;
  round.environment = run.environment;
  for (const auto& [name, indices] : flagged) {
    auto fresh = again.find(name);
    if (fresh == again.end()) continue;
    const ScenarioResult* first = nullptr;
    for (const ScenarioResult& s : run.scenarios) {
      if (s.name == name) first = &s;
    }
    round.scenarios.push_back(WithFlaggedChecks(fresh->second, *first, indices));
  }
  EvaluateChecks(round, again_baseline, ConfirmationOptions(options));

  for (ScenarioResult& scenario : run.scenarios) {
    auto indices = flagged.find(scenario.name);
    if (indices == flagged.end()) continue;
    const ScenarioResult* decided = nullptr;
    for (const ScenarioResult& s : round.scenarios) {
      if (s.name == scenario.name) decided = &s;
    }
    const auto cost = seconds.find(scenario.name);
    const double spent = cost == seconds.end() ? 0 : cost->second;
    for (size_t k = 0; k < indices->second.size(); ++k) {
      CheckResult& check = scenario.checks[indices->second[k]];
      CheckResult::Confirmation confirmation;
      confirmation.first = check.message;
      confirmation.seconds = spent;
      if (decided == nullptr) {
        check.verdict = Verdict::kInconclusive;
        check.message += "; inconclusive: not confirmed, its confirmation round could not run";
        check.confirmation = std::move(confirmation);
        continue;
      }
      const CheckResult& fresh = decided->checks[k];
      confirmation.pairs = fresh.pairs > 0 ? fresh.pairs : static_cast<int>(fresh.candidate_values.size());
      confirmation.confirmed = fresh.verdict == Verdict::kRegression;
      if (confirmation.confirmed) {
        check.message +=
            "; confirmed in " + Cost(confirmation.pairs, spent, options.interleaved) + ": " + fresh.message;
      } else {
        // The fresh pairs decide; the first round's numbers stay in the message.
        const std::string first = check.message;
        check = fresh;
        check.message = "not confirmed in " + Cost(confirmation.pairs, spent, options.interleaved) + ": " +
                        fresh.message + " (the first round had shown " + first + ")";
      }
      check.confirmation = std::move(confirmation);
    }
  }
}

}  // namespace perfgate
