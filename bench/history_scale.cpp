// The history at a pool's scale: fills a history with a year of nightly runs
// of a pool of runners (bulk SQL, not one `history add` per run), then times
// what CI does with it, on SQLite and on PostgreSQL: one `history add`, the
// pick of --baseline-from-history, one suite's trend, and 16 writers adding
// at once. Prints each median with its rounds. Driven by bench/history_scale.sh.
//
//   history_scale --sqlite FILE | --postgres URL  [--runners 20] [--scenarios 30]
//                 [--statistics 60] [--nights 365] [--repetitions 3] [--rounds 5] [--fill]
#include <libpq-fe.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "history/history_baseline.h"
#include "history/history_db.h"
#include "history/trend.h"
#include "metrics/results_json.h"

namespace perfgate {
namespace {

struct Scale {
  int runners = 20, scenarios = 30, statistics = 60, nights = 365, repetitions = 3, rounds = 5;
};

std::string Two(int n) {
  char text[16];
  std::snprintf(text, sizeof text, "%02d", n);
  return text;
}
std::string SuiteName(int runner) { return "suite-" + Two(runner); }
std::string ScenarioName(int s) { return "scenario-" + Two(s); }
std::string MetricName(int m) { return "workload.m" + Two(m); }

Environment RunnerEnvironment(int runner) {
  Environment e;
  e.hostname = "runner-" + Two(runner);
  e.kernel = "6.1.0-18-amd64";
  e.cpu_model = "AMD EPYC 7B13";
  e.cpu_count = 2;
  e.perfgate_version = "bench";
  return e;
}

// One scenario as a run measures it: `statistics` scalar metrics (one
// statistic each), the repetitions around 1.0.
ScenarioResult Scenario(const Scale& scale, int s, double level) {
  ScenarioResult out;
  out.name = ScenarioName(s);
  for (int i = 0; i < scale.repetitions; ++i) {
    Repetition rep;
    rep.index = i;
    for (int m = 0; m < scale.statistics; ++m)
      rep.metrics[MetricName(m)] = ScalarMetric(MetricName(m), level * (1 + 0.002 * i + 0.0001 * m), "s");
    out.repetitions.push_back(rep);
  }
  return out;
}

RunResults Run(const Scale& scale, int runner, const std::string& timestamp) {
  RunResults r;
  r.suite = SuiteName(runner);
  r.verdict = Verdict::kPass;
  r.environment = RunnerEnvironment(runner);
  r.environment.timestamp = timestamp;
  for (int s = 0; s < scale.scenarios; ++s) r.scenarios.push_back(Scenario(scale, s, 1.0));
  return r;
}

std::string Packed(const ScenarioResult& s, uLong* bytes) {
  const std::string text = ToJson(s).dump();
  *bytes = static_cast<uLong>(text.size());
  uLongf size = compressBound(*bytes);
  std::string out(size, '\0');
  compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(text.data()), *bytes,
            Z_DEFAULT_COMPRESSION);
  out.resize(size);
  return out;
}

// Night n of the year as the run time; runner r a minute apart from the next.
std::string NightSql(const std::string& n, const std::string& r) {
  return "to_char(timestamp '2025-11-27 02:00:00' + " + n + " * interval '1 day' + " + r +
         " * interval '1 minute', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')";
}

void PgExec(PGconn* c, const std::string& sql) {
  PGresult* r = PQexec(c, sql.c_str());
  const ExecStatusType s = PQresultStatus(r);
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
    std::fprintf(stderr, "history_scale: %s\n%s\n", PQresultErrorMessage(r), sql.c_str());
    std::exit(3);
  }
  PQclear(r);
}

