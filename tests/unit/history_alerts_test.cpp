// The alerts in the history, on both backends: groups stored once, perfgate's
// own state changes, `alerts set` keeping every change with who and when, and
// eight processes setting states at once losing none.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "harness/history_backends.h"
#include "history/alerts.h"
#include "history/history_db.h"
#include "history/history_store.h"
#include "history/trend.h"

namespace perfgate {
namespace {

std::string Night(int day) {
  char ts[32];
  std::snprintf(ts, sizeof ts, "2026-10-%02dT02:00:00Z", day);
  return ts;
}

// A night of suite "nightly": one scenario whose wall-time check said `verdict`.
RunResults NightRun(int day, Verdict verdict) {
  RunResults r;
  r.suite = "nightly";
  r.environment.timestamp = Night(day);
  r.environment.hostname = "runner";
  ScenarioResult s;
  s.name = "camera";
  Repetition rep;
  rep.metrics["workload.wall_time"] = ScalarMetric("workload.wall_time", 1.0, "s");
  s.repetitions.push_back(rep);
  CheckResult c;
  c.spec.name = "wall";
  c.spec.metric = "workload.wall_time";
  c.statistic = "value";
  c.verdict = verdict;
  s.checks.push_back(c);
  r.scenarios.push_back(s);
  r.verdict = verdict == Verdict::kRegression ? Verdict::kRegression : Verdict::kPass;
  return r;
}

AlertGroup Group(int before, int after, double change_pct, const std::string& metric = "workload.wall_time") {
  AlertGroup g;
  g.suite = "nightly";
  g.branch = "main";
  g.commit_before = "c" + std::to_string(before);
  g.commit_after = "c" + std::to_string(after);
  g.timestamp_before = Night(before);
  g.timestamp_after = Night(after);
  g.metrics.push_back({"camera", metric, "value", "s", 1.0, 1.0 + change_pct / 100, change_pct, 1e-6, change_pct > 0});
  return g;
}

class HistoryAlerts : public ::testing::TestWithParam<testing::HistoryBackend> {
 protected:
  void SetUp() override {
    PERFGATE_REQUIRE_HISTORY_BACKEND(GetParam());
    history_ = std::make_unique<testing::TestHistory>(GetParam());
  }
  const std::string& location() const { return history_->location(); }
  testing::TestHistory& h() { return *history_; }

 private:
  std::unique_ptr<testing::TestHistory> history_;
};
INSTANTIATE_TEST_SUITE_P(Backends, HistoryAlerts,
                         ::testing::Values(testing::HistoryBackend::kSqlite, testing::HistoryBackend::kPostgres),
                         testing::BackendName);

TEST_P(HistoryAlerts, EachGroupIsStoredOnceAndAcceptedRangesBecomeExpected) {
  HistoryDb db = HistoryDb::Open(location());
  EXPECT_EQ(db.SchemaVersion(), kHistorySchemaVersion);
  for (int day = 1; day <= 30; ++day) {
    // Night 11 accepted its step (a merge with an accept trailer); night 21 did not.
    const Verdict v = day == 11 ? Verdict::kAccepted : day == 21 ? Verdict::kRegression : Verdict::kPass;
    ASSERT_TRUE(db.AddRun(NightRun(day, v), {"c" + std::to_string(day), "main"}));
  }
  HistoryDb::RecordedAlerts recorded = db.RecordAlerts({Group(10, 11, 20), Group(20, 21, 15)});
  EXPECT_EQ(recorded.added.size(), 2u);
  ASSERT_EQ(recorded.changed.size(), 1u);
  EXPECT_EQ(recorded.changed[0].update.state, AlertState::kExpected);
  std::vector<AlertGroup> alerts = db.Alerts();
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[0].state, AlertState::kExpected);
  EXPECT_EQ(alerts[1].state, AlertState::kNew);
  ASSERT_EQ(alerts[0].metrics.size(), 1u);
  EXPECT_DOUBLE_EQ(alerts[0].metrics[0].change_pct, 20);
  // The next night's trend finds the same ranges: nothing new, nothing changed.
  recorded = db.RecordAlerts({Group(10, 11, 20), Group(20, 21, 15)});
  EXPECT_TRUE(recorded.added.empty());
  EXPECT_TRUE(recorded.changed.empty());
  EXPECT_EQ(h().Count("alert_groups"), 2);
  // A later step back fixes the second.
  recorded = db.RecordAlerts({Group(25, 26, -13)});
  ASSERT_EQ(recorded.changed.size(), 1u);
  EXPECT_EQ(recorded.changed[0].id, alerts[1].id);
  EXPECT_EQ(db.Alert(alerts[1].id).state, AlertState::kFixed);
  const AlertGroup fixed = db.Alert(alerts[1].id);
  ASSERT_EQ(fixed.changes.size(), 2u);
  EXPECT_EQ(fixed.changes[1].by, "perfgate");
  EXPECT_NE(fixed.changes[1].note.find("moved back"), std::string::npos);
}

TEST_P(HistoryAlerts, SetKeepsEveryChangeWithWhoAndWhenAndRefusesAMissingGroup) {
  HistoryDb db = HistoryDb::Open(location());
  const int64_t id = db.RecordAlerts({Group(10, 11, 20)}).added.at(0);
  db.SetAlert(
      id, {.state = AlertState::kAcknowledged, .owner = "ana", .bug = {}, .by = "ana", .note = "", .only_from = {}});
  db.SetAlert(
      id, {.state = {}, .owner = {}, .bug = "https://bugs.example.org/12", .by = "bo", .note = "", .only_from = {}});
  db.SetAlert(id,
              {.state = AlertState::kInvalid, .owner = {}, .bug = {}, .by = "ana", .note = "noise", .only_from = {}});
  const AlertGroup g = db.Alert(id);
  EXPECT_EQ(g.state, AlertState::kInvalid);
  EXPECT_EQ(g.owner, "ana");
  EXPECT_EQ(g.bug, "https://bugs.example.org/12");
  ASSERT_EQ(g.changes.size(), 4u);  // found, then three changes: none replaced
  EXPECT_EQ(g.changes[0].state, AlertState::kNew);
  EXPECT_EQ(g.changes[1].by, "ana");
  EXPECT_EQ(g.changes[2].by, "bo");
  EXPECT_EQ(g.changes[2].state, AlertState::kAcknowledged);
  EXPECT_EQ(g.changes[3].note, "noise");
  EXPECT_FALSE(g.changes[3].at.empty());
  // perfgate does not overrule a person: an invalid group stays invalid.
  EXPECT_TRUE(db.RecordAlerts({Group(10, 11, 20), Group(15, 16, -20)}).changed.empty());
  try {
    db.SetAlert(id + 100,
                {.state = AlertState::kFixed, .owner = {}, .bug = {}, .by = "ana", .note = "", .only_from = {}});
    ADD_FAILURE() << "no error for a missing alert";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("no alert " + std::to_string(id + 100)), std::string::npos) << e.what();
  }
  EXPECT_THROW(
      db.SetAlert(id,
                  {.state = {}, .owner = {}, .bug = "javascript:alert(1)", .by = "ana", .note = "", .only_from = {}}),
      Error);
  EXPECT_THROW(db.SetAlert(id, {.state = {}, .owner = {}, .bug = {}, .by = "ana", .note = "", .only_from = {}}), Error);
  // The group's four changes and the found row of the group added above.
  EXPECT_EQ(h().Count("alert_changes"), 5);
}

