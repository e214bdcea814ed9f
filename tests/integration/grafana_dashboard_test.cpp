// The Grafana dashboard against the real thing minus Grafana: real runs of a
// suite under the probes the dashboard charts, pushed by perfgate export from
// two hosts, scraped by Debian's Prometheus; then every template variable's
// and every panel's query, with the variables substituted as Grafana would,
// through Prometheus' HTTP API. A metric renamed in a probe, the runner or
// the exporter leaves a query empty, and this test fails.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/paths.h"
#include "harness/prometheus.h"

namespace perfgate::testing {
namespace {

namespace fs = std::filesystem;

const std::string kDashboard = std::string(PERFGATE_SOURCE_DIR) + "/dashboards/grafana/perfgate.json";

// Two scenarios of the shipped smoke workload under the probes behind the
// dashboard's kernel panels; a budget no run meets, so a check fails.
std::string DashboardSuite() {
  std::string scenarios;
  for (const auto& [name, iterations] : {std::pair{"loop", "100"}, std::pair{"loop-2", "200"}}) {
    scenarios += std::string(scenarios.empty() ? "" : ",") + R"({"name": ")" + name +
                 R"(", "workload": {"kind": "command", "argv": [")" + PERFGATE_SMOKE_BIN + R"(", "--iterations", ")" +
                 iterations + R"("]}, "warmup": 0, "repetitions": 3, "timeout_s": 60,
      "probes": [{"name": "runqlat", "scope": "workload"}, {"name": "syscalls", "scope": "workload"},
                 {"name": "kmem", "scope": "workload"}, {"name": "sched", "scope": "workload"},
                 {"name": "pagefault", "scope": "workload"}],
      "checks": [{"metric": "workload.wall_time", "max_regression_pct": 10},
                 {"metric": "syscalls.count", "statistic": "rate", "max": 1e12},
                 {"metric": "syscalls.count", "statistic": "count", "max": 1, "name": "impossible-budget"}]})";
  }
  return R"({"name": "dash", "scenarios": [)" + scenarios + "]}";
}

// "$suite", "$scenario", "$host" replaced by their values, as Grafana does
// before it sends a query.
std::string Substitute(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [name, value] : values) {
    for (size_t at; (at = text.find("$" + name)) != std::string::npos;) text.replace(at, name.size() + 1, value);
  }
  return text;
}

// The labels a legend format names: "{{probe}} · {{scenario}}" -> probe, scenario.
std::set<std::string> LegendLabels(const std::string& legend) {
  std::set<std::string> out;
  std::regex label(R"(\{\{\s*([a-zA-Z_]+)\s*\}\})");
  for (std::sregex_iterator it(legend.begin(), legend.end(), label), end; it != end; ++it) out.insert((*it)[1]);
  return out;
}

class GrafanaDashboardTest : public PrometheusTest {
 protected:
  void SetUp() override {
    PERFGATE_REQUIRE_ROOT();
    PrometheusTest::SetUp();
  }

  // Runs the suite and pushes its results as if measured on `host`.
  void RunAndPush(const std::string& out, const std::string& host) {
    const std::string suite = dir_ / "dash.json";
    WriteFile(suite, DashboardSuite());
    CliRun run = RunCli({"run", suite, "--baseline-dir", dir_ / "none", "--out", dir_ / out, "--quiet"});
    // The impossible budget: a count, which a busy host does not excuse.
    ASSERT_EQ(run.exit_code, 1) << run.output;
    std::string results = dir_ / (out + "/results.json");
    if (!host.empty()) {
      nlohmann::json j = nlohmann::json::parse(ReadFile(results));
      j["environment"]["hostname"] = host;
      WriteFile(results, j.dump());
    } else {
      this_host_ = nlohmann::json::parse(ReadFile(results))["environment"]["hostname"];
    }
    CliRun push = RunCli({"export", "--openmetrics", results, "--push", PushUrl()});
    ASSERT_EQ(push.exit_code, 0) << push.output;
  }