std::string HexBytea(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out = "\\x";
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// The level of series m of runner r on night n: a 10 % step at night 200 for
// every fifth metric, so trends have change points to find.
std::string LevelSql() { return "(1.0 + CASE WHEN n >= 200 AND m % 5 = 0 THEN 0.1 ELSE 0 END)"; }

void FillPostgres(const std::string& url, const Scale& scale) {
  HistoryDb::Open(url);  // the schema, migrated as perfgate makes it
  PGconn* c = PQconnectdb(url.c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    std::fprintf(stderr, "history_scale: %s", PQerrorMessage(c));
    std::exit(3);
  }
  // Bulk load as a restore would: without the foreign-key triggers and with
  // the values' primary key built once at the end.
  PgExec(c, "SET session_replication_role = replica");
  PgExec(c, "SET maintenance_work_mem = '512MB'");
  // The values' primary key as the schema made it, rebuilt as such at the end.
  PGresult* key = PQexec(c, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'metric_values_pkey'");
  const std::string key_definition = PQntuples(key) == 1 ? PQgetvalue(key, 0, 0) : "";
  PQclear(key);
  if (key_definition.empty()) {
    std::fprintf(stderr, "history_scale: metric_values has no primary key\n");
    std::exit(3);
  }
  PgExec(c, "ALTER TABLE metric_values DROP CONSTRAINT metric_values_pkey");
  PgExec(c,
         "INSERT INTO series (scenario, metric, statistic, unit, better) SELECT 'scenario-' || lpad(s::text, 2, "
         "'0'), 'workload.m' || lpad(m::text, 2, '0'), 'value', 's', 'lower' FROM generate_series(0, " +
             std::to_string(scale.scenarios - 1) + ") s, generate_series(0, " + std::to_string(scale.statistics - 1) +
             ") m");
  PgExec(c,
         "INSERT INTO runs (suite, commit_sha, branch, run_timestamp, added_at, hostname, kernel, cpu_model, "
         "cpu_count, perfgate_version, verdict, kept_whole) SELECT 'suite-' || lpad(r::text, 2, '0'), md5(r || '-' "
         "|| n), 'main', " +
             NightSql("n", "r") + ", " + NightSql("n", "r") +
             ", 'runner-' || lpad(r::text, 2, '0'), '6.1.0-18-amd64', 'AMD EPYC 7B13', 2, 'bench', "
             "CASE WHEN n % 50 = 49 THEN 'regression' ELSE 'pass' END, 1 FROM generate_series(0, " +
             std::to_string(scale.runners - 1) + ") r, generate_series(0, " + std::to_string(scale.nights - 1) + ") n");
  PgExec(c,
         "CREATE TEMP TABLE night AS SELECT id, ((extract(epoch FROM run_timestamp::timestamp) - extract(epoch FROM "
         "timestamp '2025-11-27 02:00:00')) / 86400)::int AS n FROM runs");
  PgExec(c, "CREATE TEMP TABLE series_number AS SELECT id, substr(metric, 11)::int AS m FROM series");
  PgExec(c, "INSERT INTO metric_values (run_id, series_id, repetition, value) SELECT r.id, s.id, rep, " + LevelSql() +
                " * (1 + 0.002 * rep + 0.0001 * m) * (1 + 0.01 * random()) FROM night r CROSS JOIN series_number s "
                "CROSS JOIN generate_series(0, " +
                std::to_string(scale.repetitions - 1) + ") rep");
  PgExec(c, "ALTER TABLE metric_values ADD CONSTRAINT metric_values_pkey " + key_definition);
  uLong bytes = 0;
  const std::string blob = Packed(Scenario(scale, 0, 1.0), &bytes);
  PgExec(c,
         "INSERT INTO scenario_results (run_id, scenario, result_zlib, result_bytes) SELECT r.id, 'scenario-' || "
         "lpad(s::text, 2, '0'), '" +
             HexBytea(blob) + "'::bytea, " + std::to_string(bytes) + " FROM runs r, generate_series(0, " +
             std::to_string(scale.scenarios - 1) + ") s");
  PgExec(c,
         "INSERT INTO check_results (run_id, scenario, name, metric, statistic, verdict, change_pct) SELECT r.id, "
         "'scenario-' || lpad(s::text, 2, '0'), 'wall', 'workload.m00', 'value', r.verdict, 0.5 FROM runs r, "
         "generate_series(0, " +
             std::to_string(scale.scenarios - 1) + ") s");
  PgExec(c, "SET session_replication_role = DEFAULT");
  PgExec(c, "VACUUM ANALYZE");
  PQfinish(c);
}

void SqliteExec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::fprintf(stderr, "history_scale: %s\n%s\n", error, sql.c_str());
    std::exit(3);
  }
}

