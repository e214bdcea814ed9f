// Baselines from the history (perfgate run --baseline-from-history): for each
// scenario, the newest run of the suite that passed, on a host with this
// host's fingerprint (kernel, CPU model, CPU count), with its repetitions
// whole, so the rank test has samples. A run whose verdict failed (a
// regression or an error), a scenario that could not run and a run stored
// before the history kept repetitions are skipped, and said; a run whose only
// regressions were in alert groups marked `expected` counts as passing (a run
// whose regressions were all accepted passed already). When no run of
// this fingerprint qualifies, the newest good run of another machine is
// returned as foreign: its numbers decide no regression check unless the
// user opts in, as with a stored baseline from another machine.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "history/history_db.h"
#include "metrics/results.h"

namespace perfgate {

struct HistoryBaselineQuery {
  std::string suite;
  std::vector<std::string> scenarios;  // those that will run
  std::string branch;                  // empty: every branch
  Environment now;                     // this host's fingerprint
};

struct HistoryBaselines {
  std::map<std::string, ScenarioResult> scenarios;
  std::map<std::string, Environment> environments;  // where each scenario's baseline was recorded
  // Scenario -> what differs from this host, for baselines of another machine.
  std::map<std::string, std::string> foreign;
  // The runs used, in words with commit, date and host, and what was skipped
  // or missing: RunResults::baseline_source.
  std::string source;
  // One line per scenario without any passing run.
  std::vector<std::string> warnings;
};

// InputError naming the database when `query.branch` has no run at all.
// `db_name` is how the reports name the database (the path the user gave).
HistoryBaselines ChooseHistoryBaselines(const HistoryDb& db, const std::string& db_name,
                                        const HistoryBaselineQuery& query);

}  // namespace perfgate
