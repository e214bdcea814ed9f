// The history in a PostgreSQL database, for a pool of runners that write one
// history at once. The schema version is the one row of perfgate_schema;
// migrations run in one transaction under an advisory lock, so one process
// migrates while the others wait and then find the work done. A run is one
// transaction: visible whole or not at all, and a connection that drops
// before COMMIT leaves nothing behind (the server rolls the transaction back).
#include <libpq-fe.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "base/error.h"
#include "history/history_store.h"
#include "history/postgres_connection.h"

namespace perfgate {
namespace {

using pg::AppendCopyText;
using pg::ArrayLiteral;
using pg::DoubleText;
using pg::ForEachRow;
using pg::IdArray;
using pg::ResultPtr;

// Any number, as long as it is perfgate's own: the advisory lock the
// migrators of one database take (the ASCII of "pfgt" "hist").
constexpr const char* kMigrationLock = "7378532794452243316";

class PostgresHistory final : public HistoryStore, private pg::Connection {
 public:
  PostgresHistory(const std::string& url, PGconn* conn)
      : HistoryStore(DisplayLocation(url)), pg::Connection(DisplayLocation(url), conn) {}
  using pg::Connection::RefuseForeignTables;

  // Read once: every read asks for it, and a round trip per question adds up
  // over the scenarios of a baseline pick. 0 when perfgate_schema does not exist.
  int SchemaVersion() override {
    if (version_ < 0) version_ = ReadSchemaVersion(false);
    return version_;
  }

  void Migrate() {
    // Reading needs no lock; migrating re-reads the version under the lock,
    // since another runner may have migrated meanwhile.
    if (SchemaVersion() >= kHistorySchemaVersion) return CheckNotNewer();
    Exec("BEGIN");
    try {
      Exec(std::string("SELECT pg_advisory_xact_lock(") + kMigrationLock + ")");
      const int found = ReadSchemaVersion(true);
      int version = found;
      if (version == 0) {
        RefuseForeignTables();
        Exec("CREATE TABLE perfgate_schema (version integer NOT NULL)");
        Exec("INSERT INTO perfgate_schema VALUES (0)");
      }
      const std::vector<HistoryMigration>& migrations = HistoryMigrations();
      for (; version < kHistorySchemaVersion; ++version) Exec(migrations[static_cast<size_t>(version)].postgres);
      if (version != found && version == kHistorySchemaVersion)
        Exec("UPDATE perfgate_schema SET version = " + std::to_string(version));
      Exec("COMMIT");
      version_ = version;
    } catch (...) {
      PQclear(PQexec(conn_, "ROLLBACK"));
      throw;
    }
    CheckNotNewer();
  }

  void CheckNotNewer() {
    const int version = SchemaVersion();
    if (version > kHistorySchemaVersion) throw InputError(NewerSchemaMessage(Name(), version));
  }

  int64_t RunCount() override { return Int(Exec("SELECT count(*) FROM runs").get(), 0, 0); }

  bool Insert(const StoredRun& r) override {
    // A deadlock or serialization failure (two runners adding their first
    // runs of the same new series) is retried: the loser stored nothing.
    for (int attempt = 0;; ++attempt) {
      try {
        return InsertOnce(r);
      } catch (const Error&) {
        if (attempt >= 4 || (last_state_ != "40P01" && last_state_ != "40001")) throw;
      }
    }
  }

