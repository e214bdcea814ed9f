#include "history/history_db.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>

#include "metrics/error.h"
#include "metrics/results_json.h"

namespace perfgate {
namespace {

// Step i brings a database from user_version i to i + 1.
const char* const kMigrations[] = {
    // 0 -> 1: runs and the per-repetition value of every statistic.
    R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  suite TEXT NOT NULL,
  commit_sha TEXT NOT NULL,
  branch TEXT NOT NULL,
  run_timestamp TEXT NOT NULL,
  added_at TEXT NOT NULL,
  hostname TEXT NOT NULL,
  kernel TEXT NOT NULL,
  cpu_model TEXT NOT NULL,
  cpu_count INTEGER NOT NULL,
  perfgate_version TEXT NOT NULL,
  verdict TEXT NOT NULL,
  UNIQUE (suite, commit_sha, branch, run_timestamp)
);
-- One row per (scenario, metric, statistic, unit, direction): the values
-- below refer to it by id, which keeps a year of nightly runs small.
CREATE TABLE series (
  id INTEGER PRIMARY KEY,
  scenario TEXT NOT NULL,
  metric TEXT NOT NULL,
  statistic TEXT NOT NULL,
  unit TEXT NOT NULL,
  better TEXT NOT NULL,
  UNIQUE (scenario, metric, statistic, unit, better)
);
CREATE TABLE metric_values (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  series_id INTEGER NOT NULL REFERENCES series (id),
  repetition INTEGER NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (run_id, series_id, repetition)
) WITHOUT ROWID;
)sql",
    // 1 -> 2: the verdict of each check, so a trend can show what the gate said.
    R"sql(
CREATE TABLE check_results (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  scenario TEXT NOT NULL,
  name TEXT NOT NULL,
  metric TEXT NOT NULL,
  statistic TEXT NOT NULL,
  verdict TEXT NOT NULL,
  change_pct REAL
);
CREATE INDEX check_results_run ON check_results (run_id);
)sql",
    // 2 -> 3: each scenario's measured repetitions whole (histograms, probe
    // costs, evidence) as results.json holds them, so that a later run can be
    // compared with them as with a stored baseline (--baseline-from-history);
    // the statistics above cannot be turned back into histograms. The JSON
    // is deflated (zlib): about 8 KB per repetition under five probes
    // shrinks ninefold, which keeps a year of nightly runs small. Runs added
    // before keep kept_whole = 0.
    R"sql(
ALTER TABLE runs ADD COLUMN kept_whole INTEGER NOT NULL DEFAULT 0;
CREATE TABLE scenario_results (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  scenario TEXT NOT NULL,
  result_zlib BLOB NOT NULL,
  result_bytes INTEGER NOT NULL,
  PRIMARY KEY (run_id, scenario)
) WITHOUT ROWID;
)sql",
};
static_assert(std::size(kMigrations) == kHistorySchemaVersion);

