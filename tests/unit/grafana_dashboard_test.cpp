// The Grafana dashboard (dashboards/grafana/perfgate.json), checked without
// Grafana: its structure as Grafana's dashboard model has it (panels,
// targets, data source, template variables), and that every metric name a
// panel queries is one the exporter writes. The queries themselves are run
// through Prometheus by tests/integration/grafana_dashboard_test.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "harness/files.h"
#include "harness/paths.h"
#include "history/openmetrics.h"

namespace perfgate {
namespace {

const std::string kDashboard = std::string(PERFGATE_SOURCE_DIR) + "/dashboards/grafana/perfgate.json";
const std::string kProvider = std::string(PERFGATE_SOURCE_DIR) + "/dashboards/grafana/provisioning/perfgate.yaml.in";

nlohmann::json Dashboard() { return nlohmann::json::parse(testing::ReadFile(kDashboard)); }

// The panels that query (rows hold none).
std::vector<nlohmann::json> QueryPanels(const nlohmann::json& dashboard) {
  std::vector<nlohmann::json> out;
  for (const auto& panel : dashboard["panels"]) {
    if (panel["type"] != "row") out.push_back(panel);
  }
  return out;
}

// A run with a metric of each kind the dashboard charts, named as the
// runner and the probes name them, a check per verdict and a probe's cost.
RunResults RepresentativeRun() {
  RunResults r;
  r.suite = "nightly";
  r.environment.hostname = "runner";
  ScenarioResult s;
  s.name = "smoke";
  for (int i = 0; i < 3; ++i) {
    Repetition rep;
    rep.index = i;
    for (const char* name : {"workload.wall_time", "workload.cpu_time"})
      rep.metrics[name] = ScalarMetric(name, 1.0 + i, "s");
    rep.metrics["workload.max_rss"] = ScalarMetric("workload.max_rss", 1 << 20, "bytes");
    LogLinearHistogram h;
    h.Record(1000 + i);
    rep.metrics["sched.runq_latency"] = HistogramMetric("sched.runq_latency", "ns", h, 1.0);
    for (const char* name : {"sched.switches", "syscalls.count", "mm.page_alloc", "mm.page_faults"})
      rep.metrics[name] = CounterMetric(name, "count", 100, 2.0);
    s.repetitions.push_back(rep);
  }
  for (Verdict v : {Verdict::kPass, Verdict::kRegression}) {
    CheckResult c;
    c.spec.name = c.spec.metric = "workload.wall_time";
    c.verdict = v;
    s.checks.push_back(c);
  }
  ProbeReport probe;
  probe.name = "runqlat";
  probe.run_count = 10;
  probe.run_time_ns = 1000;
  probe.workload_cpu_ns = 1000000;
  s.probes.push_back(probe);
  r.scenarios.push_back(s);
  return r;
}

// Family names in an exposition, from its TYPE lines.
std::set<std::string> FamilyNames(const std::string& exposition) {
  std::set<std::string> out;
  std::regex type_line(R"(# TYPE (\S+) )");
  for (std::sregex_iterator it(exposition.begin(), exposition.end(), type_line), end; it != end; ++it)
    out.insert((*it)[1]);
  return out;
}

TEST(GrafanaDashboard, IsADashboardModelWithUniquePanelsOnTheGrid) {
  const nlohmann::json d = Dashboard();
  EXPECT_EQ(d["uid"], "perfgate");
  EXPECT_FALSE(d["title"].get<std::string>().empty());
  EXPECT_GE(d["schemaVersion"].get<int>(), 36);  // panels with datasource refs by uid
  ASSERT_TRUE(d["panels"].is_array());
  std::set<int> ids;
  std::vector<std::array<int, 4>> boxes;
  for (const auto& p : d["panels"]) {
    EXPECT_TRUE(ids.insert(p["id"].get<int>()).second) << "duplicate id " << p["id"];
    EXPECT_TRUE(p["type"] == "row" || p["type"] == "timeseries") << p["type"];
    const auto& g = p["gridPos"];
    const std::array<int, 4> box = {g["x"].get<int>(), g["y"].get<int>(), g["w"].get<int>(), g["h"].get<int>()};
    EXPECT_GE(box[0], 0);
    EXPECT_LE(box[0] + box[2], 24) << p["title"];  // Grafana's grid is 24 wide
    EXPECT_GT(box[3], 0);
    for (const auto& other : boxes) {
      const bool apart = box[0] + box[2] <= other[0] || other[0] + other[2] <= box[0] || box[1] + box[3] <= other[1] ||
                         other[1] + other[3] <= box[1];
      EXPECT_TRUE(apart) << p["title"] << " overlaps another panel";
    }
    boxes.push_back(box);
  }
  EXPECT_GE(QueryPanels(d).size(), 10u);
}

TEST(GrafanaDashboard, EveryQueryUsesTheDataSourceVariableAndSelectsBySuiteScenarioAndHost) {
  const nlohmann::json d = Dashboard();
  const nlohmann::json source = {{"type", "prometheus"}, {"uid", "${datasource}"}};
  for (const auto& p : QueryPanels(d)) {
    const std::string title = p["title"];
    EXPECT_EQ(p["datasource"], source) << title;
    EXPECT_FALSE(p["description"].get<std::string>().empty()) << title;
    ASSERT_FALSE(p["targets"].empty()) << title;
    std::set<std::string> refs;
    for (const auto& t : p["targets"]) {
      EXPECT_TRUE(refs.insert(t["refId"].get<std::string>()).second) << title;
      EXPECT_EQ(t["datasource"], source) << title;
      const std::string expr = t["expr"];
      // Every selector of the expression is narrowed by the three variables.
      std::regex selector(R"(perfgate_[a-z0-9_]+(\{[^}]*\})?)");
      for (std::sregex_iterator it(expr.begin(), expr.end(), selector), end; it != end; ++it) {
        EXPECT_EQ((*it)[1], R"({suite="$suite", scenario=~"$scenario", host=~"$host"})") << title << ": " << expr;
      }
      EXPECT_FALSE(t["legendFormat"].get<std::string>().empty()) << title;
    }
  }
}

TEST(GrafanaDashboard, TemplateVariablesAreTheDataSourceSuiteScenarioAndHost) {
  const nlohmann::json list = Dashboard()["templating"]["list"];
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[0]["name"], "datasource");
  EXPECT_EQ(list[0]["type"], "datasource");
  EXPECT_EQ(list[0]["query"], "prometheus");
  const std::vector<std::pair<std::string, std::string>> queries = {
      {"suite", "label_values(perfgate_exit_code, suite)"},
      {"scenario", R"(label_values(perfgate_exit_code{suite="$suite"}, scenario))"},
      {"host", R"(label_values(perfgate_exit_code{suite="$suite", scenario=~"$scenario"}, host))"}};
  for (size_t i = 0; i < queries.size(); ++i) {
    const auto& v = list[i + 1];
    EXPECT_EQ(v["name"], queries[i].first);
    EXPECT_EQ(v["type"], "query");
    EXPECT_EQ(v["datasource"]["uid"], "${datasource}");
    EXPECT_EQ(v["definition"], queries[i].second);
    EXPECT_EQ(v["query"]["query"], queries[i].second);
  }
  // One suite at a time (its scenarios' units differ); any scenarios and hosts.
  EXPECT_FALSE(list[1]["multi"].get<bool>());
  EXPECT_TRUE(list[2]["includeAll"].get<bool>() && list[3]["includeAll"].get<bool>());
}

TEST(GrafanaDashboard, EveryMetricAPanelQueriesIsOneTheExporterWrites) {
  const RunResults run = RepresentativeRun();
  std::set<std::string> written = FamilyNames(RenderScenarioMetrics(run, 0, ExpositionFormat::kPrometheus));
  const nlohmann::json d = Dashboard();
  std::set<std::string> queried;
  std::regex name(R"(perfgate_[a-z0-9_]+)");
  for (const auto& p : QueryPanels(d)) {
    for (const auto& t : p["targets"]) {
      const std::string expr = t["expr"];
      for (std::sregex_iterator it(expr.begin(), expr.end(), name), end; it != end; ++it) {
        queried.insert(it->str());
        EXPECT_EQ(written.count(it->str()), 1u)
            << p["title"] << " queries " << it->str() << ", which perfgate export does not write";
      }
    }
  }
  for (const auto& v : d["templating"]["list"]) {
    if (v["type"] != "query") continue;
    const std::string query = v["definition"];
    for (std::sregex_iterator it(query.begin(), query.end(), name), end; it != end; ++it)
      EXPECT_EQ(written.count(it->str()), 1u) << "variable " << v["name"] << " queries " << it->str();
  }
  // What a nightly run is judged by is charted: wall time, a kernel metric, the probes' cost, the verdicts.
  for (const char* family : {"perfgate_workload_wall_time_value_seconds", "perfgate_sched_runq_latency_p99_seconds",
                             "perfgate_probe_cpu_share", "perfgate_check_failed", "perfgate_exit_code"})
    EXPECT_EQ(queried.count(family), 1u) << family;
}

// The provider's template; the path it names is written at install time and
// checked by the package test (tests/package/install_test.sh).
TEST(GrafanaDashboard, TheProviderTemplateNamesTheInstalledDashboardDirectory) {
  const std::string text = testing::ReadFile(kProvider);
  EXPECT_NE(text.find("apiVersion: 1\n"), std::string::npos);
  EXPECT_NE(text.find("    type: file\n"), std::string::npos);
  EXPECT_NE(text.find("      path: @PERFGATE_GRAFANA_DASHBOARDS@\n"), std::string::npos);
}

}  // namespace
}  // namespace perfgate
