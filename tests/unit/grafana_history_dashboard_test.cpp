// The Grafana dashboard of the PostgreSQL history
// (dashboards/grafana/perfgate-history.json), checked without Grafana: its
// structure as Grafana's dashboard model has it, and every query of every
// panel, variable and annotation run on the test server against a history
// perfgate wrote, with the macros and variables expanded as Grafana's
// PostgreSQL data source expands them.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "harness/files.h"
#include "harness/history_backends.h"
#include "harness/paths.h"
#include "history/alerts.h"
#include "history/history_db.h"
#include "history/trend.h"

namespace perfgate {
namespace {

const std::string kHistoryDashboard = std::string(PERFGATE_SOURCE_DIR) + "/dashboards/grafana/perfgate-history.json";
const std::string kPostgresSource = "grafana-postgresql-datasource";

nlohmann::json HistoryDashboard() { return nlohmann::json::parse(testing::ReadFile(kHistoryDashboard)); }

// Every query of the dashboard: what it is, its SQL, and the columns Grafana needs of it.
struct DashboardQuery {
  std::string where;
  std::string sql;
  std::vector<std::string> columns;
};

std::vector<DashboardQuery> Queries(const nlohmann::json& d) {
  std::vector<DashboardQuery> out;
  for (const auto& v : d["templating"]["list"]) {
    if (v["type"] == "query") out.push_back({"variable " + v["name"].get<std::string>(), v["query"], {}});
  }
  for (const auto& a : d["annotations"]["list"])
    out.push_back({"annotation " + a["name"].get<std::string>(), a["target"]["rawSql"], {"time", "text", "tags"}});
  for (const auto& p : d["panels"]) {
    if (p["type"] == "row") continue;
    for (const auto& t : p["targets"]) {
      std::vector<std::string> columns;
      if (t["format"] == "time_series") columns = {"time", "metric", "value"};
      out.push_back({"panel " + p["title"].get<std::string>(), t["rawSql"], columns});
    }
  }
  return out;
}

TEST(GrafanaHistoryDashboard, EveryPanelQueriesThePostgresDataSourceInRawSql) {
  const nlohmann::json d = HistoryDashboard();
  EXPECT_EQ(d["uid"], "perfgate-history");
  const auto& variables = d["templating"]["list"];
  ASSERT_FALSE(variables.empty());
  EXPECT_EQ(variables[0]["type"], "datasource");
  EXPECT_EQ(variables[0]["query"], kPostgresSource);
  std::set<int> ids;
  for (const auto& p : d["panels"]) {
    EXPECT_TRUE(ids.insert(p["id"].get<int>()).second) << "panel id twice: " << p["id"];
    if (p["type"] == "row") continue;
    EXPECT_EQ(p["datasource"]["type"], kPostgresSource) << p["title"];
    EXPECT_EQ(p["datasource"]["uid"], "${datasource}") << p["title"];
    ASSERT_FALSE(p["targets"].empty()) << p["title"];
    for (const auto& t : p["targets"]) {
      EXPECT_TRUE(t["rawQuery"].get<bool>()) << p["title"];
      const std::string format = t["format"];
      EXPECT_TRUE(format == "time_series" || format == "table") << p["title"];
      EXPECT_EQ(format == "time_series", p["type"] == "timeseries") << p["title"];
    }
  }
  for (const auto& v : variables) {
    if (v["type"] == "query") {
      EXPECT_EQ(v["datasource"]["type"], kPostgresSource) << v["name"];
    }
  }
}

// A query as Grafana's PostgreSQL data source sends it: $__time and
// $__timeFilter expanded over the dashboard's range, multi-value variables
// as a quoted list, the others as they are.
std::string Expand(std::string sql, const std::map<std::string, std::vector<std::string>>& variables) {
  sql = std::regex_replace(sql, std::regex(R"(\$__timeFilter\(([^()]*(\([^()]*\))?[^()]*)\))"),
                           "$1 BETWEEN '2026-01-01T00:00:00Z' AND '2027-01-01T00:00:00Z'");
  sql = std::regex_replace(sql, std::regex(R"(\$__time\(([^()]*(\([^()]*\))?[^()]*)\))"), "$1 AS \"time\"");
  // Longest names first, so that $scenario does not eat $scenarios.
  std::vector<std::string> names;
  for (const auto& [name, values] : variables) names.push_back(name);
  std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  for (const std::string& name : names) {
    const std::vector<std::string>& values = variables.at(name);
    std::string text;
    if (values.size() == 1) {
      text = values[0];
    } else {
      for (const std::string& v : values) text += (text.empty() ? "'" : ",'") + v + "'";
    }
    for (size_t at; (at = sql.find("$" + name)) != std::string::npos;) sql.replace(at, name.size() + 1, text);
  }
  return sql;
}

RunResults NightlyRun(int day, double wall_s, Verdict verdict) {
  RunResults r;
  r.suite = "nightly";
  r.verdict = verdict;
  r.environment.timestamp = "2026-11-" + std::string(day < 10 ? "0" : "") + std::to_string(day) + "T02:00:00Z";
  r.environment.hostname = "runner-a";
  for (const char* name : {"camera", "fio"}) {
    ScenarioResult s;
    s.name = name;
    for (int i = 0; i < 3; ++i) {
      Repetition rep;
      rep.index = i;
      rep.metrics["workload.wall_time"] = ScalarMetric("workload.wall_time", wall_s * (1 + 0.001 * i), "s");
      s.repetitions.push_back(rep);
    }
    CheckResult c;
    c.spec.name = c.spec.metric = "workload.wall_time";
    c.statistic = "value";
    c.verdict = verdict;
    s.checks.push_back(c);
    r.scenarios.push_back(s);
  }
  return r;
}

TEST(GrafanaHistoryDashboard, EveryQueryReturnsRowsFromAHistoryPerfgateWrote) {
  PERFGATE_REQUIRE_HISTORY_BACKEND(testing::HistoryBackend::kPostgres);
  testing::TestHistory history(testing::HistoryBackend::kPostgres);
  {
    HistoryDb db = HistoryDb::Open(history.location());
    for (int day = 1; day <= 16; ++day) {
      db.AddRun(NightlyRun(day, day <= 8 ? 1.0 : 1.5, day == 9 ? Verdict::kRegression : Verdict::kPass),
                {"c" + std::to_string(day), "main"});
    }
    // What perfgate trend stores.
    std::vector<SeriesChangePoints> found;
    for (const TrendSeries& t : AnalyzeTrends(db.Series({"main", {"value"}, "nightly"}), {})) {
      SeriesChangePoints s{t.series.suite, t.series.scenario, t.series.metric, t.series.statistic, "main", {}};
      for (const auto& c : t.change_points)
        s.change_points.push_back({t.series.points[c.index - 1].commit, t.series.points[c.index].commit,
                                   t.series.points[c.index].timestamp, c.change_pct(), c.p_value, IsRegression(t, c)});
      found.push_back(s);
    }
    db.ReplaceChangePoints(found);
    db.RecordAlerts(GroupChangePoints(AnalyzeTrends(db.Series({"main", {"value"}, "nightly"}), {}), "main"));
  }
  ASSERT_EQ(history.Count("change_points"), 2);  // camera and fio at c9
  ASSERT_EQ(history.Count("alert_groups"), 1);   // one group: both moved at c8..c9

  const std::map<std::string, std::vector<std::string>> variables = {{"suite", {"nightly"}},
                                                                     {"branch", {"main"}},
                                                                     {"scenario", {"camera", "fio"}},
                                                                     {"metric", {"workload.wall_time"}},
                                                                     {"statistic", {"value"}}};
  const std::map<std::string, std::string> expected_first = {{"variable suite", "nightly"},
                                                             {"variable branch", "main"},
                                                             {"variable scenario", "camera"},
                                                             {"variable metric", "workload.wall_time"},
                                                             {"variable statistic", "value"}};
  PGconn* conn = PQconnectdb(history.location().c_str());
  ASSERT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  for (const DashboardQuery& q : Queries(HistoryDashboard())) {
    const std::string sql = Expand(q.sql, variables);
    EXPECT_EQ(sql.find('$'), std::string::npos) << q.where << ": unexpanded: " << sql;
    PGresult* r = PQexec(conn, sql.c_str());
    ASSERT_EQ(PQresultStatus(r), PGRES_TUPLES_OK) << q.where << ": " << PQresultErrorMessage(r) << sql;
    EXPECT_GT(PQntuples(r), 0) << q.where << " returned no rows: " << sql;
    for (const std::string& column : q.columns) EXPECT_GE(PQfnumber(r, column.c_str()), 0) << q.where << ": " << column;
    if (auto e = expected_first.find(q.where); e != expected_first.end() && PQntuples(r) > 0) {
      EXPECT_EQ(PQgetvalue(r, 0, 0), e->second) << q.where;
    }
    if (q.where == "panel Median per run") {
      EXPECT_EQ(PQntuples(r), 32);  // 16 runs x 2 scenarios
      EXPECT_NEAR(std::stod(PQgetvalue(r, PQntuples(r) - 1, PQfnumber(r, "value"))), 1.5015, 1e-9);
    }
    if (q.where == "panel Change points") {
      EXPECT_EQ(PQntuples(r), 2);
      EXPECT_STREQ(PQgetvalue(r, 0, PQfnumber(r, "first commit after")), "c9");
      EXPECT_STREQ(PQgetvalue(r, 0, PQfnumber(r, "direction")), "worse");
    }
    if (q.where == "panel Alerts") {
      EXPECT_EQ(PQntuples(r), 1);
      EXPECT_STREQ(PQgetvalue(r, 0, PQfnumber(r, "state")), "new");
      EXPECT_STREQ(PQgetvalue(r, 0, PQfnumber(r, "for the worse")), "2 of 2");
      EXPECT_STREQ(PQgetvalue(r, 0, PQfnumber(r, "by")), "perfgate");
    }
    if (q.where == "panel Change points") {
      EXPECT_NE(std::string(PQgetvalue(r, 0, PQfnumber(r, "alert"))).find(" new"), std::string::npos);
    }
    if (q.where == "annotation Change points") {
      EXPECT_EQ(PQntuples(r), 2);
      EXPECT_NE(std::string(PQgetvalue(r, 0, PQfnumber(r, "text"))).find("+50.0 % at c9 (p "), std::string::npos)
          << PQgetvalue(r, 0, PQfnumber(r, "text"));
    }
    PQclear(r);
  }
  PQfinish(conn);
}

}  // namespace
}  // namespace perfgate