  bool InsertOnce(const StoredRun& r) {
    last_state_.clear();
    const std::string doing = "while adding the run; nothing of it was stored";
    Exec("BEGIN", {}, doing);
    bool committed = false;
    try {
      ResultPtr run = Exec(
          "INSERT INTO runs (suite, commit_sha, branch, run_timestamp, added_at, hostname, kernel, cpu_model, "
          "cpu_count, perfgate_version, verdict, kept_whole, reference_commit) VALUES ($1, $2, $3, $4, $5, $6, $7, "
          "$8, $9, $10, $11, $12, $13) ON CONFLICT (suite, commit_sha, branch, run_timestamp) DO NOTHING RETURNING id",
          {r.suite, r.commit, r.branch, r.run_timestamp, r.added_at, r.hostname, r.kernel, r.cpu_model,
           std::to_string(r.cpu_count), r.perfgate_version, r.verdict, r.kept_whole ? "1" : "0", r.reference_commit},
          doing);
      if (PQntuples(run.get()) == 0) {  // stored already, by this runner or another
        Exec("ROLLBACK", {}, doing);
        return false;
      }
      const std::string run_id = Text(run.get(), 0, 0);
      const std::map<SeriesKey, std::string> series = SeriesIds(r, doing);

      std::string rows;
      for (const StoredRun::Value& v : r.values) {
        rows += run_id;
        rows += '\t';
        rows += series.at(v.series);
        rows += '\t';
        rows += std::to_string(v.repetition);
        rows += '\t';
        rows += DoubleText(v.value);
        rows += '\n';
      }
      Copy("COPY metric_values (run_id, series_id, repetition, value) FROM STDIN", rows, doing);
      rows.clear();
      for (const StoredRun::Check& c : r.checks) {
        rows += run_id;
        for (const std::string* text : {&c.scenario, &c.name, &c.metric, &c.statistic, &c.verdict}) {
          rows += '\t';
          AppendCopyText(rows, *text);
        }
        for (const std::optional<double>* number : {&c.change_pct, &c.change_low_pct, &c.change_high_pct}) {
          rows += '\t';
          rows += *number && std::isfinite(**number) ? DoubleText(**number) : "\\N";
        }
        rows += '\n';
      }
      Copy(
          "COPY check_results (run_id, scenario, name, metric, statistic, verdict, change_pct, change_low_pct, "
          "change_high_pct) FROM STDIN",
          rows, doing);
      for (const StoredRun::Whole& w : r.wholes) {
        const std::string bytes_text = std::to_string(w.result_bytes);
        const char* values[] = {run_id.c_str(), w.scenario.c_str(), w.result_zlib.data(), bytes_text.c_str()};
        const int lengths[] = {0, 0, static_cast<int>(w.result_zlib.size()), 0};
        const int formats[] = {0, 0, 1, 0};
        ResultPtr result(PQexecParams(conn_,
                                      "INSERT INTO scenario_results (run_id, scenario, result_zlib, result_bytes) "
                                      "VALUES ($1, $2, $3, $4)",
                                      4, nullptr, values, lengths, formats, 0),
                         &PQclear);
        if (!result || PQresultStatus(result.get()) != PGRES_COMMAND_OK) Fail(result.get(), doing);
      }
      committed = true;  // from here on, whether it was stored is the server's word
      ResultPtr commit(PQexec(conn_, "COMMIT"), &PQclear);
      if (!commit || PQresultStatus(commit.get()) != PGRES_COMMAND_OK) {
        Fail(commit.get(),
             "while committing the run; whether it was stored is unknown (adding it again stores it once)");
      }
      return true;
    } catch (const Error&) {
      if (!committed && PQstatus(conn_) == CONNECTION_OK) PQclear(PQexec(conn_, "ROLLBACK"));
      throw;
    }
  }

