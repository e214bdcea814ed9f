// What a history backend implements (history_db.h is the interface the rest
// of perfgate uses). The schema is one list of forward migrations, each
// written once per SQL dialect, so that both backends are always at the same
// version; a later table (the triage alerts) is one more entry.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "history/alerts.h"
#include "history/history_db.h"

namespace perfgate {

struct HistoryMigration {
  std::string sqlite;
  std::string postgres;
};
// A migration written once for both dialects: types both accept (text,
// integer, bigint, double precision), and IDENTITY_KEY where a table's own
// id goes (SQLite's rowid alias, PostgreSQL's identity column).
HistoryMigration BothDialects(const std::string& sql);
// Entry i brings a database from schema version i to i + 1.
const std::vector<HistoryMigration>& HistoryMigrations();

// What HistoryDb::Series reads, in three narrow parts that it puts in order
// itself: a year of a suite's values is millions of rows, and sorting them as
// wide text rows in the database cost ten times more than reading ids.
struct SeriesRun {
  int64_t id = 0;
  std::string suite, commit, branch, timestamp;
};
struct StoredSeries {
  int64_t id = 0;
  SeriesKey key;  // scenario, metric, statistic, unit, better
};
struct SeriesValue {
  int64_t run_id = 0, series_id = 0, repetition = 0;
  double value = 0;
};

// A paired run's check that has a change (schema 7).
struct StoredPairedCheck {
  int64_t run_id = 0;
  std::string scenario, metric, statistic;
  PairedChange change;
};

// A packed scenario result as stored.
struct PackedResult {
  std::string zlib;
  int64_t bytes = 0;
};

class HistoryStore {
 public:
  virtual ~HistoryStore() = default;
  // The path, or the URL without its password.
  const std::string& Name() const { return name_; }

  virtual int SchemaVersion() = 0;
  // One transaction; false, storing nothing, when the run is already there.
  virtual bool Insert(const StoredRun& run) = 0;
  virtual int64_t RunCount() = 0;
  // The runs of the filter's suite and branch, ordered by suite, run time and id.
  virtual std::vector<SeriesRun> SeriesRuns(const SeriesFilter& filter) = 0;
  // The series of the filter's statistics, ordered by scenario, metric, statistic and id.
  virtual std::vector<StoredSeries> SeriesOf(const SeriesFilter& filter) = 0;
  // Every value of those runs and series, in no particular order.
  virtual void ForEachValue(const std::vector<int64_t>& run_ids, const std::vector<int64_t>& series_ids,
                            const std::function<void(const SeriesValue&)>& visit) = 0;
  virtual std::vector<std::string> Branches() = 0;
  // The checks with a change of the filter's paired runs (a reference commit).
  virtual std::vector<StoredPairedCheck> PairedChecks(const SeriesFilter& filter) = 0;
  // The runs of `suite` (every suite when empty) on `branch` (every branch when empty), newest first,
  // without their scenarios (has_scenario false); `limit` 0: all.
  virtual std::vector<StoredScenarioRun> RunHeaders(const std::string& suite, const std::string& branch,
                                                    size_t limit) = 0;
  // Which of `scenarios` each of the runs keeps whole: (run id, scenario).
  virtual std::vector<std::pair<int64_t, std::string>> StoredScenarios(const std::vector<int64_t>& run_ids,
                                                                       const std::vector<std::string>& scenarios) = 0;
  // The kept results of those of `scenarios` the run has: (scenario, result).
  virtual std::vector<std::pair<std::string, PackedResult>> ScenarioResults(
      int64_t run_id, const std::vector<std::string>& scenarios) = 0;
  virtual void ForEachStoredRun(const std::function<void(const StoredRun&)>& visit) = 0;
  virtual void ReplaceChangePoints(const std::vector<SeriesChangePoints>& series, const std::string& now) = 0;
  virtual std::vector<SeriesChangePoints> ChangePoints() = 0;

  // The alerts (history/alerts.h). Adds the group with its series and its
  // first change (state new) unless a group of the same suite, branch and
  // commits is stored; its id either way, and whether it was added.
  virtual std::pair<int64_t, bool> AddAlertGroup(const AlertGroup& group, const std::string& now) = 0;
  // Every group (of `suite`, every suite when empty) with its series, oldest first.
  virtual std::vector<AlertGroup> AlertGroups(const std::string& suite) = 0;
  virtual std::vector<AlertChange> AlertChanges(int64_t id) = 0;
  // One transaction: the group's row locked, the update applied (unless its
  // state is not among update.only_from) and stored as a change.
  enum class UpdateResult { kChanged, kMissing, kSkipped };
  virtual UpdateResult UpdateAlert(int64_t id, const AlertUpdate& update, const std::string& now) = 0;
  // The accepted checks of the suite's runs after `after` up to `up_to` (run
  // timestamps) on `branch` (every branch when empty).
  virtual std::vector<AcceptedCheck> AcceptedChecks(const std::string& suite, const std::string& branch,
                                                    const std::string& after, const std::string& up_to) = 0;
  // The checks of a stored run that regressed.
  virtual std::vector<RegressedCheck> RegressedChecks(int64_t run_id) = 0;

 protected:
  explicit HistoryStore(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

// mode: how HistoryDb opened the history.
enum class OpenMode { kCreate, kExisting, kReadOnly };
std::unique_ptr<HistoryStore> OpenSqliteHistory(const std::string& file, OpenMode mode);
std::unique_ptr<HistoryStore> OpenPostgresHistory(const std::string& url, OpenMode mode);

// The message for a database whose schema is newer than this perfgate's.
std::string NewerSchemaMessage(const std::string& name, int version);

}  // namespace perfgate
