#include "metrics/results.h"

#include <algorithm>

#include "base/quantity.h"

namespace perfgate {

std::string ToString(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kRegression:
      return "regression";
    case Verdict::kImprovement:
      return "improvement";
    case Verdict::kInconclusive:
      return "inconclusive";
    case Verdict::kError:
      return "error";
    case Verdict::kAccepted:
      return "accepted";
    case Verdict::kQuarantined:
      return "quarantined";
  }
  return "error";
}

std::optional<Verdict> ParseVerdict(const std::string& t) {
  for (Verdict v : {Verdict::kPass, Verdict::kRegression, Verdict::kImprovement, Verdict::kInconclusive,
                    Verdict::kError, Verdict::kAccepted, Verdict::kQuarantined}) {
    if (ToString(v) == t) return v;
  }
  return std::nullopt;
}

double DefaultMaxRegressionPct(std::string_view metric) {
  return IsInstructionCount(metric) ? kInstructionCountThresholdPct : kDefaultMaxRegressionPct;
}

std::string ToString(CheckSpec::Type t) { return t == CheckSpec::Type::kBudget ? "budget" : "regression"; }

void AddSkippedTrailers(RunResults& results, const std::vector<std::string>& skipped) {
  for (const std::string& line : skipped) {
    if (std::find(results.skipped_trailers.begin(), results.skipped_trailers.end(), line) ==
        results.skipped_trailers.end())
      results.skipped_trailers.push_back(line);
  }
}

Verdict OverallVerdict(const RunResults& results) {
  bool regression = false, inconclusive = false, improvement = false;
  for (const auto& s : results.scenarios) {
    if (!s.error.empty()) return Verdict::kError;
    for (const auto& c : s.checks) {
      if (c.verdict == Verdict::kError) return Verdict::kError;
      regression |= c.verdict == Verdict::kRegression;
      inconclusive |= c.verdict == Verdict::kInconclusive;
      improvement |= c.verdict == Verdict::kImprovement;
    }
  }
  if (regression) return Verdict::kRegression;
  if (inconclusive) return Verdict::kInconclusive;
  if (improvement) return Verdict::kImprovement;
  return Verdict::kPass;
}

int ExitCodeFor(const RunResults& results, bool strict) {
  switch (OverallVerdict(results)) {
    case Verdict::kError:
      return 3;
    case Verdict::kRegression:
      return 1;
    case Verdict::kInconclusive:
      return strict ? 1 : 0;
    default:
      return results.partial ? 3 : 0;
  }
}

std::vector<std::string> EnvironmentMismatches(const Environment& baseline, const Environment& now) {
  std::vector<std::string> out;
  auto compare = [&](const char* what, const std::string& then, const std::string& current) {
    if (then != current) out.push_back(std::string(what) + ": " + then + " (baseline) vs " + current + " (now)");
  };
  compare("kernel", baseline.kernel, now.kernel);
  compare("CPU model", baseline.cpu_model, now.cpu_model);
  compare("CPU count", std::to_string(baseline.cpu_count), std::to_string(now.cpu_count));
  return out;
}

std::string CheckName(const CheckResult& check) {
  if (!check.spec.name.empty()) return check.spec.name;
  const std::string& statistic = check.statistic.empty() ? check.spec.statistic : check.statistic;
  return statistic.empty() ? check.spec.metric : check.spec.metric + "." + statistic;
}

const CheckResult* FindCheck(const ScenarioResult& scenario, const std::string& name) {
  for (const CheckResult& check : scenario.checks) {
    if (CheckName(check) == name) return &check;
  }
  return nullptr;
}

std::string ToString(HostSpeed::Direction direction) {
  switch (direction) {
    case HostSpeed::Direction::kSteady:
      return "steady";
    case HostSpeed::Direction::kSlower:
      return "slower";
    case HostSpeed::Direction::kFaster:
      return "faster";
  }
  return "steady";
}

std::string DescribeHostSpeed(const HostSpeed& speed) {
  const std::string share =
      speed.share < 1 ? ", on the " + FormatValue("%.0f", 100 * speed.share) + " % of the workload's time it stands for"
                      : "";
  const std::string canary = "(canary: " + speed.canary + " " + FormatValue("%+.1f", speed.change_pct) + " %, " +
                             FormatValue("%.0f", 100 * speed.confidence) + " % CI " +
                             FormatValue("%+.1f", speed.low_pct) + " … " + FormatValue("%+.1f", speed.high_pct) + " %" +
                             share + ")";
  switch (speed.direction) {
    case HostSpeed::Direction::kSlower:
      return "the host ran " + FormatValue("%.0f", speed.Effective(speed.change_pct)) +
             " % slower than when the baseline was recorded " + canary;
    case HostSpeed::Direction::kFaster:
      return "the host ran faster than when the baseline was recorded " + canary;
    case HostSpeed::Direction::kSteady:
      break;
  }
  return "the host's speed was as when the baseline was recorded " + canary;
}

}  // namespace perfgate