  // label_values(SELECTOR, LABEL) through /api/v1/label/LABEL/values.
  std::set<std::string> LabelValues(const std::string& definition) {
    std::smatch m;
    std::regex form(R"(label_values\((.*), *([a-z_]+)\))");
    EXPECT_TRUE(std::regex_match(definition, m, form)) << definition;
    if (m.empty()) return {};
    std::string reply =
        HttpGet(prometheus_port_, "/api/v1/label/" + m[2].str() + "/values?match%5B%5D=" + PercentEncode(m[1].str()));
    size_t body = reply.find("\r\n\r\n");
    nlohmann::json j = nlohmann::json::parse(body == std::string::npos ? "" : reply.substr(body + 4), nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << reply;
    std::set<std::string> out;
    if (!j.is_discarded() && j.contains("data")) {
      for (const auto& v : j["data"]) out.insert(v.get<std::string>());
    }
    return out;
  }

  std::string this_host_;
};

TEST_F(GrafanaDashboardTest, EveryVariableAndPanelQueryReturnsSeriesWithItsLabels) {
  // A run that did not fail as it must ends the test here, before the
  // queries wait for series that were never pushed.
  ASSERT_NO_FATAL_FAILURE(RunAndPush("first", ""));
  ASSERT_NO_FATAL_FAILURE(RunAndPush("other-host", "second-runner"));
  ASSERT_NO_FATAL_FAILURE(RunAndPush("second", ""));  // a later run of this host replaces its groups
  const nlohmann::json dashboard = nlohmann::json::parse(ReadFile(kDashboard));
  // Wait for the scrape that holds every push.
  Query(R"(perfgate_exit_code{suite="dash", host="second-runner"})", 30);

  std::map<std::string, nlohmann::json> variables;
  for (const auto& v : dashboard["templating"]["list"]) variables[v["name"]] = v;
  const std::set<std::string> hosts = {this_host_, "second-runner"};
  EXPECT_EQ(LabelValues(variables["suite"]["definition"]).count("dash"), 1u);
  EXPECT_EQ(LabelValues(Substitute(variables["scenario"]["definition"], {{"suite", "dash"}})),
            (std::set<std::string>{"loop", "loop-2"}));
  EXPECT_EQ(LabelValues(Substitute(variables["host"]["definition"],
                                   {{"suite", "dash"}, {"scenario", variables["scenario"]["allValue"]}})),
            hosts);

  // Every scenario and host ("All"), then one of each.
  const std::vector<std::map<std::string, std::string>> selections = {
      {{"suite", "dash"}, {"scenario", variables["scenario"]["allValue"]}, {"host", variables["host"]["allValue"]}},
      {{"suite", "dash"}, {"scenario", "loop-2"}, {"host", "second-runner"}}};
  const std::vector<std::pair<std::set<std::string>, std::set<std::string>>> expected = {
      {{"loop", "loop-2"}, hosts}, {{"loop-2"}, {"second-runner"}}};
  int queries = 0;
  for (size_t i = 0; i < selections.size(); ++i) {
    for (const auto& panel : dashboard["panels"]) {
      if (panel["type"] == "row") continue;
      for (const auto& target : panel["targets"]) {
        const std::string expr = Substitute(target["expr"], selections[i]);
        const std::string what = panel["title"].get<std::string>() + ": " + expr;
        nlohmann::json series = Query(expr, 10);
        ++queries;
        EXPECT_FALSE(series.empty()) << what;
        std::set<std::string> scenarios, series_hosts;
        for (const auto& s : series) {
          const nlohmann::json& labels = s["metric"];
          for (const std::string& label : LegendLabels(target["legendFormat"])) {
            EXPECT_TRUE(labels.contains(label) && !labels[label].get<std::string>().empty())
                << what << ": no " << label << " in " << labels.dump();
          }
          EXPECT_EQ(labels.value("suite", "dash"), "dash") << what;
          if (labels.contains("scenario")) scenarios.insert(labels["scenario"].get<std::string>());
          if (labels.contains("host")) series_hosts.insert(labels["host"].get<std::string>());
        }
        // A query that keeps the labels returns exactly the selected scenarios and hosts.
        if (!scenarios.empty()) {
          EXPECT_EQ(scenarios, expected[i].first) << what;
        }
        if (!series_hosts.empty()) {
          EXPECT_EQ(series_hosts, expected[i].second) << what;
        }
      }
    }
  }
  EXPECT_GE(queries, 2 * 12);
}

}  // namespace
}  // namespace perfgate::testing