  // The ids of the run's series, those new to the history added in one
  // statement in key order, so that two runners adding the same new series
  // wait for each other rather than deadlock.
  std::map<SeriesKey, std::string> SeriesIds(const StoredRun& r, const std::string& doing) {
    std::set<SeriesKey> keys;
    for (const StoredRun::Value& v : r.values) keys.insert(v.series);
    std::map<SeriesKey, std::string> ids;
    if (keys.empty()) return ids;
    std::array<std::vector<std::string>, 5> columns;
    for (const SeriesKey& key : keys)
      for (size_t i = 0; i < 5; ++i) columns[i].push_back(key[i]);
    std::vector<std::string> params;
    for (const auto& column : columns) params.push_back(ArrayLiteral(column));
    const std::string keys_sql =
        "SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS k (scenario, metric, "
        "statistic, unit, better)";
    Exec("INSERT INTO series (scenario, metric, statistic, unit, better) " + keys_sql +
             " WHERE NOT EXISTS (SELECT 1 FROM series s WHERE (s.scenario, s.metric, s.statistic, s.unit, s.better) = "
             "(k.scenario, k.metric, k.statistic, k.unit, k.better)) ORDER BY 1, 2, 3, 4, 5 ON CONFLICT DO NOTHING",
         params, doing);
    ResultPtr found = Exec("SELECT s.id, s.scenario, s.metric, s.statistic, s.unit, s.better FROM series s JOIN (" +
                               keys_sql + ") k USING (scenario, metric, statistic, unit, better)",
                           params, doing);
    for (int row = 0; row < PQntuples(found.get()); ++row) {
      ids[{Text(found.get(), row, 1), Text(found.get(), row, 2), Text(found.get(), row, 3), Text(found.get(), row, 4),
           Text(found.get(), row, 5)}] = Text(found.get(), row, 0);
    }
    if (ids.size() != keys.size()) throw InfraError(Name() + ": a series of the run is missing after adding it");
    return ids;
  }

  std::vector<SeriesRun> SeriesRuns(const SeriesFilter& filter) override {
    ResultPtr rows = Exec(
        "SELECT id, suite, commit_sha, branch, run_timestamp FROM runs WHERE ($1 = '' OR branch = $1) AND ($2 = '' OR "
        "suite = $2) ORDER BY suite, run_timestamp, id",
        {filter.branch, filter.suite}, "while reading the series");
    std::vector<SeriesRun> out;
    ForEachRow(rows, [&](const PGresult* r, int i) {
      out.push_back({Int(r, i, 0), Text(r, i, 1), Text(r, i, 2), Text(r, i, 3), Text(r, i, 4)});
    });
    return out;
  }

  std::vector<StoredSeries> SeriesOf(const SeriesFilter& filter) override {
    ResultPtr rows = Exec(
        "SELECT id, scenario, metric, statistic, unit, better FROM series WHERE $1::text[] = '{}' OR statistic = ANY "
        "($1::text[]) ORDER BY scenario, metric, statistic, id",
        {ArrayLiteral(filter.statistics)}, "while reading the series");
    std::vector<StoredSeries> out;
    ForEachRow(rows, [&](const PGresult* r, int i) {
      out.push_back({Int(r, i, 0), {Text(r, i, 1), Text(r, i, 2), Text(r, i, 3), Text(r, i, 4), Text(r, i, 5)}});
    });
    return out;
  }

  // A year of a suite's values is millions of rows: read through a cursor
  // in batches, in binary (no number printed by the server and parsed here),
  // by the values' primary key, which holds the value too (schema 6), so
  // that the table itself is not read.
  void ForEachValue(const std::vector<int64_t>& run_ids, const std::vector<int64_t>& series_ids,
                    const std::function<void(const SeriesValue&)>& visit) override {
    const std::string doing = "while reading the series";
    Exec("BEGIN READ ONLY", {}, doing);
    try {
      Exec(
          "DECLARE perfgate_series NO SCROLL CURSOR FOR SELECT run_id, series_id::bigint, repetition::bigint, value "
          "FROM metric_values WHERE run_id = ANY ($1::bigint[]) AND series_id::bigint = ANY ($2::bigint[])",
          {IdArray(run_ids), IdArray(series_ids)}, doing);
      for (;;) {
        ResultPtr rows = Exec("FETCH FORWARD 10000 FROM perfgate_series", {}, doing, /*binary=*/true);
        const PGresult* r = rows.get();
        const int n = PQntuples(r);
        if (n == 0) break;
        for (int i = 0; i < n; ++i)
          visit({BinaryInt(r, i, 0), BinaryInt(r, i, 1), BinaryInt(r, i, 2), BinaryDouble(r, i, 3)});
      }
      Exec("COMMIT", {}, doing);
    } catch (const Error&) {
      if (PQstatus(conn_) == CONNECTION_OK) PQclear(PQexec(conn_, "ROLLBACK"));
      throw;
    }
  }

