// The history database: every statistic of every metric of every measured
// repetition of the runs added to it, with the commit and branch they
// measured. It lives in an SQLite file (the default: one runner, or a file
// passed along as an artifact) or in a PostgreSQL database (a pool of runners
// writing one history at once); HistoryDb::Open tells them apart by the
// location, `postgresql://…` or a path. Both keep the same versioned schema,
// migrated forward on open under a lock, and refuse a database from a newer
// perfgate rather than misread it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "history/alerts.h"
#include "metrics/results.h"

namespace perfgate {

// The schema version this perfgate writes and reads.
inline constexpr int kHistorySchemaVersion = 7;

// The environment variable that names the history when --db is not given.
inline constexpr const char* kHistoryEnvironmentVariable = "PERFGATE_HISTORY";

struct RunIdentity {
  std::string commit;
  std::string branch;
  // The commit a paired night ran interleaved with (ci/nightly.sh): its
  // checks' changes are against it. Empty: compared with stored numbers.
  std::string reference{};
};

// A paired night's change of the check on a series (history add --reference).
struct PairedChange {
  std::string reference;  // the commit the night ran interleaved with
  std::string verdict;
  double change_pct = 0;
  std::optional<double> low_pct, high_pct;  // its interval
};

// One (suite, scenario, metric, statistic) over the stored runs, oldest first.
struct HistoryPoint {
  int64_t run_id = 0;
  std::string commit;
  std::string branch;
  std::string timestamp;       // of the run
  std::vector<double> values;  // one per repetition
  // A paired night's change of its check on this series against the
  // previous night, beside the absolute values above.
  std::optional<PairedChange> paired{};
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
  // run the scenario, was stored before the history kept repetitions whole
  // (schema 3; `kept_whole` tells which), or was not loaded yet
  // (HistoryDb::ScenarioRunHeaders; `has_scenario` tells).
  std::optional<ScenarioResult> scenario;
  bool kept_whole = false;
  bool has_scenario = false;  // the run stored this scenario whole
};

struct SeriesFilter {
  std::string branch;                   // empty: every branch
  std::vector<std::string> statistics;  // empty: every statistic
  std::string suite;                    // empty: every suite
};

// (scenario, metric, statistic, unit, better): what a stored value measures.
using SeriesKey = std::array<std::string, 5>;

// A run as the history stores it, row for row: what `history copy` moves
// between databases and what AddRun writes.
struct StoredRun {
  std::string suite, commit, branch, run_timestamp, added_at;
  std::string hostname, kernel, cpu_model;
  int64_t cpu_count = 0;
  std::string perfgate_version, verdict;
  bool kept_whole = false;
  std::string reference_commit;  // RunIdentity::reference
  struct Value {
    SeriesKey series;
    int64_t repetition = 0;
    double value = 0;
  };
  struct Check {
    std::string scenario, name, metric, statistic, verdict;
    std::optional<double> change_pct;
    std::optional<double> change_low_pct{}, change_high_pct{};  // its interval
  };
  struct Whole {
    std::string scenario;
    std::string result_zlib;  // results.json's scenario object, deflated
    int64_t result_bytes = 0;
  };
  std::vector<Value> values;
  std::vector<Check> checks;
  std::vector<Whole> wholes;
};

// A change point `perfgate trend` found in one series, as the history keeps
// it for dashboards.
struct StoredChangePoint {
  std::string commit_before, commit_after, timestamp_after;
  double change_pct = 0;
  double p_value = 1;
  bool for_the_worse = false;
};
struct SeriesChangePoints {
  std::string suite, scenario, metric, statistic;
  std::string branch;  // the branch the trend looked at; empty: every branch
  std::vector<StoredChangePoint> change_points;
};

class HistoryStore;  // history/history_store.h: one per backend

// Whether `location` names a PostgreSQL database rather than a file.
bool IsPostgresLocation(const std::string& location);
// `location` fit for a message or a report: a URL without its password.
std::string DisplayLocation(const std::string& location);

class HistoryDb {
 public:
  // Opens the history at `location` (a file, created when missing, or a
  // postgresql:// URL) and migrates its schema. InputError naming it when it
  // is not a perfgate history, is from a newer perfgate or its credentials
  // are refused; InfraError when it cannot be reached or written.
  static HistoryDb Open(const std::string& location);
  // As Open, but InputError when the file does not exist.
  static HistoryDb OpenExisting(const std::string& location);
  // An existing history opened read-only, without migrating it (a database
  // fetched from the nightly job's artifacts may be read-only); InputError
  // when it is missing, not a perfgate history or from a newer perfgate.
  static HistoryDb OpenForReading(const std::string& location);

