// history add, trend, export: what the nightly job does with a run.
#include <cstdio>

#include "base/atomic_file.h"
#include "base/error.h"
#include "cli/commands.h"
#include "history/alerts.h"
#include "history/history_db.h"
#include "history/openmetrics.h"
#include "history/pushgateway.h"
#include "history/trend.h"
#include "metrics/results_json.h"
#include "pipeline/pipeline.h"

namespace perfgate {

int HistoryAddCommand(const HistoryAddOptions& o) {
  if (o.commits.size() != o.results_files.size()) {
    throw InputError("--commit: " + std::to_string(o.results_files.size()) + " results files need as many --commit, " +
                     "one each in order; got " + std::to_string(o.commits.size()));
  }
  if (!o.references.empty() && o.references.size() != o.results_files.size()) {
    throw InputError("--reference: " + std::to_string(o.results_files.size()) +
                     " results files need none or as many --reference, one each in order; got " +
                     std::to_string(o.references.size()));
  }
  // Every file is read before anything is added: a bad one adds none.
  std::vector<RunResults> runs;
  for (const std::string& file : o.results_files) runs.push_back(ReadResultsFile(file));
  HistoryDb db = HistoryDb::Open(o.db_file);
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunResults& results = runs[i];
    const std::string& commit = o.commits[i];
    const std::string reference = o.references.empty() ? "" : o.references[i];
    if (!db.AddRun(results, {commit, o.branch, reference})) {
      std::printf("perfgate: %s: this run of %s at %s is already in the history; nothing added\n", db.Name().c_str(),
                  results.suite.c_str(), commit.c_str());
      continue;
    }
    std::printf("perfgate: added %s (%zu scenarios) at %s on %s%s to %s (%lld runs)\n", results.suite.c_str(),
                results.scenarios.size(), commit.c_str(), o.branch.c_str(),
                reference.empty() ? "" : (", paired with " + reference).c_str(), db.Name().c_str(),
                static_cast<long long>(db.RunCount()));
  }
  return 0;
}

int HistoryLastCommitCommand(const HistoryLastCommitOptions& o) {
  const HistoryDb db = HistoryDb::OpenForReading(o.db_file);
  const std::optional<StoredScenarioRun> last = db.LastRun(o.suite, o.branch);
  if (!last) {
    // Not an error: the first night has no previous run.
    std::string which = o.suite.empty() ? "" : " of suite " + o.suite;
    if (!o.branch.empty()) which += " on branch " + o.branch;
    std::fprintf(stderr, "perfgate: %s has no run%s\n", db.Name().c_str(), which.c_str());
    return 0;
  }
  std::printf("%s\n", last->environment.git_commit.c_str());
  return 0;
}

int HistoryCopyCommand(const HistoryCopyOptions& o) {
  // The source is only read: a history fetched from another job's artifacts
  // may be read-only, and is not migrated behind its owner's back.
  const HistoryDb source = HistoryDb::OpenForReading(o.source);
  HistoryDb destination = HistoryDb::Open(o.destination);
  if (source.Name() == destination.Name()) throw InputError(source.Name() + ": copying a history onto itself");
  int64_t copied = 0, present = 0;
  source.ForEachStoredRun([&](const StoredRun& run) { ++(destination.AddStoredRun(run) ? copied : present); });
  std::printf("perfgate: copied %lld runs from %s to %s (%lld already there; %lld runs now)\n",
              static_cast<long long>(copied), source.Name().c_str(), destination.Name().c_str(),
              static_cast<long long>(present), static_cast<long long>(destination.RunCount()));
  return 0;
}