  std::vector<StoredPairedCheck> PairedChecks(const SeriesFilter& filter) override {
    if (SchemaVersion() < 7) return {};
    ResultPtr rows = Exec(
        "SELECT c.run_id, r.reference_commit, c.scenario, c.metric, c.statistic, c.verdict, c.change_pct, "
        "c.change_low_pct, c.change_high_pct FROM check_results c JOIN runs r ON r.id = c.run_id WHERE "
        "r.reference_commit <> '' AND c.change_pct IS NOT NULL AND ($1 = '' OR r.branch = $1) AND "
        "($2 = '' OR r.suite = $2)",
        {filter.branch, filter.suite}, "while reading the paired changes");
    std::vector<StoredPairedCheck> out;
    ForEachRow(rows, [&](const PGresult* r, int i) {
      const auto number = [&](int k) { return PQgetisnull(r, i, k) ? std::nullopt : std::optional(Double(r, i, k)); };
      out.push_back({Int(r, i, 0),
                     Text(r, i, 2),
                     Text(r, i, 3),
                     Text(r, i, 4),
                     {Text(r, i, 1), Text(r, i, 5), Double(r, i, 6), number(7), number(8)}});
    });
    return out;
  }

  std::vector<std::string> Branches() override {
    ResultPtr rows = Exec("SELECT DISTINCT branch FROM runs ORDER BY branch");
    std::vector<std::string> out;
    for (int i = 0; i < PQntuples(rows.get()); ++i) out.push_back(Text(rows.get(), i, 0));
    return out;
  }

  std::vector<StoredScenarioRun> RunHeaders(const std::string& suite, const std::string& branch,
                                            size_t limit) override {
    // A database of schema 2, read without migrating, has no results kept whole.
    ResultPtr rows = Exec(std::string("SELECT r.id, r.commit_sha, r.branch, r.verdict, r.run_timestamp, r.hostname, "
                                      "r.kernel, r.cpu_model, r.cpu_count, r.perfgate_version, ") +
                              (SchemaVersion() >= 3 ? "r.kept_whole " : "0 ") + "FROM runs r WHERE " +
                              (suite.empty() ? "$1::text = ''" : "r.suite = $1") +
                              " AND ($2 = '' OR r.branch = $2) ORDER BY "
                              "r.run_timestamp DESC, r.id DESC" +
                              (limit > 0 ? " LIMIT " + std::to_string(limit) : std::string()),
                          {suite, branch});
    std::vector<StoredScenarioRun> out;
    ForEachRow(rows, [&](const PGresult* r, int i) {
      StoredScenarioRun& run = out.emplace_back();
      run.run_id = Int(r, i, 0);
      run.branch = Text(r, i, 2);
      run.verdict = ParseVerdict(Text(r, i, 3)).value_or(Verdict::kError);
      Environment& env = run.environment;
      env.git_commit = Text(r, i, 1);
      env.timestamp = Text(r, i, 4);
      env.hostname = Text(r, i, 5);
      env.kernel = Text(r, i, 6);
      env.cpu_model = Text(r, i, 7);
      env.cpu_count = static_cast<int>(Int(r, i, 8));
      env.perfgate_version = Text(r, i, 9);
      run.kept_whole = Int(r, i, 10) != 0;
    });
    return out;
  }