  HistoryDb(HistoryDb&&) noexcept;
  HistoryDb& operator=(HistoryDb&&) noexcept;
  ~HistoryDb();

  // How messages name this history: the path, or the URL without its password.
  const std::string& Name() const;

  // Stores the run (one transaction: visible whole or not at all). Returns
  // false, storing nothing, when a run of the same suite, commit, branch and
  // timestamp is already stored. InputError for a partial run or an empty
  // commit or branch.
  bool AddRun(const RunResults& results, const RunIdentity& identity);

  int SchemaVersion() const;
  int64_t RunCount() const;
  std::vector<HistorySeries> Series(const SeriesFilter& filter) const;
  // Only the series of these metrics (the host canaries beside a trend's series).
  std::vector<HistorySeries> Series(const SeriesFilter& filter, const std::vector<std::string>& metrics) const;
  // Every branch with a stored run, sorted.
  std::vector<std::string> Branches() const;
  // The runs of `suite` on `branch` (every branch when empty), newest first
  // (by the run's timestamp), each with its result of `scenario`.
  std::vector<StoredScenarioRun> ScenarioRuns(const std::string& suite, const std::string& scenario,
                                              const std::string& branch) const;
  // As ScenarioRuns, without reading the results: LoadScenario reads one when
  // it is wanted, so that picking the newest good run of a long history reads
  // only the few runs it looks at.
  // `limit`: only the newest that many (0: all).
  std::vector<StoredScenarioRun> ScenarioRunHeaders(const std::string& suite, const std::string& scenario,
                                                    const std::string& branch, size_t limit = 0) const;
  // As ScenarioRunHeaders for several scenarios of the suite, with one read
  // of the runs for all: the runs of each scenario (every one of `scenarios`
  // has an entry).
  std::map<std::string, std::vector<StoredScenarioRun>> RunHeadersByScenario(const std::string& suite,
                                                                             const std::vector<std::string>& scenarios,
                                                                             const std::string& branch,
                                                                             size_t limit = 0) const;
  // The newest run (by its timestamp) of `suite` on `branch`, each every one
  // when empty, without its scenarios; nullopt when there is none. The
  // nightly collects the accept trailers of the commits merged since.
  std::optional<StoredScenarioRun> LastRun(const std::string& suite, const std::string& branch) const;
  // Fills run.scenario with its stored result of `scenario` (no-op when it has none).
  void LoadScenario(StoredScenarioRun& run, const std::string& scenario) const;
  // The stored results of those of `scenarios` that run `run_id` kept whole, read at once.
  std::map<std::string, ScenarioResult> LoadScenarios(int64_t run_id, const std::vector<std::string>& scenarios) const;

  // Replaces the stored change points of each series given (one transaction).
  void ReplaceChangePoints(const std::vector<SeriesChangePoints>& series);
  // The stored change points of every series, in no particular order.
  std::vector<SeriesChangePoints> ChangePoints() const;

  // Stores the groups `perfgate trend` found (those already stored are kept
  // as they are), then makes perfgate's own changes (AutomaticAlertChanges)
  // to the groups of their suites. The ids of the groups added, and the
  // changes made.
  struct RecordedAlerts {
    std::vector<int64_t> added;
    std::vector<AlertTransition> changed;
  };
  RecordedAlerts RecordAlerts(const std::vector<AlertGroup>& found);
  // Every group of `suite` (every suite when empty), oldest first, with its series.
  std::vector<AlertGroup> Alerts(const std::string& suite = "") const;
  // One group with its series and its changes; InputError naming the
  // history when there is none with that id.
  AlertGroup Alert(int64_t id) const;
  // `alerts set`: InputError when there is no such group or nothing to change.
  void SetAlert(int64_t id, const AlertUpdate& update);
  // Whether the regressed checks of a stored run were all expected
  // (OnlyExpectedRegressions); `alerts`: the suite's groups.
  bool OnlyExpectedRegressions(const StoredScenarioRun& run, const std::vector<AlertGroup>& alerts) const;

  // Every stored run row for row, oldest first (history copy).
  void ForEachStoredRun(const std::function<void(const StoredRun&)>& visit) const;
  // Stores a run read from another history, as it was; false when present.
  bool AddStoredRun(const StoredRun& run);

 private:
  explicit HistoryDb(std::unique_ptr<HistoryStore> store);
  std::unique_ptr<HistoryStore> store_;
};

}  // namespace perfgate
