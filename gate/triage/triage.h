// Applies what people decided about checks to a run's verdicts: regressions
// accepted within a bound (acceptance.h) and checks quarantined until a date
// (the suite's `quarantine` list). Runs after the checks are evaluated (and
// confirmed); neither accepted nor quarantined checks fail the run.
#pragma once

#include <string>
#include <vector>

#include "config/suite.h"
#include "metrics/results.h"
#include "triage/acceptance.h"

namespace perfgate {

// Today's date for quarantines, YYYY-MM-DD: `option` when set (--today), else
// PERFGATE_TODAY, else the UTC date of the clock. InputError for a bad date,
// naming where it came from.
std::string TriageToday(const std::string& option);

// The change of `check` in its worse direction, as an estimate and as the
// high end of its confidence interval (the estimate when there is none):
// for a lower-is-better metric the change itself, for higher-is-better its negation.
double WorseChangePct(const CheckResult& check);
double WorseChangeHighPct(const CheckResult& check);

// The rule: a regression is accepted only when the high end of its change's
// confidence interval is within the bound, so an accepted check is one whose
// data rule out a change beyond what was accepted; else it stays a regression
// and says by how much it exceeded the bound. An inconclusive check within
// the bound is accepted too (else left alone); acceptances of checks that
// passed or improved change nothing. Several acceptances of one check: the largest
// bound applies.
//
// A quarantined check (today <= until) becomes `quarantined` whatever it
// measured, with what it would have been; after `until` it is live again and
// says that its quarantine expired. Quarantine comes before acceptance.
//
// Sets each touched check's `triage`; the caller recomputes the run's verdict.
void ApplyTriage(RunResults& results, const std::vector<Acceptance>& acceptances,
                 const std::vector<QuarantineEntry>& quarantine, const std::string& today);

}  // namespace perfgate