  std::vector<std::pair<int64_t, std::string>> StoredScenarios(const std::vector<int64_t>& run_ids,
                                                               const std::vector<std::string>& scenarios) override {
    std::vector<std::pair<int64_t, std::string>> out;
    if (SchemaVersion() < 3 || run_ids.empty() || scenarios.empty()) return out;
    ForEachRow(Exec("SELECT run_id, scenario FROM scenario_results WHERE run_id = ANY ($1::bigint[]) AND scenario = "
                    "ANY ($2::text[])",
                    {IdArray(run_ids), ArrayLiteral(scenarios)}),
               [&](const PGresult* r, int i) { out.emplace_back(Int(r, i, 0), Text(r, i, 1)); });
    return out;
  }

  std::vector<std::pair<std::string, PackedResult>> ScenarioResults(
      int64_t run_id, const std::vector<std::string>& scenarios) override {
    std::vector<std::pair<std::string, PackedResult>> out;
    if (SchemaVersion() < 3 || scenarios.empty()) return out;
    ForEachRow(Exec("SELECT scenario, result_zlib, result_bytes FROM scenario_results WHERE run_id = $1 AND scenario "
                    "= ANY ($2::text[])",
                    {std::to_string(run_id), ArrayLiteral(scenarios)}),
               [&](const PGresult* r, int i) {
                 out.emplace_back(Text(r, i, 0), PackedResult{Bytes(r, i, 1), Int(r, i, 2)});
               });
    return out;
  }

  void ForEachStoredRun(const std::function<void(const StoredRun&)>& visit) override {
    // A history of an older perfgate is read as it is (history copy does not migrate its source).
    const bool paired = SchemaVersion() >= 7;
    ResultPtr runs =
        Exec(std::string("SELECT id, suite, commit_sha, branch, run_timestamp, added_at, hostname, kernel, "
                         "cpu_model, cpu_count, perfgate_version, verdict, kept_whole, ") +
             (paired ? "reference_commit" : "''") + " FROM runs ORDER BY run_timestamp, id");
    const PGresult* rr = runs.get();
    for (int i = 0; i < PQntuples(rr); ++i) {
      StoredRun r;
      const std::string id = Text(rr, i, 0);
      r.suite = Text(rr, i, 1);
      r.commit = Text(rr, i, 2);
      r.branch = Text(rr, i, 3);
      r.run_timestamp = Text(rr, i, 4);
      r.added_at = Text(rr, i, 5);
      r.hostname = Text(rr, i, 6);
      r.kernel = Text(rr, i, 7);
      r.cpu_model = Text(rr, i, 8);
      r.cpu_count = Int(rr, i, 9);
      r.perfgate_version = Text(rr, i, 10);
      r.verdict = Text(rr, i, 11);
      r.kept_whole = Int(rr, i, 12) != 0;
      r.reference_commit = Text(rr, i, 13);
      ForEachRow(Exec("SELECT s.scenario, s.metric, s.statistic, s.unit, s.better, v.repetition, v.value FROM "
                      "metric_values v JOIN series s ON s.id = v.series_id WHERE v.run_id = $1 ORDER BY v.series_id, "
                      "v.repetition",
                      {id}),
                 [&](const PGresult* v, int j) {
                   r.values.push_back({{Text(v, j, 0), Text(v, j, 1), Text(v, j, 2), Text(v, j, 3), Text(v, j, 4)},
                                       Int(v, j, 5),
                                       Double(v, j, 6)});
                 });
      ForEachRow(
          Exec(std::string("SELECT scenario, name, metric, statistic, verdict, change_pct, ") +
                   (paired ? "change_low_pct, change_high_pct" : "NULL::float8, NULL::float8") +
                   " FROM check_results WHERE run_id = $1 ORDER BY ctid",
               {id}),
          [&](const PGresult* c, int j) {
            const auto number = [&](int k) {
              return PQgetisnull(c, j, k) ? std::nullopt : std::optional(Double(c, j, k));
            };
            r.checks.push_back({Text(c, j, 0), Text(c, j, 1), Text(c, j, 2), Text(c, j, 3), Text(c, j, 4), number(5)});
            r.checks.back().change_low_pct = number(6);
            r.checks.back().change_high_pct = number(7);
          });
      ForEachRow(Exec("SELECT scenario, result_zlib, result_bytes FROM scenario_results WHERE run_id = $1 ORDER BY "
                      "scenario",
                      {id}),
                 [&](const PGresult* w, int j) {
                   r.wholes.push_back({Text(w, j, 0), Bytes(w, j, 1), Int(w, j, 2)});
                 });
      visit(r);
    }
  }

