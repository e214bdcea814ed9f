// What a history backend implements (history_db.h is the interface the rest
// of perfgate uses). The schema is one list of forward migrations, each
// written once per SQL dialect, so that both backends are always at the same
// version; a later table (the triage alerts) is one more entry.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "history/history_db.h"

namespace perfgate {

struct HistoryMigration {
  const char* sqlite;
  const char* postgres;
};
// Entry i brings a database from schema version i to i + 1.
const std::vector<HistoryMigration>& HistoryMigrations();

// One stored value with the series and run it belongs to, in the order
// HistoryDb::Series wants: suite, scenario, metric, statistic, run time, run
// id, repetition.
struct SeriesRow {
  std::string suite, scenario, metric, statistic, unit, better;
  int64_t run_id = 0;
  std::string commit, branch, timestamp;
  double value = 0;
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
  virtual void ForEachSeriesRow(const SeriesFilter& filter, const std::function<void(const SeriesRow&)>& visit) = 0;
  virtual std::vector<std::string> Branches() = 0;
  // Newest first, results not loaded.
  virtual std::vector<StoredScenarioRun> ScenarioRunHeaders(const std::string& suite, const std::string& scenario,
                                                            const std::string& branch, size_t limit) = 0;
  virtual std::optional<PackedResult> ScenarioResult(int64_t run_id, const std::string& scenario) = 0;
  virtual void ForEachStoredRun(const std::function<void(const StoredRun&)>& visit) = 0;
  virtual void ReplaceChangePoints(const std::vector<SeriesChangePoints>& series, const std::string& now) = 0;
  virtual std::vector<SeriesChangePoints> ChangePoints() = 0;

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
