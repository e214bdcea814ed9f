// The history database: every statistic of every metric of every measured
// repetition of the runs added to it, with the commit and branch they
// measured, in one SQLite file. The schema is versioned (PRAGMA user_version)
// and migrated forward on open, each step in its own transaction; a file
// from a newer perfgate is refused rather than misread.
#pragma once

#include <sqlite3.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "metrics/results.h"

namespace perfgate {

// The schema version this perfgate writes and reads.
inline constexpr int kHistorySchemaVersion = 3;

struct RunIdentity {
  std::string commit;
  std::string branch;
};

// One (suite, scenario, metric, statistic) over the stored runs, oldest first.
struct HistoryPoint {
  int64_t run_id = 0;
  std::string commit;
  std::string branch;
  std::string timestamp;       // of the run
  std::vector<double> values;  // one per repetition
};

struct HistorySeries {
  std::string suite;
  std::string scenario;
  std::string metric;
  std::string statistic;
  std::string unit;
  Better better = Better::kLower;
  std::vector<HistoryPoint> points;
};

// One stored run of a suite with one of its scenarios, as a later run may
// use it for its baseline (history/history_baseline.h).
struct StoredScenarioRun {
  int64_t run_id = 0;
  std::string branch;
  Verdict verdict = Verdict::kError;  // of the whole run
  Environment environment;            // git_commit is the commit the run measured
  // The scenario's measured repetitions, whole; nullopt when the run did not
  // run the scenario or was stored before the history kept repetitions whole
  // (schema 3; `kept_whole` tells which).
  std::optional<ScenarioResult> scenario;
  bool kept_whole = false;
};

struct SeriesFilter {
  std::string branch;                   // empty: every branch
  std::vector<std::string> statistics;  // empty: every statistic
};

class HistoryDb {
 public:
  // Opens `file`, creating it when missing, and migrates its schema.
  // InputError naming the file when it is not a perfgate history database or
  // is from a newer perfgate; InfraError when it cannot be written.
  static HistoryDb Open(const std::string& file);
  // As Open, but InputError when the file does not exist.
  static HistoryDb OpenExisting(const std::string& file);
  // An existing file opened read-only, without migrating it (a database
  // fetched from the nightly job's artifacts may be read-only); InputError
  // when it is missing, not a perfgate history or from a newer perfgate.
  static HistoryDb OpenForReading(const std::string& file);

  // Stores the run (one transaction). Returns false, storing nothing, when a
  // run of the same suite, commit, branch and timestamp is already stored.
  // InputError for a partial run or an empty commit or branch.
  bool AddRun(const RunResults& results, const RunIdentity& identity);

  int SchemaVersion() const;
  int64_t RunCount() const;
  std::vector<HistorySeries> Series(const SeriesFilter& filter) const;
  // Every branch with a stored run, sorted.
  std::vector<std::string> Branches() const;
  // The runs of `suite` on `branch` (every branch when empty), newest first
  // (by the run's timestamp), each with its result of `scenario`.
  std::vector<StoredScenarioRun> ScenarioRuns(const std::string& suite, const std::string& scenario,
                                              const std::string& branch) const;

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  HistoryDb(std::string file, sqlite3* db) : file_(std::move(file)), db_(db) {}
  void Migrate();
  void Exec(const std::string& sql) const;
  // Id of the series (scenario, metric, statistic, unit, better), added when new.
  int64_t SeriesId(const std::array<std::string, 5>& key);

  std::string file_;
  std::unique_ptr<sqlite3, Closer> db_;
};

}  // namespace perfgate