TEST_P(HistoryAlerts, EightProcessesSettingAtOnceLoseNoChange) {
  const int64_t id = HistoryDb::Open(location()).RecordAlerts({Group(10, 11, 20)}).added.at(0);
  constexpr int kProcesses = 8;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int failed = 0;
      try {
        // Even processes set the owner, odd ones the bug; every one a state.
        HistoryDb db = HistoryDb::Open(location());
        AlertUpdate u;
        u.state = p % 2 == 0 ? AlertState::kAcknowledged : AlertState::kInvalid;
        if (p % 2 == 0) u.owner = "owner" + std::to_string(p);
        if (p % 2 == 1) u.bug = "https://bugs.example.org/" + std::to_string(p);
        u.by = "job" + std::to_string(p);
        for (int i = 0; i < 5; ++i) db.SetAlert(id, u);
      } catch (const Error& e) {
        std::fprintf(stderr, "process %d: %s\n", p, e.what());
        failed = 1;
      }
      _exit(failed);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a process failed";
  }
  const AlertGroup g = HistoryDb::OpenExisting(location()).Alert(id);
  ASSERT_EQ(g.changes.size(), 1u + kProcesses * 5);
  std::multiset<std::string> by;
  for (size_t i = 1; i < g.changes.size(); ++i) by.insert(g.changes[i].by);
  for (int p = 0; p < kProcesses; ++p) EXPECT_EQ(by.count("job" + std::to_string(p)), 5u) << p;
  // Neither field was lost: the owner of an even job and the bug of an odd one.
  EXPECT_EQ(g.owner.rfind("owner", 0), 0u) << g.owner;
  EXPECT_EQ(g.bug.rfind("https://bugs.example.org/", 0), 0u) << g.bug;
  // Each change saw the one before it: a change carries the fields it did not set.
  for (size_t i = 2; i < g.changes.size(); ++i) {
    if (!g.changes[i - 1].owner.empty()) {
      EXPECT_FALSE(g.changes[i].owner.empty()) << i;
    }
    if (!g.changes[i - 1].bug.empty()) {
      EXPECT_FALSE(g.changes[i].bug.empty()) << i;
    }
  }
  EXPECT_EQ(g.state, g.changes.back().state);
}

TEST(HistorySchema, TheAlertTablesAreWrittenOnceForBothDialects) {
  const HistoryMigration& m = HistoryMigrations().at(4);
  EXPECT_NE(m.sqlite.find("id INTEGER PRIMARY KEY"), std::string::npos);
  EXPECT_NE(m.postgres.find("id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"), std::string::npos);
  EXPECT_EQ(m.sqlite.find("IDENTITY_KEY"), std::string::npos);
  EXPECT_EQ(m.postgres.find("IDENTITY_KEY"), std::string::npos);
}

}  // namespace
}  // namespace perfgate
