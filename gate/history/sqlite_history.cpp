// The history in one SQLite file. The schema version is PRAGMA user_version;
// each migration step runs in its own write transaction (BEGIN IMMEDIATE), so
// one process migrates while the others wait on the file lock.
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_set>

#include "base/error.h"
#include "history/history_store.h"
#include "history/sqlite_statement.h"

namespace perfgate {
namespace {

using sqlite::Statement;
using sqlite::ThrowSqliteError;
using sqlite::Transaction;

class SqliteHistory final : public HistoryStore {
 public:
  SqliteHistory(const std::string& file, sqlite3* db) : HistoryStore(file), db_(db) {}
  ~SqliteHistory() override { sqlite3_close_v2(db_); }

  int SchemaVersion() override {
    Statement version(db_, Name(), "PRAGMA user_version");
    version.Step();
    return static_cast<int>(version.Int(0));
  }

  void Exec(const std::string& sql) {
    char* error = nullptr;
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
    if (rc == SQLITE_OK) return;
    sqlite3_free(error);
    ThrowSqliteError(db_, Name(), rc);
  }

  void Migrate() {
    // Reading needs no lock; a migration re-reads the version under the write
    // lock, since another process may have migrated meanwhile.
    const std::vector<HistoryMigration>& migrations = HistoryMigrations();
    for (int version = SchemaVersion(); version < kHistorySchemaVersion;) {
      Transaction transaction(db_, Name());
      version = SchemaVersion();
      if (version >= kHistorySchemaVersion) break;
      if (version == 0) {
        Statement tables(db_, Name(), "SELECT count(*) FROM sqlite_schema");
        tables.Step();
        if (tables.Int(0) > 0) throw InputError(Name() + ": an SQLite database, but not a perfgate history");
      }
      Exec(migrations[static_cast<size_t>(version)].sqlite);
      Exec("PRAGMA user_version = " + std::to_string(version + 1));
      transaction.Commit();
      ++version;
    }
    CheckNotNewer();
  }

  void CheckNotNewer() {
    const int version = SchemaVersion();
    if (version > kHistorySchemaVersion) throw InputError(NewerSchemaMessage(Name(), version));
  }

  int64_t RunCount() override {
    Statement count(db_, Name(), "SELECT count(*) FROM runs");
    count.Step();
    return count.Int(0);
  }