int TrendCommand(const TrendOptions& o) {
  HistoryDb db = HistoryDb::OpenExisting(o.db_file);
  SeriesFilter filter{o.branch, o.statistics.empty() ? DefaultTrendStatistics() : o.statistics, o.suite};
  std::vector<TrendSeries> trends =
      AnalyzeHistory(db, filter, {.max_p_value = o.max_p_value, .min_segment = o.min_segment});
  // Kept in the history too, where a dashboard on the database marks them.
  std::vector<SeriesChangePoints> found;
  for (const TrendSeries& t : trends) {
    const HistorySeries& s = t.series;
    SeriesChangePoints series{s.suite, s.scenario, s.metric, s.statistic, o.branch, {}};
    for (const auto& c : t.change_points) {
      series.change_points.push_back({c.index > 0 ? s.points[c.before()].commit : "", s.points[c.index].commit,
                                      s.points[c.index].timestamp, c.change_pct(), c.p_value, IsRegression(t, c)});
    }
    found.push_back(std::move(series));
  }
  // And as alerts: one group per commit range, with its state.
  try {
    db.ReplaceChangePoints(found);
    const HistoryDb::RecordedAlerts recorded = db.RecordAlerts(GroupChangePoints(trends, o.branch));
    for (int64_t id : recorded.added) {
      const AlertGroup alert = db.Alert(id);
      std::printf("perfgate: new alert %s\n", AlertLine(alert).c_str());
    }
    for (const AlertTransition& t : recorded.changed) {
      std::printf("perfgate: alert #%lld is now %s: %s\n", static_cast<long long>(t.id),
                  ToString(*t.update.state).c_str(), t.update.note.c_str());
    }
  } catch (const Error& e) {
    // A history fetched read-only from another job's artifacts still gets its dashboard.
    std::fprintf(stderr, "perfgate: warning: the change points and alerts were not stored in the history: %s\n",
                 e.what());
  }
  // The groups of the branch this trend looked at (another branch's trend has its own).
  std::vector<AlertGroup> alerts = db.Alerts(o.suite);
  std::erase_if(alerts, [&](const AlertGroup& g) { return g.branch != o.branch; });
  const MetricVocabulary vocabulary = GateMetricVocabulary();
  WriteTrendDashboard(trends,
                      {db.Name(), o.branch, std::move(alerts),
                       [&vocabulary](std::string_view metric) { return vocabulary.RoleOf(metric); }},
                      o.out_dir);
  size_t changes = 0;
  nlohmann::json listed = nlohmann::json::array();
  for (const TrendSeries& t : trends) {
    for (const auto& c : t.change_points) {
      ++changes;
      const HistorySeries& s = t.series;
      // The runs on either side of the change: the range a bisection searches.
      listed.push_back({{"suite", s.suite},
                        {"scenario", s.scenario},
                        {"metric", s.metric},
                        {"statistic", s.statistic},
                        {"unit", s.unit},
                        {"change_pct", c.change_pct()},
                        {"p_value", c.p_value},
                        {"for_the_worse", IsRegression(t, c)},
                        {"commit_before", c.index > 0 ? s.points[c.before()].commit : ""},
                        {"commit_after", s.points[c.index].commit},
                        {"timestamp_after", s.points[c.index].timestamp}});
      std::printf("perfgate: change point: %s/%s %s.%s %+.1f%% at %s (p %.2g)%s\n", s.suite.c_str(), s.scenario.c_str(),
                  s.metric.c_str(), s.statistic.c_str(), c.change_pct(), s.points[c.index].commit.c_str(), c.p_value,
                  IsRegression(t, c) ? ", for the worse" : "");
    }
  }
  if (!o.change_points_file.empty())
    WriteFileAtomic(o.change_points_file, listed.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  std::printf("perfgate: %zu series, %zu change points; dashboard in %s/index.html\n", trends.size(), changes,
              o.out_dir.c_str());
  return 0;
}

int ExportCommand(const ExportOptions& o) {
  RunResults results = ReadResultsFile(o.results_file);
  if (o.push_url.empty()) {
    std::fputs(RenderMetrics(results, ExpositionFormat::kOpenMetrics).c_str(), stdout);
    return 0;
  }
  // One Pushgateway group per scenario, so that a later push of some
  // scenarios (one shard, a rerun) replaces only theirs.
  for (size_t i = 0; i < results.scenarios.size(); ++i) {
    std::string path = PushPath(results.suite, results.scenarios[i].name, results.environment.hostname);
    PushMetrics(o.push_url, path, RenderScenarioMetrics(results, i, ExpositionFormat::kPrometheus));
    std::printf("perfgate: pushed %s/%s to %s%s\n", results.suite.c_str(), results.scenarios[i].name.c_str(),
                o.push_url.c_str(), path.c_str());
  }
  if (results.scenarios.empty()) std::printf("perfgate: %s has no scenarios; nothing pushed\n", results.suite.c_str());
  return 0;
}

}  // namespace perfgate