// A prepared statement; errors name the database file.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& file, const std::string& sql) : db_(db), file_(file) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) Fail();
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int i, const std::string& text) {
    Check(sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Statement& BindBlob(int i, const std::string& bytes) {
    Check(sqlite3_bind_blob(stmt_, i, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Statement& Bind(int i, double value) {
    Check(sqlite3_bind_double(stmt_, i, value));
    return *this;
  }
  Statement& Bind(int i, int64_t value) {
    Check(sqlite3_bind_int64(stmt_, i, value));
    return *this;
  }
  Statement& BindOptional(int i, const std::optional<double>& value) {
    Check(value && std::isfinite(*value) ? sqlite3_bind_double(stmt_, i, *value) : sqlite3_bind_null(stmt_, i));
    return *this;
  }
  // True while there is a row.
  bool Step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) Fail();
    return false;
  }
  // Runs an insert or update again with new bindings.
  void Run() {
    Step();
    sqlite3_reset(stmt_);
  }
  std::string Text(int column) const {
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    return text ? reinterpret_cast<const char*>(text) : "";
  }
  std::string Blob(int column) const {
    const void* data = sqlite3_column_blob(stmt_, column);
    return data ? std::string(static_cast<const char*>(data), static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
                : std::string();
  }
  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  double Double(int column) const { return sqlite3_column_double(stmt_, column); }

 private:
  void Check(int rc) {
    if (rc != SQLITE_OK) Fail();
  }
  [[noreturn]] void Fail() const;
  sqlite3* db_;
  const std::string& file_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Not a database, corrupt, read-only or data the schema refuses (two
// repetitions with one index) is the user's input; the rest is the machine.
[[noreturn]] void ThrowSqliteError(sqlite3* db, const std::string& file, int rc) {
  std::string message = file + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  int primary = rc & 0xff;
  if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT || primary == SQLITE_READONLY ||
      primary == SQLITE_CANTOPEN || primary == SQLITE_CONSTRAINT) {
    throw InputError(message);
  }
  throw InfraError(message);
}

void Statement::Fail() const { ThrowSqliteError(db_, file_, sqlite3_extended_errcode(db_)); }

std::string Deflate(const std::string& text) {
  uLongf size = compressBound(static_cast<uLong>(text.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(text.data()),
                static_cast<uLong>(text.size()), Z_DEFAULT_COMPRESSION) != Z_OK) {
    throw InfraError("zlib: cannot compress a scenario's result");
  }
  out.resize(size);
  return out;
}

// nullopt when `packed` does not inflate to exactly `bytes` bytes.
std::optional<std::string> Inflate(const std::string& packed, int64_t bytes) {
  if (bytes < 0 || bytes > (int64_t{1} << 32)) return std::nullopt;
  std::string out(static_cast<size_t>(bytes), '\0');
  uLongf size = static_cast<uLongf>(bytes);
  if (uncompress(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(packed.data()),
                 static_cast<uLong>(packed.size())) != Z_OK ||
      size != static_cast<uLongf>(bytes)) {
    return std::nullopt;
  }
  return out;
}

std::string NowIso8601() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// Rolls back unless committed.
class Transaction {
 public:
  Transaction(sqlite3* db, const std::string& file) : db_(db), file_(file) { Exec("BEGIN IMMEDIATE"); }
  ~Transaction() {
    if (!committed_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void Commit() {
    Exec("COMMIT");
    committed_ = true;
  }

 private:
  void Exec(const char* sql) {
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) ThrowSqliteError(db_, file_, rc);
  }
  sqlite3* db_;
  const std::string& file_;
  bool committed_ = false;
};

}  // namespace

HistoryDb HistoryDb::Open(const std::string& file) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  HistoryDb db(file, raw);
  if (rc != SQLITE_OK) ThrowSqliteError(raw, file, rc);
  sqlite3_busy_timeout(raw, 10000);  // two nightly jobs adding at once wait, not fail
  sqlite3_extended_result_codes(raw, 1);
  db.Exec("PRAGMA foreign_keys = ON");
  db.Migrate();
  return db;
}

HistoryDb HistoryDb::OpenExisting(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) throw InputError(file + ": no such history database");
  return Open(file);
}

HistoryDb HistoryDb::OpenForReading(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) throw InputError(file + ": no such history database");
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  HistoryDb db(file, raw);
  if (rc != SQLITE_OK) ThrowSqliteError(raw, file, rc);
  sqlite3_busy_timeout(raw, 10000);
  sqlite3_extended_result_codes(raw, 1);
  const int version = db.SchemaVersion();
  if (version == 0) throw InputError(file + ": not a perfgate history database");
  if (version > kHistorySchemaVersion) {
    throw InputError(file + ": history schema version " + std::to_string(version) + " is newer than this perfgate's (" +
                     std::to_string(kHistorySchemaVersion) + ")");
  }
  return db;
}

void HistoryDb::Exec(const std::string& sql) const {
  char* error = nullptr;
  int rc = sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return;
  sqlite3_free(error);
  ThrowSqliteError(db_.get(), file_, rc);
}

int HistoryDb::SchemaVersion() const {
  Statement version(db_.get(), file_, "PRAGMA user_version");
  version.Step();
  return static_cast<int>(version.Int(0));
}

void HistoryDb::Migrate() {
  // Reading needs no lock; a migration re-reads the version under the write
  // lock, since another process may have migrated meanwhile.
  for (int version = SchemaVersion(); version < kHistorySchemaVersion;) {
    Transaction transaction(db_.get(), file_);
    version = SchemaVersion();
    if (version >= kHistorySchemaVersion) break;
    if (version == 0) {
      Statement tables(db_.get(), file_, "SELECT count(*) FROM sqlite_schema");
      tables.Step();
      if (tables.Int(0) > 0) throw InputError(file_ + ": an SQLite database, but not a perfgate history");
    }
    Exec(kMigrations[version]);
    Exec("PRAGMA user_version = " + std::to_string(version + 1));
    transaction.Commit();
    ++version;
  }
  int version = SchemaVersion();
  if (version > kHistorySchemaVersion) {
    throw InputError(file_ + ": history schema version " + std::to_string(version) +
                     " is newer than this perfgate's (" + std::to_string(kHistorySchemaVersion) + ")");
  }
}

int64_t HistoryDb::RunCount() const {
  Statement count(db_.get(), file_, "SELECT count(*) FROM runs");
  count.Step();
  return count.Int(0);
}

int64_t HistoryDb::SeriesId(const std::array<std::string, 5>& key) {
  Statement insert(
      db_.get(), file_,
      "INSERT OR IGNORE INTO series (scenario, metric, statistic, unit, better) VALUES (?1, ?2, ?3, ?4, ?5)");
  Statement select(db_.get(), file_,
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

bool HistoryDb::AddRun(const RunResults& results, const RunIdentity& identity) {
  if (identity.commit.empty()) throw InputError("--commit: must not be empty");
  if (identity.branch.empty()) throw InputError("--branch: must not be empty");
  if (results.partial) throw InputError("the run is partial (it was interrupted); not added to the history");
  const Environment& env = results.environment;
  std::string timestamp = env.timestamp.empty() ? NowIso8601() : env.timestamp;

  Transaction transaction(db_.get(), file_);
  Statement exists(db_.get(), file_,
                   "SELECT 1 FROM runs WHERE suite = ?1 AND commit_sha = ?2 AND branch = ?3 AND run_timestamp = ?4");
  exists.Bind(1, results.suite).Bind(2, identity.commit).Bind(3, identity.branch).Bind(4, timestamp);
  if (exists.Step()) return false;

  Statement run(db_.get(), file_,
                "INSERT INTO runs (suite, commit_sha, branch, run_timestamp, added_at, hostname, kernel, cpu_model, "
                "cpu_count, perfgate_version, verdict, kept_whole) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                "?11, 1)");
  run.Bind(1, results.suite).Bind(2, identity.commit).Bind(3, identity.branch).Bind(4, timestamp);
  run.Bind(5, NowIso8601()).Bind(6, env.hostname).Bind(7, env.kernel).Bind(8, env.cpu_model);
  run.Bind(9, static_cast<int64_t>(env.cpu_count)).Bind(10, env.perfgate_version).Bind(11, ToString(results.verdict));
  run.Run();
  const int64_t run_id = sqlite3_last_insert_rowid(db_.get());

  Statement value(db_.get(), file_,
                  "INSERT INTO metric_values (run_id, series_id, repetition, value) VALUES (?1, ?2, ?3, ?4)");
  Statement check(db_.get(), file_,
                  "INSERT INTO check_results (run_id, scenario, name, metric, statistic, verdict, change_pct) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  Statement whole(db_.get(), file_,
                  "INSERT INTO scenario_results (run_id, scenario, result_zlib, result_bytes) VALUES (?1, ?2, ?3, ?4)");
  std::map<std::array<std::string, 5>, int64_t> series_ids;
  for (const ScenarioResult& scenario : results.scenarios) {
    // What a baseline file would hold: the verdicts and what they were
    // compared with belong to this run, not to a later one's baseline.
    ScenarioResult kept = scenario;
    kept.checks.clear();
    kept.baseline_repetitions.clear();
    kept.retaken.clear();
    kept.trace.reset();
    const std::string text = ToJson(kept).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    whole.Bind(1, run_id).Bind(2, scenario.name).BindBlob(3, Deflate(text));
    whole.Bind(4, static_cast<int64_t>(text.size()));
    whole.Run();
    for (const Repetition& rep : scenario.repetitions) {
      if (!rep.measured()) continue;
      for (const auto& [name, metric] : rep.metrics) {
        for (const std::string& statistic : StatisticsFor(metric.kind)) {
          std::optional<double> v = StatisticValue(metric, statistic);
          if (!v || !std::isfinite(*v)) continue;
          std::array<std::string, 5> key = {scenario.name, name, statistic, StatisticUnit(metric, statistic),
                                            ToString(metric.better)};
          auto known = series_ids.find(key);
          int64_t series = known != series_ids.end() ? known->second : series_ids[key] = SeriesId(key);
          value.Bind(1, run_id).Bind(2, series).Bind(3, static_cast<int64_t>(rep.index)).Bind(4, *v);
          value.Run();
        }
      }
    }
    for (const CheckResult& c : scenario.checks) {
      check.Bind(1, run_id).Bind(2, scenario.name).Bind(3, c.spec.name).Bind(4, c.spec.metric).Bind(5, c.statistic);
      check.Bind(6, ToString(c.verdict))
          .BindOptional(7, c.baseline_values.empty() ? std::nullopt : std::optional(c.change_pct));
      check.Run();
    }
  }
  transaction.Commit();
  return true;
}

std::vector<HistorySeries> HistoryDb::Series(const SeriesFilter& filter) const {
  Statement rows(db_.get(), file_,
                 "SELECT r.suite, s.scenario, s.metric, s.statistic, s.unit, s.better, r.id, r.commit_sha, r.branch, "
                 "r.run_timestamp, v.value FROM metric_values v JOIN runs r ON r.id = v.run_id "
                 "JOIN series s ON s.id = v.series_id WHERE ?1 = '' OR r.branch = ?1 "
                 "ORDER BY r.suite, s.scenario, s.metric, s.statistic, r.run_timestamp, r.id, v.repetition");
  rows.Bind(1, filter.branch);
  std::vector<HistorySeries> out;
  auto wanted = [&](const std::string& statistic) {
    return filter.statistics.empty() ||
           std::find(filter.statistics.begin(), filter.statistics.end(), statistic) != filter.statistics.end();
  };
  while (rows.Step()) {
    if (!wanted(rows.Text(3))) continue;
    bool same_series = !out.empty() && out.back().suite == rows.Text(0) && out.back().scenario == rows.Text(1) &&
                       out.back().metric == rows.Text(2) && out.back().statistic == rows.Text(3);
    if (!same_series) {
      HistorySeries s{rows.Text(0), rows.Text(1), rows.Text(2), rows.Text(3), rows.Text(4), Better::kLower, {}};
      s.better = ParseBetter(rows.Text(5)).value_or(Better::kLower);
      out.push_back(std::move(s));
    }
    HistorySeries& series = out.back();
    if (series.points.empty() || series.points.back().run_id != rows.Int(6)) {
      series.points.push_back({rows.Int(6), rows.Text(7), rows.Text(8), rows.Text(9), {}});
    }
    series.points.back().values.push_back(rows.Double(10));
  }
  return out;
}

std::vector<std::string> HistoryDb::Branches() const {
  Statement rows(db_.get(), file_, "SELECT DISTINCT branch FROM runs ORDER BY branch");
  std::vector<std::string> out;
  while (rows.Step()) out.push_back(rows.Text(0));
  return out;
}

std::vector<StoredScenarioRun> HistoryDb::ScenarioRuns(const std::string& suite, const std::string& scenario,
                                                       const std::string& branch) const {
  // A database of schema 2, read without migrating, has no results kept whole.
  const bool whole = SchemaVersion() >= 3;
  Statement rows(db_.get(), file_,
                 std::string("SELECT r.id, r.commit_sha, r.branch, r.verdict, r.run_timestamp, r.hostname, r.kernel, "
                             "r.cpu_model, r.cpu_count, r.perfgate_version, ") +
                     (whole ? "r.kept_whole, sr.result_zlib, sr.result_bytes FROM runs r LEFT JOIN scenario_results "
                              "sr ON sr.run_id = r.id AND sr.scenario = ?2 "
                            : "0, NULL, NULL FROM runs r ") +
                     "WHERE r.suite = ?1 AND (?3 = '' OR r.branch = ?3) ORDER BY r.run_timestamp DESC, r.id DESC");
  rows.Bind(1, suite).Bind(3, branch);
  if (whole) rows.Bind(2, scenario);
  std::vector<StoredScenarioRun> out;
  while (rows.Step()) {
    StoredScenarioRun run;
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
    if (std::string packed = rows.Blob(11); !packed.empty()) {
      const std::string where = "run " + std::to_string(run.run_id) + " scenario " + scenario;
      const std::optional<std::string> text = Inflate(packed, rows.Int(12));
      nlohmann::json j =
          text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json(nlohmann::json::value_t::discarded);
      if (j.is_discarded()) throw InputError(file_ + ": " + where + ": the stored result is corrupt");
      run.scenario = ScenarioFromJson(j, file_, where);
    }
    out.push_back(std::move(run));
  }
  return out;
}

}  // namespace perfgate