  bool Insert(const StoredRun& r) override {
    Transaction transaction(db_, Name());
    Statement exists(db_, Name(),
                     "SELECT 1 FROM runs WHERE suite = ?1 AND commit_sha = ?2 AND branch = ?3 AND run_timestamp = ?4");
    exists.Bind(1, r.suite).Bind(2, r.commit).Bind(3, r.branch).Bind(4, r.run_timestamp);
    if (exists.Step()) return false;

    Statement run(db_, Name(),
                  "INSERT INTO runs (suite, commit_sha, branch, run_timestamp, added_at, hostname, kernel, cpu_model, "
                  "cpu_count, perfgate_version, verdict, kept_whole, reference_commit) VALUES (?1, ?2, ?3, ?4, ?5, "
                  "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
    run.Bind(1, r.suite).Bind(2, r.commit).Bind(3, r.branch).Bind(4, r.run_timestamp);
    run.Bind(5, r.added_at).Bind(6, r.hostname).Bind(7, r.kernel).Bind(8, r.cpu_model);
    run.Bind(9, r.cpu_count).Bind(10, r.perfgate_version).Bind(11, r.verdict);
    run.Bind(12, int64_t{r.kept_whole ? 1 : 0}).Bind(13, r.reference_commit);
    run.Run();
    const int64_t run_id = sqlite3_last_insert_rowid(db_);

    Statement whole(
        db_, Name(),
        "INSERT INTO scenario_results (run_id, scenario, result_zlib, result_bytes) VALUES (?1, ?2, ?3, ?4)");
    for (const StoredRun::Whole& w : r.wholes) {
      whole.Bind(1, run_id).Bind(2, w.scenario).BindBlob(3, w.result_zlib).Bind(4, w.result_bytes);
      whole.Run();
    }
    Statement value(db_, Name(),
                    "INSERT INTO metric_values (run_id, series_id, repetition, value) VALUES (?1, ?2, ?3, ?4)");
    std::map<SeriesKey, int64_t> series_ids;
    for (const StoredRun::Value& v : r.values) {
      auto known = series_ids.find(v.series);
      int64_t series = known != series_ids.end() ? known->second : series_ids[v.series] = SeriesId(v.series);
      value.Bind(1, run_id).Bind(2, series).Bind(3, v.repetition).Bind(4, v.value);
      value.Run();
    }
    Statement check(db_, Name(),
                    "INSERT INTO check_results (run_id, scenario, name, metric, statistic, verdict, change_pct, "
                    "change_low_pct, change_high_pct) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    for (const StoredRun::Check& c : r.checks) {
      check.Bind(1, run_id).Bind(2, c.scenario).Bind(3, c.name).Bind(4, c.metric).Bind(5, c.statistic);
      check.Bind(6, c.verdict).BindOptional(7, c.change_pct).BindOptional(8, c.change_low_pct);
      check.BindOptional(9, c.change_high_pct);
      check.Run();
    }
    transaction.Commit();
    return true;
  }

  std::vector<SeriesRun> SeriesRuns(const SeriesFilter& filter) override {
    Statement rows(db_, Name(),
                   "SELECT id, suite, commit_sha, branch, run_timestamp FROM runs WHERE (?1 = '' OR branch = ?1) AND "
                   "(?2 = '' OR suite = ?2) ORDER BY suite, run_timestamp, id");
    rows.Bind(1, filter.branch).Bind(2, filter.suite);
    std::vector<SeriesRun> out;
    while (rows.Step()) out.push_back({rows.Int(0), rows.Text(1), rows.Text(2), rows.Text(3), rows.Text(4)});
    return out;
  }

  std::vector<StoredSeries> SeriesOf(const SeriesFilter& filter) override {
    Statement rows(db_, Name(),
                   "SELECT id, scenario, metric, statistic, unit, better FROM series ORDER BY scenario, metric, "
                   "statistic, id");
    std::vector<StoredSeries> out;
    while (rows.Step()) {
      const std::string statistic = rows.Text(3);
      if (!filter.statistics.empty() &&
          std::find(filter.statistics.begin(), filter.statistics.end(), statistic) == filter.statistics.end())
        continue;
      out.push_back({rows.Int(0), {rows.Text(1), rows.Text(2), statistic, rows.Text(4), rows.Text(5)}});
    }
    return out;
  }

  // Run by run, through the values' primary key (their table is ordered by
  // it): no sort, no join, no text.
  void ForEachValue(const std::vector<int64_t>& run_ids, const std::vector<int64_t>& series_ids,
                    const std::function<void(const SeriesValue&)>& visit) override {
    const std::unordered_set<int64_t> wanted(series_ids.begin(), series_ids.end());
    Statement rows(db_, Name(), "SELECT series_id, repetition, value FROM metric_values WHERE run_id = ?1");
    Transaction read(db_, Name(), "BEGIN");  // one snapshot for all the runs
    for (int64_t run : run_ids) {
      rows.Bind(1, run);
      while (rows.Step()) {
        const int64_t series = rows.Int(0);
        if (wanted.count(series) != 0) visit({run, series, rows.Int(1), rows.Double(2)});
      }
      rows.Reset();
    }
  }

  std::vector<StoredPairedCheck> PairedChecks(const SeriesFilter& filter) override {
    if (SchemaVersion() < 7) return {};
    Statement rows(db_, Name(),
                   "SELECT c.run_id, r.reference_commit, c.scenario, c.metric, c.statistic, c.verdict, c.change_pct, "
                   "c.change_low_pct, c.change_high_pct FROM check_results c JOIN runs r ON r.id = c.run_id WHERE "
                   "r.reference_commit <> '' AND c.change_pct IS NOT NULL AND (?1 = '' OR r.branch = ?1) AND "
                   "(?2 = '' OR r.suite = ?2)");
    rows.Bind(1, filter.branch).Bind(2, filter.suite);
    std::vector<StoredPairedCheck> out;
    while (rows.Step()) {
      const auto number = [&](int k) { return rows.IsNull(k) ? std::nullopt : std::optional(rows.Double(k)); };
      out.push_back({rows.Int(0),
                     rows.Text(2),
                     rows.Text(3),
                     rows.Text(4),
                     {rows.Text(1), rows.Text(5), rows.Double(6), number(7), number(8)}});
    }
    return out;
  }

  std::vector<std::string> Branches() override {
    Statement rows(db_, Name(), "SELECT DISTINCT branch FROM runs ORDER BY branch");
    std::vector<std::string> out;
    while (rows.Step()) out.push_back(rows.Text(0));
    return out;
  }

  std::vector<StoredScenarioRun> RunHeaders(const std::string& suite, const std::string& branch,
                                            size_t limit) override {
    // A database of schema 2, read without migrating, has no results kept whole.
    Statement rows(db_, Name(),
                   std::string("SELECT id, commit_sha, branch, verdict, run_timestamp, hostname, kernel, cpu_model, "
                               "cpu_count, perfgate_version, ") +
                       (SchemaVersion() >= 3 ? "kept_whole " : "0 ") + "FROM runs WHERE " +
                       (suite.empty() ? "?1 = ''" : "suite = ?1") +
                       " AND (?2 = '' OR branch = ?2) ORDER BY run_timestamp DESC, id DESC" +
                       (limit > 0 ? " LIMIT " + std::to_string(limit) : std::string()));
    rows.Bind(1, suite).Bind(2, branch);
    std::vector<StoredScenarioRun> out;
    while (rows.Step()) {
      StoredScenarioRun& run = out.emplace_back();
      run.run_id = rows.Int(0);
      run.branch = rows.Text(2);
      run.verdict = ParseVerdict(rows.Text(3)).value_or(Verdict::kError);
      Environment& env = run.environment;
      env.git_commit = rows.Text(1);
      env.timestamp = rows.Text(4);
      env.hostname = rows.Text(5);
      env.kernel = rows.Text(6);
      env.cpu_model = rows.Text(7);
      env.cpu_count = static_cast<int>(rows.Int(8));
      env.perfgate_version = rows.Text(9);
      run.kept_whole = rows.Int(10) != 0;
    }
    return out;
  }

  std::vector<std::pair<int64_t, std::string>> StoredScenarios(const std::vector<int64_t>& run_ids,
                                                               const std::vector<std::string>& scenarios) override {
    std::vector<std::pair<int64_t, std::string>> out;
    if (SchemaVersion() < 3) return out;
    const std::set<std::string> wanted(scenarios.begin(), scenarios.end());
    Statement rows(db_, Name(), "SELECT scenario FROM scenario_results WHERE run_id = ?1");
    for (int64_t run : run_ids) {
      rows.Bind(1, run);
      while (rows.Step())
        if (std::string scenario = rows.Text(0); wanted.count(scenario) != 0) out.emplace_back(run, scenario);
      rows.Reset();
    }
    return out;
  }

  std::vector<std::pair<std::string, PackedResult>> ScenarioResults(
      int64_t run_id, const std::vector<std::string>& scenarios) override {
    std::vector<std::pair<std::string, PackedResult>> out;
    if (SchemaVersion() < 3) return out;
    const std::set<std::string> wanted(scenarios.begin(), scenarios.end());
    Statement rows(db_, Name(), "SELECT scenario, result_zlib, result_bytes FROM scenario_results WHERE run_id = ?1");
    rows.Bind(1, run_id);
    while (rows.Step())
      if (std::string scenario = rows.Text(0); wanted.count(scenario) != 0)
        out.emplace_back(scenario, PackedResult{rows.Blob(1), rows.Int(2)});
    return out;
  }

  void ForEachStoredRun(const std::function<void(const StoredRun&)>& visit) override {
    const int version = SchemaVersion();
    Statement runs(db_, Name(),
                   std::string("SELECT id, suite, commit_sha, branch, run_timestamp, added_at, hostname, kernel, "
                               "cpu_model, cpu_count, perfgate_version, verdict, ") +
                       (version >= 3 ? "kept_whole" : "0") + (version >= 7 ? ", reference_commit" : ", ''") +
                       " FROM runs ORDER BY run_timestamp, id");
    Statement values(db_, Name(),
                     "SELECT s.scenario, s.metric, s.statistic, s.unit, s.better, v.repetition, v.value FROM "
                     "metric_values v JOIN series s ON s.id = v.series_id WHERE v.run_id = ?1 ORDER BY v.series_id, "
                     "v.repetition");
    std::optional<Statement> checks, wholes;
    if (version >= 2)
      checks.emplace(db_, Name(),
                     std::string("SELECT scenario, name, metric, statistic, verdict, change_pct, ") +
                         (version >= 7 ? "change_low_pct, change_high_pct" : "NULL, NULL") +
                         " FROM check_results WHERE run_id = ?1 ORDER BY rowid");
    if (version >= 3)
      wholes.emplace(db_, Name(),
                     "SELECT scenario, result_zlib, result_bytes FROM scenario_results WHERE run_id = ?1 ORDER BY "
                     "scenario");
    while (runs.Step()) {
      StoredRun r;
      const int64_t id = runs.Int(0);
      r.suite = runs.Text(1);
      r.commit = runs.Text(2);
      r.branch = runs.Text(3);
      r.run_timestamp = runs.Text(4);
      r.added_at = runs.Text(5);
      r.hostname = runs.Text(6);
      r.kernel = runs.Text(7);
      r.cpu_model = runs.Text(8);
      r.cpu_count = runs.Int(9);
      r.perfgate_version = runs.Text(10);
      r.verdict = runs.Text(11);
      r.kept_whole = runs.Int(12) != 0;
      r.reference_commit = runs.Text(13);
      values.Bind(1, id);
      while (values.Step()) {
        r.values.push_back({{values.Text(0), values.Text(1), values.Text(2), values.Text(3), values.Text(4)},
                            values.Int(5),
                            values.Double(6)});
      }
      values.Reset();
      if (checks) {
        checks->Bind(1, id);
        while (checks->Step()) {
          const auto number = [&](int k) {
            return checks->IsNull(k) ? std::nullopt : std::optional(checks->Double(k));
          };
          r.checks.push_back(
              {checks->Text(0), checks->Text(1), checks->Text(2), checks->Text(3), checks->Text(4), number(5)});
          r.checks.back().change_low_pct = number(6);
          r.checks.back().change_high_pct = number(7);
        }
        checks->Reset();
      }
      if (wholes) {
        wholes->Bind(1, id);
        while (wholes->Step()) r.wholes.push_back({wholes->Text(0), wholes->Blob(1), wholes->Int(2)});
        wholes->Reset();
      }
      visit(r);
    }
  }

  void ReplaceChangePoints(const std::vector<SeriesChangePoints>& series, const std::string& now) override {
    Transaction transaction(db_, Name());
    Statement clear(db_, Name(),
                    "DELETE FROM change_points WHERE suite = ?1 AND scenario = ?2 AND metric = ?3 AND statistic = ?4 "
                    "AND branch = ?5");
    Statement insert(db_, Name(),
                     "INSERT INTO change_points (suite, scenario, metric, statistic, branch, commit_before, "
                     "commit_after, timestamp_after, change_pct, p_value, for_the_worse, found_at) VALUES (?1, ?2, ?3, "
                     "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
    for (const SeriesChangePoints& s : series) {
      clear.Bind(1, s.suite).Bind(2, s.scenario).Bind(3, s.metric).Bind(4, s.statistic).Bind(5, s.branch);
      clear.Run();
      for (const StoredChangePoint& c : s.change_points) {
        insert.Bind(1, s.suite).Bind(2, s.scenario).Bind(3, s.metric).Bind(4, s.statistic).Bind(5, s.branch);
        insert.Bind(6, c.commit_before).Bind(7, c.commit_after).Bind(8, c.timestamp_after).Bind(9, c.change_pct);
        insert.Bind(10, c.p_value).Bind(11, int64_t{c.for_the_worse ? 1 : 0}).Bind(12, now);
        insert.Run();
      }
    }
    transaction.Commit();
  }

  std::pair<int64_t, bool> AddAlertGroup(const AlertGroup& g, const std::string& now) override {
    Transaction transaction(db_, Name());
    Statement insert(
        db_, Name(),
        "INSERT OR IGNORE INTO alert_groups (suite, branch, commit_before, commit_after, timestamp_before, "
        "timestamp_after, state, owner, bug, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
        "'', '', ?8, ?8)");
    insert.Bind(1, g.suite).Bind(2, g.branch).Bind(3, g.commit_before).Bind(4, g.commit_after);
    insert.Bind(5, g.timestamp_before).Bind(6, g.timestamp_after).Bind(7, ToString(AlertState::kNew)).Bind(8, now);
    insert.Run();
    if (sqlite3_changes(db_) == 0) {
      Statement id(db_, Name(),
                   "SELECT id FROM alert_groups WHERE suite = ?1 AND branch = ?2 AND commit_before = ?3 AND "
                   "commit_after = ?4");
      id.Bind(1, g.suite).Bind(2, g.branch).Bind(3, g.commit_before).Bind(4, g.commit_after);
      id.Step();
      return {id.Int(0), false};
    }
    const int64_t id = sqlite3_last_insert_rowid(db_);
    Statement metric(db_, Name(),
                     "INSERT INTO alert_metrics (alert_id, scenario, metric, statistic, unit, value_before, "
                     "value_after, change_pct, p_value, for_the_worse) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                     "?10)");
    for (const AlertMetric& m : g.metrics) {
      metric.Bind(1, id).Bind(2, m.scenario).Bind(3, m.metric).Bind(4, m.statistic).Bind(5, m.unit);
      metric.Bind(6, m.before).Bind(7, m.after).Bind(8, m.change_pct).Bind(9, m.p_value);
      metric.Bind(10, int64_t{m.for_the_worse ? 1 : 0});
      metric.Run();
    }
    InsertChange(id, now, "perfgate", AlertState::kNew, "", "", "change point found by perfgate trend");
    transaction.Commit();
    return {id, true};
  }

  std::vector<AlertGroup> AlertGroups(const std::string& suite) override {
    std::vector<AlertGroup> out;
    std::map<int64_t, size_t> index;
    Statement groups(db_, Name(),
                     "SELECT id, suite, branch, commit_before, commit_after, timestamp_before, timestamp_after, state, "
                     "owner, bug, created_at, updated_at FROM alert_groups WHERE ?1 = '' OR suite = ?1 ORDER BY id");
    groups.Bind(1, suite);
    while (groups.Step()) {
      AlertGroup g;
      g.id = groups.Int(0);
      g.suite = groups.Text(1);
      g.branch = groups.Text(2);
      g.commit_before = groups.Text(3);
      g.commit_after = groups.Text(4);
      g.timestamp_before = groups.Text(5);
      g.timestamp_after = groups.Text(6);
      g.state = ParseAlertState(groups.Text(7)).value_or(AlertState::kNew);
      g.owner = groups.Text(8);
      g.bug = groups.Text(9);
      g.created_at = groups.Text(10);
      g.updated_at = groups.Text(11);
      index[g.id] = out.size();
      out.push_back(std::move(g));
    }
    Statement metrics(db_, Name(),
                      "SELECT alert_id, scenario, metric, statistic, unit, value_before, value_after, change_pct, "
                      "p_value, for_the_worse FROM alert_metrics ORDER BY alert_id, scenario, metric, statistic");
    while (metrics.Step()) {
      auto it = index.find(metrics.Int(0));
      if (it == index.end()) continue;
      out[it->second].metrics.push_back({metrics.Text(1), metrics.Text(2), metrics.Text(3), metrics.Text(4),
                                         metrics.Double(5), metrics.Double(6), metrics.Double(7), metrics.Double(8),
                                         metrics.Int(9) != 0});
    }
    return out;
  }

  std::vector<AlertChange> AlertChanges(int64_t id) override {
    std::vector<AlertChange> out;
    Statement rows(db_, Name(),
                   "SELECT id, changed_at, changed_by, state, owner, bug, note FROM alert_changes WHERE alert_id = ?1 "
                   "ORDER BY id");
    rows.Bind(1, id);
    while (rows.Step()) {
      out.push_back({rows.Int(0), rows.Text(1), rows.Text(2), ParseAlertState(rows.Text(3)).value_or(AlertState::kNew),
                     rows.Text(4), rows.Text(5), rows.Text(6)});
    }
    return out;
  }

  UpdateResult UpdateAlert(int64_t id, const AlertUpdate& u, const std::string& now) override {
    // BEGIN IMMEDIATE takes the write lock first: a concurrent `alerts set`
    // waits (busy timeout) and then reads what this one wrote.
    Transaction transaction(db_, Name());
    Statement current(db_, Name(), "SELECT state, owner, bug FROM alert_groups WHERE id = ?1");
    current.Bind(1, id);
    if (!current.Step()) return UpdateResult::kMissing;
    const AlertState state = ParseAlertState(current.Text(0)).value_or(AlertState::kNew);
    if (!u.only_from.empty() && std::find(u.only_from.begin(), u.only_from.end(), state) == u.only_from.end())
      return UpdateResult::kSkipped;
    const AlertState next = u.state.value_or(state);
    const std::string owner = u.owner.value_or(current.Text(1)), bug = u.bug.value_or(current.Text(2));
    Statement update(db_, Name(),
                     "UPDATE alert_groups SET state = ?1, owner = ?2, bug = ?3, updated_at = ?4 WHERE id = ?5");
    update.Bind(1, ToString(next)).Bind(2, owner).Bind(3, bug).Bind(4, now).Bind(5, id);
    update.Run();
    InsertChange(id, now, u.by, next, owner, bug, u.note);
    transaction.Commit();
    return UpdateResult::kChanged;
  }

  std::vector<AcceptedCheck> AcceptedChecks(const std::string& suite, const std::string& branch,
                                            const std::string& after, const std::string& up_to) override {
    std::vector<AcceptedCheck> out;
    Statement rows(db_, Name(),
                   "SELECT c.scenario, c.metric, c.statistic, r.commit_sha FROM check_results c JOIN runs r ON r.id = "
                   "c.run_id WHERE r.suite = ?1 AND (?2 = '' OR r.branch = ?2) AND r.run_timestamp > ?3 AND "
                   "r.run_timestamp <= ?4 AND c.verdict = 'accepted' ORDER BY r.run_timestamp, r.id");
    rows.Bind(1, suite).Bind(2, branch).Bind(3, after).Bind(4, up_to);
    while (rows.Step()) out.push_back({rows.Text(0), rows.Text(1), rows.Text(2), rows.Text(3)});
    return out;
  }

  std::vector<RegressedCheck> RegressedChecks(int64_t run_id) override {
    std::vector<RegressedCheck> out;
    Statement rows(db_, Name(),
                   "SELECT scenario, metric FROM check_results WHERE run_id = ?1 AND verdict = 'regression'");
    rows.Bind(1, run_id);
    while (rows.Step()) out.push_back({rows.Text(0), rows.Text(1)});
    return out;
  }

  std::vector<SeriesChangePoints> ChangePoints() override {
    std::vector<SeriesChangePoints> out;
    if (SchemaVersion() < 4) return out;
    Statement rows(db_, Name(),
                   "SELECT suite, scenario, metric, statistic, branch, commit_before, commit_after, timestamp_after, "
                   "change_pct, p_value, for_the_worse FROM change_points ORDER BY suite, scenario, metric, statistic, "
                   "branch, timestamp_after");
    while (rows.Step()) {
      if (out.empty() || out.back().suite != rows.Text(0) || out.back().scenario != rows.Text(1) ||
          out.back().metric != rows.Text(2) || out.back().statistic != rows.Text(3) ||
          out.back().branch != rows.Text(4))
        out.push_back({rows.Text(0), rows.Text(1), rows.Text(2), rows.Text(3), rows.Text(4), {}});
      out.back().change_points.push_back(
          {rows.Text(5), rows.Text(6), rows.Text(7), rows.Double(8), rows.Double(9), rows.Int(10) != 0});
    }
    return out;
  }

 private:
  void InsertChange(int64_t id, const std::string& now, const std::string& by, AlertState state,
                    const std::string& owner, const std::string& bug, const std::string& note) {
    Statement change(db_, Name(),
                     "INSERT INTO alert_changes (alert_id, changed_at, changed_by, state, owner, bug, note) VALUES "
                     "(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    change.Bind(1, id).Bind(2, now).Bind(3, by).Bind(4, ToString(state)).Bind(5, owner).Bind(6, bug).Bind(7, note);
    change.Run();
  }

  // Id of the series, added when new.
  int64_t SeriesId(const SeriesKey& key) {
    Statement insert(
        db_, Name(),
        "INSERT OR IGNORE INTO series (scenario, metric, statistic, unit, better) VALUES (?1, ?2, ?3, ?4, ?5)");
    Statement select(db_, Name(),
                     "SELECT id FROM series WHERE scenario = ?1 AND metric = ?2 AND statistic = ?3 AND unit = ?4 AND "
                     "better = ?5");
    for (int i = 0; i < 5; ++i) {
      insert.Bind(i + 1, key[static_cast<size_t>(i)]);
      select.Bind(i + 1, key[static_cast<size_t>(i)]);
    }
    insert.Run();
    select.Step();
    return select.Int(0);
  }

  sqlite3* db_;
};

}  // namespace

std::unique_ptr<HistoryStore> OpenSqliteHistory(const std::string& file, OpenMode mode) {
  if (mode != OpenMode::kCreate) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) throw InputError(file + ": no such history database");
  }
  sqlite3* raw = nullptr;
  const int flags = mode == OpenMode::kReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(file.c_str(), &raw, flags, nullptr);
  auto store = std::make_unique<SqliteHistory>(file, raw);
  if (rc != SQLITE_OK) ThrowSqliteError(raw, file, rc);
  sqlite3_busy_timeout(raw, 10000);  // two nightly jobs adding at once wait, not fail
  sqlite3_extended_result_codes(raw, 1);
  if (mode == OpenMode::kReadOnly) {
    const int version = store->SchemaVersion();
    if (version == 0) throw InputError(file + ": not a perfgate history database");
    store->CheckNotNewer();
    return store;
  }
  store->Exec("PRAGMA foreign_keys = ON");
  store->Migrate();
  return store;
}

}  // namespace perfgate