  void ReplaceChangePoints(const std::vector<SeriesChangePoints>& series, const std::string& now) override {
    const std::string doing = "while storing the change points; none were changed";
    Exec("BEGIN", {}, doing);
    try {
      for (const SeriesChangePoints& s : series) {
        Exec(
            "DELETE FROM change_points WHERE suite = $1 AND scenario = $2 AND metric = $3 AND statistic = $4 AND "
            "branch = $5",
            {s.suite, s.scenario, s.metric, s.statistic, s.branch}, doing);
        for (const StoredChangePoint& c : s.change_points) {
          Exec(
              "INSERT INTO change_points (suite, scenario, metric, statistic, branch, commit_before, commit_after, "
              "timestamp_after, change_pct, p_value, for_the_worse, found_at) VALUES ($1, $2, $3, $4, $5, $6, $7, "
              "$8, $9, $10, $11, $12)",
              {s.suite, s.scenario, s.metric, s.statistic, s.branch, c.commit_before, c.commit_after, c.timestamp_after,
               DoubleText(c.change_pct), DoubleText(c.p_value), c.for_the_worse ? "1" : "0", now},
              doing);
        }
      }
      Exec("COMMIT", {}, doing);
    } catch (const Error&) {
      if (PQstatus(conn_) == CONNECTION_OK) PQclear(PQexec(conn_, "ROLLBACK"));
      throw;
    }
  }

  void InsertChange(const std::string& id, const std::string& now, const std::string& by, AlertState state,
                    const std::string& owner, const std::string& bug, const std::string& note,
                    const std::string& doing) {
    Exec(
        "INSERT INTO alert_changes (alert_id, changed_at, changed_by, state, owner, bug, note) VALUES ($1, $2, $3, "
        "$4, $5, $6, $7)",
        {id, now, by, ToString(state), owner, bug, note}, doing);
  }

  std::pair<int64_t, bool> AddAlertGroup(const AlertGroup& g, const std::string& now) override {
    const std::string doing = "while storing an alert; nothing of it was stored";
    return InTransaction(doing, [&]() -> std::pair<int64_t, bool> {
      ResultPtr added = Exec(
          "INSERT INTO alert_groups (suite, branch, commit_before, commit_after, timestamp_before, timestamp_after, "
          "state, owner, bug, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, '', '', $8, $8) ON "
          "CONFLICT (suite, branch, commit_before, commit_after) DO NOTHING RETURNING id",
          {g.suite, g.branch, g.commit_before, g.commit_after, g.timestamp_before, g.timestamp_after,
           ToString(AlertState::kNew), now},
          doing);
      if (PQntuples(added.get()) == 0) {
        ResultPtr found = Exec(
            "SELECT id FROM alert_groups WHERE suite = $1 AND branch = $2 AND commit_before = $3 AND commit_after = "
            "$4",
            {g.suite, g.branch, g.commit_before, g.commit_after}, doing);
        return {Int(found.get(), 0, 0), false};
      }
      const std::string id = Text(added.get(), 0, 0);
      for (const AlertMetric& m : g.metrics) {
        Exec(
            "INSERT INTO alert_metrics (alert_id, scenario, metric, statistic, unit, value_before, value_after, "
            "change_pct, p_value, for_the_worse) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            {id, m.scenario, m.metric, m.statistic, m.unit, DoubleText(m.before), DoubleText(m.after),
             DoubleText(m.change_pct), DoubleText(m.p_value), m.for_the_worse ? "1" : "0"},
            doing);
      }
      InsertChange(id, now, "perfgate", AlertState::kNew, "", "", "change point found by perfgate trend", doing);
      return {std::strtoll(id.c_str(), nullptr, 10), true};
    });
  }

