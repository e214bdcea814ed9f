// The trend dashboard: each stored series reduced to one median per run,
// change points found by E-divisive means (stats/edivisive.h), drawn as
// inline SVG charts and listed in a table. The page follows the report's
// rules (report/html_reporter.h): no script, no inline style, presentation
// attributes only in the SVG, every stored string escaped.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "history/history_db.h"
#include "history/host_speed.h"
#include "metrics/metric_declaration.h"
#include "stats/edivisive.h"

namespace perfgate {

struct TrendSeries {
  HistorySeries series;
  std::vector<double> medians;  // one per point, as measured
  // The nights whose host was off, and what the change points saw of them.
  HostAdjustment host;
  // Indices into the points; a change point's before() is the last night
  // before it that the search saw.
  std::vector<stats::ChangePoint> change_points;
};

// The statistics a dashboard shows unless told otherwise: each kind's
// default, per operation for counters, and the p99 of histograms.
std::vector<std::string> DefaultTrendStatistics();

// Medians and change points of every series, each series' nights adjusted
// for the host's speed that `speeds` holds (history/host_speed.h); host
// series (host.*) get none.
std::vector<TrendSeries> AnalyzeTrends(std::vector<HistorySeries> series, const stats::ChangePointOptions& options,
                                       const HostSpeeds& speeds = {});

// The series of `filter` read from `db` and analysed with the host canaries
// the same runs recorded (whatever statistics the filter names).
std::vector<TrendSeries> AnalyzeHistory(const HistoryDb& db, const SeriesFilter& filter,
                                        const stats::ChangePointOptions& options);

// Whether a change of the series' metric is for the worse.
bool IsRegression(const TrendSeries& trend, const stats::ChangePoint& change);

// One series over its runs: a dot per run at the median with a whisker from
// the smallest to the largest repetition, each segment's mean, and a dashed
// line before every change point. "" for a series without points.
std::string TrendChartSvg(const TrendSeries& trend);

struct TrendPage {
  std::string database;  // shown, not opened
  std::string branch;    // empty: every branch
  // The history's alert groups (history/alerts.h): their states are listed,
  // and each change point names its group and state.
  std::vector<AlertGroup> alerts;
  // Whose each metric is (the gate's vocabulary, pipeline.h): within a
  // scenario the charts go series that moved first, then the workload's
  // own, then the kernel's, then the host's. Unset: host.* is the host's,
  // the rest the workload's.
  std::function<MetricRole(std::string_view)> role_of = {};
};

// index.html of the dashboard. Pure.
std::string RenderTrendDashboard(const std::vector<TrendSeries>& trends, const TrendPage& page);
// trend.css: what the dashboard adds to the report's stylesheet.
std::string TrendStylesheet();

// Writes index.html, report.css and trend.css into out_dir, each atomically,
// the stylesheets first. InfraError naming the path when it cannot.
void WriteTrendDashboard(const std::vector<TrendSeries>& trends, const TrendPage& page, const std::string& out_dir);

}  // namespace perfgate