void FillSqlite(const std::string& file, const Scale& scale) {
  HistoryDb::Open(file);
  sqlite3* db = nullptr;
  sqlite3_open(file.c_str(), &db);
  SqliteExec(db, "PRAGMA journal_mode = WAL");  // what a shared file would use; also faster to fill
  SqliteExec(db, "BEGIN");
  SqliteExec(db, "WITH RECURSIVE s(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM s WHERE x < " +
                     std::to_string(scale.scenarios - 1) +
                     "), m(y) AS (SELECT 0 UNION ALL SELECT y + 1 FROM m WHERE y < " +
                     std::to_string(scale.statistics - 1) +
                     ") INSERT INTO series (scenario, metric, statistic, unit, better) SELECT printf('scenario-%02d', "
                     "x), printf('workload.m%02d', y), 'value', 's', 'lower' FROM s, m");
  SqliteExec(db, "WITH RECURSIVE r(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM r WHERE x < " +
                     std::to_string(scale.runners - 1) +
                     "), n(y) AS (SELECT 0 UNION ALL SELECT y + 1 FROM n WHERE y < " +
                     std::to_string(scale.nights - 1) +
                     ") INSERT INTO runs (suite, commit_sha, branch, run_timestamp, added_at, hostname, kernel, "
                     "cpu_model, cpu_count, perfgate_version, verdict, kept_whole) SELECT printf('suite-%02d', x), "
                     "hex(randomblob(20)), 'main', strftime('%Y-%m-%dT%H:%M:%SZ', '2025-11-27 02:00:00', '+' || y || "
                     "' days', '+' || x || ' minutes'), '', printf('runner-%02d', x), '6.1.0-18-amd64', 'AMD EPYC "
                     "7B13', 2, 'bench', CASE WHEN y % 50 = 49 THEN 'regression' ELSE 'pass' END, 1 FROM r, n");
  SqliteExec(db, "WITH RECURSIVE rep(z) AS (SELECT 0 UNION ALL SELECT z + 1 FROM rep WHERE z < " +
                     std::to_string(scale.repetitions - 1) +
                     ") INSERT INTO metric_values (run_id, series_id, repetition, value) SELECT r.id, s.id, rep.z, "
                     "(1.0 + CASE WHEN julianday(r.run_timestamp) - julianday('2025-11-27') >= 200 AND "
                     "CAST(substr(s.metric, 11) AS INTEGER) % 5 = 0 THEN 0.1 ELSE 0 END) * (1 + 0.002 * rep.z) * (1 + "
                     "0.01 * (abs(random()) % 1000) / 1000.0) FROM runs r, series s, rep ORDER BY r.id, s.id, rep.z");
  uLong bytes = 0;
  const std::string blob = Packed(Scenario(scale, 0, 1.0), &bytes);
  sqlite3_stmt* whole = nullptr;
  sqlite3_prepare_v2(db,
                     ("WITH RECURSIVE s(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM s WHERE x < " +
                      std::to_string(scale.scenarios - 1) +
                      ") INSERT INTO scenario_results (run_id, scenario, result_zlib, result_bytes) SELECT r.id, "
                      "printf('scenario-%02d', s.x), ?1, ?2 FROM runs r, s")
                         .c_str(),
                     -1, &whole, nullptr);
  sqlite3_bind_blob(whole, 1, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(whole, 2, static_cast<sqlite3_int64>(bytes));
  sqlite3_step(whole);
  sqlite3_finalize(whole);
  SqliteExec(db, "COMMIT");
  SqliteExec(db, "ANALYZE");
  sqlite3_close(db);
}

double Seconds(const std::function<void()>& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Report(const std::string& what, std::vector<double> times) {
  std::sort(times.begin(), times.end());
  std::string all;
  for (double t : times) all += (all.empty() ? "" : " ") + std::to_string(t).substr(0, 6);
  std::printf("%-44s median %8.3f s  (rounds: %s)\n", what.c_str(), times[times.size() / 2], all.c_str());
  std::fflush(stdout);
}

std::string NewNight(int round, int runner) {
  char text[40];
  std::snprintf(text, sizeof text, "2027-01-%02dT%02d:%02d:00Z", 1 + round % 28, runner % 24, 30 + round / 28);
  return text;
}

int Main(int argc, char** argv) {
  Scale scale;
  std::string location;
  bool fill = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "history_scale: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--sqlite" || a == "--postgres")
      location = next();
    else if (a == "--runners")
      scale.runners = std::stoi(next());
    else if (a == "--scenarios")
      scale.scenarios = std::stoi(next());
    else if (a == "--statistics")
      scale.statistics = std::stoi(next());
    else if (a == "--nights")
      scale.nights = std::stoi(next());
    else if (a == "--repetitions")
      scale.repetitions = std::stoi(next());
    else if (a == "--rounds")
      scale.rounds = std::stoi(next());
    else if (a == "--fill")
      fill = true;
    else {
      std::fprintf(stderr, "history_scale: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (location.empty() || scale.rounds < 1 || scale.runners < 16) {
    std::fprintf(stderr, "history_scale: --sqlite FILE or --postgres URL; --runners at least 16\n");
    return 2;
  }
  const std::string name = IsPostgresLocation(location) ? "PostgreSQL" : "SQLite";
  if (fill) {
    const double t = Seconds([&] {
      if (IsPostgresLocation(location))
        FillPostgres(location, scale);
      else
        FillSqlite(location, scale);
    });
    std::printf(
        "%s: filled %d runners x %d nights x %d scenarios x %d statistics x %d repetitions = %lld values "
        "in %.0f s\n",
        name.c_str(), scale.runners, scale.nights, scale.scenarios, scale.statistics, scale.repetitions,
        static_cast<long long>(scale.runners) * scale.nights * scale.scenarios * scale.statistics * scale.repetitions,
        t);
  }
  const int version = HistoryDb::OpenForReading(location).SchemaVersion();
  if (version < kHistorySchemaVersion) {  // a history filled by an older perfgate: migrated once, timed apart
    const double t = Seconds([&] { HistoryDb::Open(location); });
    std::printf("%s: migrated from schema %d to %d in %.1f s\n", name.c_str(), version, kHistorySchemaVersion, t);
  }
  std::printf("%s: %lld runs in the history\n", name.c_str(),
              static_cast<long long>(HistoryDb::OpenForReading(location).RunCount()));

  std::vector<double> add, pick, trend, read_series, writers;
  // New commits on every invocation: adding a run the history holds stores nothing.
  const std::string salt = std::to_string(std::time(nullptr));
  for (int round = 0; round < scale.rounds; ++round) {
    const RunResults run = Run(scale, 0, NewNight(round, 0));
    add.push_back(Seconds([&] {
      HistoryDb db = HistoryDb::Open(location);
      if (!db.AddRun(run, {"new-" + salt + "-" + std::to_string(round), "main"}))
        std::fprintf(stderr, "history_scale: the run was already stored\n");
    }));
    std::vector<std::string> scenarios;
    for (int s = 0; s < scale.scenarios; ++s) scenarios.push_back(ScenarioName(s));
    size_t picked = 0;
    pick.push_back(Seconds([&] {
      const HistoryDb db = HistoryDb::OpenForReading(location);
      picked = ChooseHistoryBaselines(db, location, {SuiteName(1), scenarios, "main", RunnerEnvironment(1)})
                   .scenarios.size();
    }));
    if (picked != scenarios.size()) std::fprintf(stderr, "history_scale: picked %zu scenarios\n", picked);
    size_t series = 0, changes = 0;
    std::vector<HistorySeries> read;
    trend.push_back(Seconds([&] {
      const HistoryDb db = HistoryDb::OpenExisting(location);
      read_series.push_back(Seconds([&] { read = db.Series({"main", DefaultTrendStatistics(), SuiteName(2)}); }));
      const auto trends = AnalyzeTrends(std::move(read), {});
      series = trends.size();
      for (const auto& t : trends) changes += t.change_points.size();
    }));
    if (round == 0)
      std::printf("%s: one suite's trend: %zu series, %zu change points\n", name.c_str(), series, changes);
    // 16 runners add their run of the night at once.
    std::vector<RunResults> runs;
    for (int w = 0; w < 16; ++w) runs.push_back(Run(scale, w, NewNight(round, w) + "x"));
    writers.push_back(Seconds([&] {
      std::vector<pid_t> children;
      for (int w = 0; w < 16; ++w) {
        pid_t pid = fork();
        if (pid == 0) {
          try {
            HistoryDb db = HistoryDb::Open(location);
            _exit(db.AddRun(runs[static_cast<size_t>(w)], {"pool-" + salt + "-" + std::to_string(round), "main"}) ? 0
                                                                                                                  : 1);
          } catch (const Error& e) {
            std::fprintf(stderr, "writer %d: %s\n", w, e.what());
            _exit(3);
          }
        }
        children.push_back(pid);
      }
      for (pid_t pid : children) {
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::fprintf(stderr, "history_scale: a writer failed\n");
      }
    }));
  }
  Report(name + ": history add (one run)", add);
  Report(name + ": --baseline-from-history pick", pick);
  Report(name + ": trend of one suite", trend);
  Report(name + ":   of which reading its series", read_series);
  Report(name + ": 16 concurrent history adds", writers);
  return 0;
}

}  // namespace
}  // namespace perfgate

int main(int argc, char** argv) {
  try {
    return perfgate::Main(argc, argv);
  } catch (const perfgate::Error& e) {
    std::fprintf(stderr, "history_scale: %s\n", e.what());
    return static_cast<int>(e.code());
  }
}