  std::vector<AlertGroup> AlertGroups(const std::string& suite) override {
    std::vector<AlertGroup> out;
    std::map<int64_t, size_t> index;
    ForEachRow(Exec("SELECT id, suite, branch, commit_before, commit_after, timestamp_before, timestamp_after, state, "
                    "owner, bug, created_at, updated_at FROM alert_groups WHERE $1 = '' OR suite = $1 ORDER BY id",
                    {suite}),
               [&](const PGresult* r, int i) {
                 AlertGroup g;
                 g.id = Int(r, i, 0);
                 g.suite = Text(r, i, 1);
                 g.branch = Text(r, i, 2);
                 g.commit_before = Text(r, i, 3);
                 g.commit_after = Text(r, i, 4);
                 g.timestamp_before = Text(r, i, 5);
                 g.timestamp_after = Text(r, i, 6);
                 g.state = ParseAlertState(Text(r, i, 7)).value_or(AlertState::kNew);
                 g.owner = Text(r, i, 8);
                 g.bug = Text(r, i, 9);
                 g.created_at = Text(r, i, 10);
                 g.updated_at = Text(r, i, 11);
                 index[g.id] = out.size();
                 out.push_back(std::move(g));
               });
    ForEachRow(Exec("SELECT alert_id, scenario, metric, statistic, unit, value_before, value_after, change_pct, "
                    "p_value, for_the_worse FROM alert_metrics ORDER BY alert_id, scenario, metric, statistic"),
               [&](const PGresult* r, int i) {
                 auto it = index.find(Int(r, i, 0));
                 if (it == index.end()) return;
                 out[it->second].metrics.push_back({Text(r, i, 1), Text(r, i, 2), Text(r, i, 3), Text(r, i, 4),
                                                    Double(r, i, 5), Double(r, i, 6), Double(r, i, 7), Double(r, i, 8),
                                                    Int(r, i, 9) != 0});
               });
    return out;
  }

  std::vector<AlertChange> AlertChanges(int64_t id) override {
    std::vector<AlertChange> out;
    ForEachRow(Exec("SELECT id, changed_at, changed_by, state, owner, bug, note FROM alert_changes WHERE alert_id = "
                    "$1 ORDER BY id",
                    {std::to_string(id)}),
               [&](const PGresult* r, int i) {
                 out.push_back({Int(r, i, 0), Text(r, i, 1), Text(r, i, 2),
                                ParseAlertState(Text(r, i, 3)).value_or(AlertState::kNew), Text(r, i, 4), Text(r, i, 5),
                                Text(r, i, 6)});
               });
    return out;
  }

  UpdateResult UpdateAlert(int64_t id, const AlertUpdate& u, const std::string& now) override {
    const std::string doing = "while changing alert " + std::to_string(id) + "; it was not changed";
    const std::string key = std::to_string(id);
    // FOR UPDATE: a concurrent `alerts set` of the same group waits for this
    // transaction and then reads what it wrote, so neither change is lost.
    return InTransaction(doing, [&]() {
      ResultPtr current = Exec("SELECT state, owner, bug FROM alert_groups WHERE id = $1 FOR UPDATE", {key}, doing);
      if (PQntuples(current.get()) == 0) return UpdateResult::kMissing;
      const AlertState state = ParseAlertState(Text(current.get(), 0, 0)).value_or(AlertState::kNew);
      if (!u.only_from.empty() && std::find(u.only_from.begin(), u.only_from.end(), state) == u.only_from.end())
        return UpdateResult::kSkipped;
      const AlertState next = u.state.value_or(state);
      const std::string owner = u.owner.value_or(Text(current.get(), 0, 1));
      const std::string bug = u.bug.value_or(Text(current.get(), 0, 2));
      Exec("UPDATE alert_groups SET state = $1, owner = $2, bug = $3, updated_at = $4 WHERE id = $5",
           {ToString(next), owner, bug, now, key}, doing);
      InsertChange(key, now, u.by, next, owner, bug, u.note, doing);
      return UpdateResult::kChanged;
    });
  }

