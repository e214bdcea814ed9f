// Nightly alerts: every change point `perfgate trend` finds becomes part of
// an alert group, one per suite and commit range (the last run before the
// change and the first after it), holding every series that moved there.
// A group has a state, an owner and a bug link; every change of them is kept
// with who made it and when, and nothing is ever deleted. Two states are set
// by perfgate itself (AutomaticAlertChanges): `expected` when every series
// that moved for the worse was accepted (an accept trailer or --accept) by a
// run in the range, and `fixed` when each of them moved back in a later
// change point. The groups live in the history (HistoryDb::RecordAlerts).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>


namespace perfgate {

struct TrendSeries;  // history/trend.h

enum class AlertState { kNew, kAcknowledged, kExpected, kInvalid, kFixed };

std::string ToString(AlertState state);
std::optional<AlertState> ParseAlertState(const std::string& text);
// "new, acknowledged, expected, invalid, fixed": for messages and help.
std::string AlertStateNames();

// One series' change point in a group.
struct AlertMetric {
  std::string scenario, metric, statistic, unit;
  double before = 0, after = 0;  // the means of the runs on either side
  double change_pct = 0;
  double p_value = 1;
  bool for_the_worse = false;
};

// One stored change of a group, oldest first: what the group became.
struct AlertChange {
  int64_t id = 0;
  std::string at, by;
  AlertState state = AlertState::kNew;
  std::string owner, bug, note;
};

struct AlertGroup {
  int64_t id = 0;  // 0 until stored
  std::string suite;
  std::string branch;  // the branch the trend looked at; empty: every branch
  std::string commit_before, commit_after;
  std::string timestamp_before, timestamp_after;  // of those runs
  AlertState state = AlertState::kNew;
  std::string owner, bug;
  std::string created_at, updated_at;
  std::vector<AlertMetric> metrics;  // by scenario, metric, statistic
  std::vector<AlertChange> changes;  // loaded by HistoryDb::Alert only
};

// A change of a group's state, owner or bug (`alerts set`, or perfgate's own).
struct AlertUpdate {
  std::optional<AlertState> state;
  std::optional<std::string> owner, bug;
  std::string by;    // who
  std::string note;  // why, when perfgate made it
  // Applied only when the group is in one of these states (empty: always):
  // perfgate's own changes never overrule a person's.
  std::vector<AlertState> only_from;
};

// A check a stored run accepted: what `expected` is decided from.
struct AcceptedCheck {
  std::string scenario, metric, statistic;
  std::string commit;
};

// The change points of the trends grouped per suite and commit range, each
// group's series sorted; `branch` is the one the trend looked at.
std::vector<AlertGroup> GroupChangePoints(const std::vector<TrendSeries>& trends, const std::string& branch);

// Whether every series of `group` that moved for the worse is a metric that
// `accepted` (the accepted checks of the runs in the group's range) covers.
// A group that moved nothing for the worse is not expected: nothing was accepted.
bool AcceptedInRange(const AlertGroup& group, const std::vector<AcceptedCheck>& accepted);

// Whether every series of `group` that moved for the worse moved back in a
// later group (a change of the opposite sign in the same series and branch).
// `later`: the later group that moved the last of them back, when it did.
bool MovedBack(const AlertGroup& group, const std::vector<AlertGroup>& all, const AlertGroup** later = nullptr);

// What perfgate changes by itself: `expected` for a new group accepted in its
// range, `fixed` for a new or acknowledged group that moved back.
// `accepted(group)`: the accepted checks of the runs in the group's range.
struct AlertTransition {
  int64_t id = 0;
  AlertUpdate update;
};
std::vector<AlertTransition> AutomaticAlertChanges(
    const std::vector<AlertGroup>& groups,
    const std::function<std::vector<AcceptedCheck>(const AlertGroup&)>& accepted);

// Whether the regressed checks of a stored run (scenario, metric) are all in
// a group that is `expected` (the newest group for the worse of that series
// up to the run's time): such a night is as good as a passing one.
struct RegressedCheck {
  std::string scenario, metric;
};
bool OnlyExpectedRegressions(const std::vector<RegressedCheck>& regressed, const std::string& run_timestamp,
                             const std::string& run_branch, const std::vector<AlertGroup>& groups);

// InputError naming `option` unless `url` is an http(s) URL without spaces or control characters.
void CheckBugLink(const std::string& url, const std::string& option);
// InputError naming `option` for an empty text or one with control characters.
void CheckAlertName(const std::string& text, const std::string& option);

// For `alerts list|show --json`.
nlohmann::json AlertToJson(const AlertGroup& group);
// The body of an issue for the group (`alerts show --markdown`): what moved,
// the commit range, its state and history; everything stored is escaped.
std::string AlertMarkdown(const AlertGroup& group, const std::string& history_name);
// One line of `alerts list`.
std::string AlertLine(const AlertGroup& group);

}  // namespace perfgate
