#include "triage/triage.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "base/error.h"
#include "report/format.h"

namespace perfgate {

namespace {

std::string Points(double pp) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", pp);
  return std::string(buffer) + (std::fabs(pp) == 1.0 ? " point" : " points");
}

std::string Bound(double pct) { return "<= " + FormatPercent(pct); }

const QuarantineEntry* QuarantineOf(const std::vector<QuarantineEntry>& quarantine, const std::string& scenario,
                                    const std::string& check) {
  for (const QuarantineEntry& q : quarantine) {
    if (q.scenario == scenario && q.check == check) return &q;
  }
  return nullptr;
}

const Acceptance* AcceptanceOf(const std::vector<Acceptance>& acceptances, const std::string& scenario,
                               const std::string& check) {
  const Acceptance* widest = nullptr;
  for (const Acceptance& a : acceptances) {
    if (a.scenario == scenario && a.check == check && (!widest || a.bound_pct > widest->bound_pct)) widest = &a;
  }
  return widest;
}

// "+12.0% [+9.1%, +15.2%]", or what the check said when it has no change.
std::string Measured(const CheckResult& check) {
  return HasBaseline(check) ? FormatChange(check) : FormatCandidate(check);
}

void Quarantine(CheckResult& check, const QuarantineEntry& q, const std::string& today) {
  CheckResult::Triage t;
  t.measured = check.verdict;
  t.reason = q.reason;
  t.by = q.owner;
  t.until = q.until;
  if (today > q.until) {
    t.state = "expired";
    t.note = "quarantine by " + q.owner + " expired on " + q.until + ": live again (" + q.reason + ")";
  } else {
    t.state = "quarantined";
    const bool failing = check.verdict == Verdict::kRegression || check.verdict == Verdict::kError ||
                         check.verdict == Verdict::kInconclusive;
    t.note =
        "quarantined until " + q.until + " by " + q.owner + " (" + q.reason + "): would have " +
        (failing ? (check.verdict == Verdict::kRegression ? std::string("failed") : "been " + ToString(check.verdict))
                 : std::string("passed")) +
        ": " + Measured(check);
    check.verdict = Verdict::kQuarantined;
  }
  check.triage = std::move(t);
}

void Accept(CheckResult& check, const Acceptance& a) {
  CheckResult::Triage t;
  t.measured = check.verdict;
  t.bound_pct = a.bound_pct;
  t.reason = a.reason;
  t.by = a.by;
  const std::string who = a.by == "--accept" ? "by --accept" : "in " + a.by;
  const double estimate = WorseChangePct(check), high = WorseChangeHighPct(check);
  if (high <= a.bound_pct) {
    t.state = "accepted";
    t.note =
        "accepted " + who + " (" + a.reason + "): " + Measured(check) + ", within the accepted " + Bound(a.bound_pct);
    check.verdict = Verdict::kAccepted;
  } else {
    t.state = "exceeded";
    t.note = estimate > a.bound_pct
                 ? "exceeds the accepted " + Bound(a.bound_pct) + " by " + Points(estimate - a.bound_pct) + ": " +
                       Measured(check) + " (accepted " + who + ": " + a.reason + ")"
                 : "its interval's high end " + FormatPercent(high) + " exceeds the accepted " + Bound(a.bound_pct) +
                       " by " + Points(high - a.bound_pct) + ": " + Measured(check) + " (accepted " + who + ": " +
                       a.reason + ")";
  }
  check.triage = std::move(t);
}

}  // namespace

std::string TriageToday(const std::string& option) {
  std::string today = option, from = "--today";
  if (today.empty()) {
    if (const char* env = std::getenv("PERFGATE_TODAY"); env && *env) {
      today = env;
      from = "PERFGATE_TODAY";
    }
  }
  if (today.empty()) {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char buffer[16];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%d", &utc);
    return buffer;
  }
  if (!IsCalendarDate(today)) throw InputError(from + ": \"" + today + "\" is not a date (YYYY-MM-DD)");
  return today;
}

double WorseChangePct(const CheckResult& check) {
  return check.better == Better::kHigher ? -check.change_pct : check.change_pct;
}

double WorseChangeHighPct(const CheckResult& check) {
  const std::optional<double>& end =
      check.better == Better::kHigher ? check.change_ci_low_pct : check.change_ci_high_pct;
  if (!end) return WorseChangePct(check);
  const double high = check.better == Better::kHigher ? -*end : *end;
  // An interval that does not contain its estimate (rounding) never makes the rule looser.
  return std::max(high, WorseChangePct(check));
}

void ApplyTriage(RunResults& results, const std::vector<Acceptance>& acceptances,
                 const std::vector<QuarantineEntry>& quarantine, const std::string& today) {
  for (ScenarioResult& scenario : results.scenarios) {
    for (CheckResult& check : scenario.checks) {
      if (check.triage) continue;  // decided once; a re-rendered run keeps what it was given
      const std::string name = CheckName(check);
      const QuarantineEntry* q = QuarantineOf(quarantine, scenario.name, name);
      if (q) Quarantine(check, *q, today);
      const bool regressed = check.verdict == Verdict::kRegression;
      // An inconclusive check whose interval is within the bound is decided
      // by the acceptance too: whatever the change, it is one that was accepted.
      const bool open = check.verdict == Verdict::kInconclusive;
      if ((!regressed && !open) || check.spec.type == CheckSpec::Type::kBudget) continue;
      const Acceptance* a = AcceptanceOf(acceptances, scenario.name, name);
      if (a && open && WorseChangeHighPct(check) > a->bound_pct) continue;
      if (a) {
        // An expired quarantine's note gives way to the acceptance that now decides.
        check.triage.reset();
        Accept(check, *a);
      }
    }
  }
}

}  // namespace perfgate