  std::vector<AcceptedCheck> AcceptedChecks(const std::string& suite, const std::string& branch,
                                            const std::string& after, const std::string& up_to) override {
    std::vector<AcceptedCheck> out;
    ForEachRow(Exec("SELECT c.scenario, c.metric, c.statistic, r.commit_sha FROM check_results c JOIN runs r ON r.id "
                    "= c.run_id WHERE r.suite = $1 AND ($2 = '' OR r.branch = $2) AND r.run_timestamp > $3 AND "
                    "r.run_timestamp <= $4 AND c.verdict = 'accepted' ORDER BY r.run_timestamp, r.id",
                    {suite, branch, after, up_to}),
               [&](const PGresult* r, int i) {
                 out.push_back({Text(r, i, 0), Text(r, i, 1), Text(r, i, 2), Text(r, i, 3)});
               });
    return out;
  }

  std::vector<RegressedCheck> RegressedChecks(int64_t run_id) override {
    std::vector<RegressedCheck> out;
    ForEachRow(Exec("SELECT scenario, metric FROM check_results WHERE run_id = $1 AND verdict = 'regression'",
                    {std::to_string(run_id)}),
               [&](const PGresult* r, int i) {
                 out.push_back({Text(r, i, 0), Text(r, i, 1)});
               });
    return out;
  }

  std::vector<SeriesChangePoints> ChangePoints() override {
    std::vector<SeriesChangePoints> out;
    if (SchemaVersion() < 4) return out;
    ResultPtr rows = Exec(
        "SELECT suite, scenario, metric, statistic, branch, commit_before, commit_after, timestamp_after, change_pct, "
        "p_value, for_the_worse FROM change_points ORDER BY suite, scenario, metric, statistic, branch, "
        "timestamp_after");
    const PGresult* r = rows.get();
    for (int i = 0; i < PQntuples(r); ++i) {
      if (out.empty() || out.back().suite != Text(r, i, 0) || out.back().scenario != Text(r, i, 1) ||
          out.back().metric != Text(r, i, 2) || out.back().statistic != Text(r, i, 3) ||
          out.back().branch != Text(r, i, 4))
        out.push_back({Text(r, i, 0), Text(r, i, 1), Text(r, i, 2), Text(r, i, 3), Text(r, i, 4), {}});
      out.back().change_points.push_back(
          {Text(r, i, 5), Text(r, i, 6), Text(r, i, 7), Double(r, i, 8), Double(r, i, 9), Int(r, i, 10) != 0});
    }
    return out;
  }

  // SQLSTATE of the last failed statement.
  mutable std::string last_state_;

 private:
  int version_ = -1;
};

}  // namespace

std::unique_ptr<HistoryStore> OpenPostgresHistory(const std::string& url, OpenMode mode) {
  PGconn* conn = pg::Connect(url, DisplayLocation(url));
  auto store = std::make_unique<PostgresHistory>(url, conn);
  if (mode == OpenMode::kReadOnly || mode == OpenMode::kExisting) {
    const int version = store->SchemaVersion();
    if (version == 0) {
      store->RefuseForeignTables();
      throw InputError(store->Name() + ": not a perfgate history database");
    }
    if (mode == OpenMode::kReadOnly) {
      store->CheckNotNewer();
      return store;
    }
  }
  store->Migrate();
  return store;
}

}  // namespace perfgate
