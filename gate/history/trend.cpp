#include "history/trend.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <system_error>
#include <thread>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/escape.h"
#include "base/quantity.h"
#include "base/version.h"
#include "report/html_reporter.h"
#include "report/svg_charts.h"
#include "stats/descriptive.h"

namespace perfgate {
namespace {

constexpr const char* kPointColor = "#2563eb";
constexpr const char* kWhiskerColor = "#93b4f5";
constexpr const char* kRegressionColor = "#d13438";
constexpr const char* kImprovementColor = "#107c41";

std::string Esc(const std::string& text) { return XmlEscape(text); }

std::string Num(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

std::string TrendCommit(const std::string& commit) { return commit.substr(0, 12); }

std::string SeriesTitle(const HistorySeries& s) { return s.metric + " \u00b7 " + s.statistic; }

std::string ChartId(size_t index) { return "series-" + std::to_string(index); }

std::string ChangeColor(const TrendSeries& trend, const stats::ChangePoint& change) {
  return IsRegression(trend, change) ? kRegressionColor : kImprovementColor;
}

// "abc123..def456": the last run before the change and the first after it.
std::string CommitRange(const TrendSeries& trend, const stats::ChangePoint& change) {
  const auto& points = trend.series.points;
  return TrendCommit(points[change.before()].commit) + ".." + TrendCommit(points[change.index].commit);
}

std::string SvgText(double x, double y, const char* anchor, const std::string& text) {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + anchor + "\" fill=\"" + kMutedColor +
         "\" font-size=\"10\" font-family=\"sans-serif\">" + Esc(text) + "</text>";
}

std::string SvgLine(double x1, double y1, double x2, double y2, const char* stroke, double width, bool dashed,
                    const std::string& tooltip = "") {
  std::string svg = "<line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" + Num(x2) + "\" y2=\"" + Num(y2) +
                    "\" stroke=\"" + stroke + "\" stroke-width=\"" + Num(width) + "\"";
  if (dashed) svg += " stroke-dasharray=\"5 3\"";
  if (tooltip.empty()) return svg + "/>";
  return svg + "><title>" + Esc(tooltip) + "</title></line>";
}

std::string ChangeTooltip(const TrendSeries& trend, const stats::ChangePoint& change) {
  const std::string& unit = trend.series.unit;
  return "change point " + FormatPercent(change.change_pct()) + ": " + FormatQuantity(change.mean_before, unit) +
         " \u2192 " + FormatQuantity(change.mean_after, unit) + " between " + CommitRange(trend, change) + " (p " +
         FormatPValue(change.p_value) + ")";
}

void AppendCell(std::string& html, const std::string& content, const char* cls = nullptr) {
  html += cls ? "<td class=\"" + std::string(cls) + "\">" : std::string("<td>");
  html += content + "</td>";
}

// The group of a change point: same suite and commits, holding its series.
const AlertGroup* AlertOf(const std::vector<AlertGroup>& alerts, const TrendSeries& trend,
                          const stats::ChangePoint& change) {
  const HistorySeries& s = trend.series;
  for (const AlertGroup& g : alerts) {
    if (g.suite != s.suite || g.commit_before != s.points[change.before()].commit ||
        g.commit_after != s.points[change.index].commit)
      continue;
    for (const AlertMetric& m : g.metrics) {
      if (m.scenario == s.scenario && m.metric == s.metric && m.statistic == s.statistic) return &g;
    }
  }
  return nullptr;
}

std::string AlertPill(const AlertGroup& g) {
  return "<span class=\"pill alert-" + ToString(g.state) + "\">#" + std::to_string(g.id) + " " + ToString(g.state) +
         "</span>";
}

// A bug link as a link only when it is a web address; else as text.
std::string BugCell(const std::string& bug) {
  if (bug.empty()) return "";
  if (bug.rfind("https://", 0) == 0 || bug.rfind("http://", 0) == 0)
    return "<a href=\"" + XmlAttributeEscape(bug) + "\" rel=\"noopener noreferrer\">" + Esc(bug) + "</a>";
  return Esc(bug);
}

std::string AlertTable(const std::vector<AlertGroup>& alerts) {
  std::string html = "<section class=\"card\" id=\"alerts\">\n<h2>Alerts</h2>\n";
  if (alerts.empty()) return html + "<p class=\"all-clear\">No alert: no change point was recorded.</p>\n</section>\n";
  std::vector<const AlertGroup*> rows;
  for (const AlertGroup& g : alerts) rows.push_back(&g);
  // Newest first, as the change points.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const AlertGroup* a, const AlertGroup* b) { return a->timestamp_after > b->timestamp_after; });
  html +=
      "<table class=\"checks\">\n<thead><tr><th>Alert</th><th>Suite</th><th>Commits</th><th>Run</th>"
      "<th>Series</th><th>Owner</th><th>Bug</th></tr></thead>\n<tbody>\n";
  for (const AlertGroup* g : rows) {
    size_t worse = 0;
    std::string series;
    for (const AlertMetric& m : g->metrics) {
      worse += m.for_the_worse;
      series += (series.empty() ? "" : ", ") + m.scenario + " " + m.metric + " \u00b7 " + m.statistic + " " +
                FormatPercent(m.change_pct);
    }
    html += "<tr>";
    AppendCell(html, AlertPill(*g));
    AppendCell(html, Esc(g->suite));
    AppendCell(html, "<code>" + Esc(TrendCommit(g->commit_before) + ".." + TrendCommit(g->commit_after)) + "</code>");
    AppendCell(html, Esc(g->timestamp_after));
    AppendCell(html, Esc(std::to_string(worse) + " of " + std::to_string(g->metrics.size()) +
                         " for the worse: " + Abbreviate(series, 600)));
    AppendCell(html, Esc(g->owner.empty() ? "\u2014" : g->owner));
    AppendCell(html, BugCell(g->bug));
    html += "</tr>\n";
  }
  return html + "</tbody>\n</table>\n</section>\n";
}

std::string ChangePointTable(const std::vector<TrendSeries>& trends, const std::vector<AlertGroup>& alerts) {
  struct Row {
    const TrendSeries* trend;
    size_t chart;
    const stats::ChangePoint* change;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < trends.size(); ++i) {
    for (const auto& c : trends[i].change_points) rows.push_back({&trends[i], i, &c});
  }
  std::string html = "<section class=\"card\" id=\"change-points\">\n<h2>Change points</h2>\n";
  if (rows.empty()) return html + "<p class=\"all-clear\">No change point in any series.</p>\n</section>\n";
  // Newest first: what a nightly reader wants to see.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.trend->series.points[a.change->index].timestamp > b.trend->series.points[b.change->index].timestamp;
  });
  html +=
      "<table class=\"checks\">\n<thead><tr><th>Suite / scenario</th><th>Metric</th><th>Commits</th><th>Run</th>"
      "<th class=\"num\">Before</th><th class=\"num\">After</th><th class=\"num\">Change</th>"
      "<th class=\"num\">p</th><th>Alert</th></tr></thead>\n<tbody>\n";
  for (const Row& r : rows) {
    const HistorySeries& s = r.trend->series;
    bool worse = IsRegression(*r.trend, *r.change);
    html += std::string("<tr class=\"") + (worse ? "row-regressed" : "row-improved") + "\">";
    AppendCell(html, Esc(s.suite + " / " + s.scenario));
    AppendCell(html, "<a href=\"#" + ChartId(r.chart) + "\">" + Esc(SeriesTitle(s)) + "</a>", "name");
    AppendCell(html, "<code>" + Esc(CommitRange(*r.trend, *r.change)) + "</code>");
    AppendCell(html, Esc(s.points[r.change->index].timestamp));
    AppendCell(html, Esc(FormatQuantity(r.change->mean_before, s.unit)), "num");
    AppendCell(html, Esc(FormatQuantity(r.change->mean_after, s.unit)), "num");
    AppendCell(html,
               std::string("<span class=\"pill ") + (worse ? "regressed" : "improved") + "\">" +
                   Esc(FormatPercent(r.change->change_pct())) + "</span>",
               "num");
    AppendCell(html, Esc(FormatPValue(r.change->p_value)), "num");
    const AlertGroup* alert = AlertOf(alerts, *r.trend, *r.change);
    AppendCell(html, alert ? AlertPill(*alert) : std::string());
    html += "</tr>\n";
  }
  return html + "</tbody>\n</table>\n</section>\n";
}

// The order the charts are shown in: by scenario, in the order the
// scenarios first come; within one, the series that moved (a change point)
// first, then the workload's own metrics, the kernel's, the host's; else as
// they came. The charts keep their ids (ChartId of their index in `trends`).
std::vector<size_t> ChartOrder(const std::vector<TrendSeries>& trends, const TrendPage& page) {
  std::map<std::pair<std::string, std::string>, size_t> scenario_rank;
  for (const TrendSeries& t : trends)
    scenario_rank.try_emplace({t.series.suite, t.series.scenario}, scenario_rank.size());
  const auto rank = [&](const TrendSeries& t) {
    if (!t.change_points.empty()) return 0;
    const MetricRole role = page.role_of             ? page.role_of(t.series.metric)
                            : IsHostSeries(t.series) ? MetricRole::kHost
                                                     : MetricRole::kOutcome;
    return role == MetricRole::kOutcome ? 1 : role == MetricRole::kKernel ? 2 : 3;
  };
  std::vector<size_t> order(trends.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const size_t sa = scenario_rank.at({trends[a].series.suite, trends[a].series.scenario});
    const size_t sb = scenario_rank.at({trends[b].series.suite, trends[b].series.scenario});
    return sa != sb ? sa < sb : rank(trends[a]) < rank(trends[b]);
  });
  return order;
}

std::string ScenarioSections(const std::vector<TrendSeries>& trends, const TrendPage& page) {
  std::string html;
  std::string current;
  for (const size_t i : ChartOrder(trends, page)) {
    const HistorySeries& s = trends[i].series;
    std::string heading = s.suite + " / " + s.scenario;
    if (heading != current) {
      if (!current.empty()) html += "</div>\n</section>\n";
      current = heading;
      html += "<section class=\"card scenario\">\n<h2>" + Esc(heading) + "</h2>\n<div class=\"figures\">\n";
    }
    std::string caption = SeriesTitle(s) + (s.unit.empty() ? "" : " (" + s.unit + ")");
    std::string sub = std::to_string(s.points.size()) + " runs \u00b7 " + ToString(s.better) + " is better";
    if (!trends[i].change_points.empty())
      sub += " \u00b7 " + std::to_string(trends[i].change_points.size()) + " change points";
    if (const size_t off = trends[i].host.off_nights(); off > 0) {
      char elasticity[32];
      std::snprintf(elasticity, sizeof elasticity, "%.2f", trends[i].host.elasticity);
      sub += " \u00b7 " + std::to_string(off) + " nights on an off host (hollow), deflated with elasticity " +
             elasticity + (trends[i].host.fitted ? " fitted" : " nominal");
    }
    html += "<figure class=\"trend\" id=\"" + ChartId(i) + "\">\n<figcaption>" + Esc(caption) + "</figcaption>\n" +
            TrendChartSvg(trends[i]) + "\n<p class=\"sub\">" + Esc(sub) + "</p>\n</figure>\n";
  }
  if (!current.empty()) html += "</div>\n</section>\n";
  return html;
}

void CreateDirectories(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InfraError("cannot create directory " + dir + ": " + ec.message());
}

// "host 1.80x slower (host.canary.cpu): compared as 1.02 s": what a night whose host was off became.
std::string HostNightText(const TrendSeries& trend, size_t i) {
  const HostAdjustment& h = trend.host;
  char factor[64];
  const double f = h.factor[i];
  std::snprintf(factor, sizeof factor, "host %.2fx %s (%s)", f >= 1 ? f : 1 / f, f >= 1 ? "slower" : "faster",
                h.part[i].c_str());
  if (h.night[i] == HostNight::kLeftOut) return std::string(factor) + ": left out of the change points";
  return std::string(factor) + ": compared as " + FormatQuantity(h.compared[i], trend.series.unit);
}

// The change points of the nights not left out (NaN), their indices those
// of all the nights.
std::vector<stats::ChangePoint> ChangePointsOfKept(const std::vector<double>& compared,
                                                   const stats::ChangePointOptions& options) {
  std::vector<double> kept_values;
  std::vector<size_t> kept;
  for (size_t i = 0; i < compared.size(); ++i) {
    if (std::isnan(compared[i])) continue;
    kept_values.push_back(compared[i]);
    kept.push_back(i);
  }
  std::vector<stats::ChangePoint> found = stats::FindChangePoints(kept_values, options);
  for (stats::ChangePoint& c : found) {
    const size_t before = kept[c.index - 1];
    c.index = kept[c.index];
    c.left_out = c.index - 1 - before;
  }
  return found;
}

}  // namespace

std::vector<std::string> DefaultTrendStatistics() { return {"value", "rate", "per_op", "p50", "p99"}; }

// The series are independent: they are shared out among one thread per CPU
// (a suite of a pool's history is thousands of series of a year's runs).
std::vector<TrendSeries> AnalyzeTrends(std::vector<HistorySeries> series, const stats::ChangePointOptions& options,
                                       const HostSpeeds& speeds) {
  std::vector<TrendSeries> out(series.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < series.size();) {
      TrendSeries& t = out[i];
      for (const HistoryPoint& p : series[i].points) t.medians.push_back(stats::Median(p.values));
      t.host = AdjustForHost(series[i], t.medians, speeds);
      if (!IsHostSeries(series[i])) t.change_points = ChangePointsOfKept(t.host.compared, options);
      t.series = std::move(series[i]);
    }
  };
  const size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), series.size() / 64 + 1);
  std::vector<std::thread> helpers;
  try {
    for (size_t k = 1; k < threads; ++k) helpers.emplace_back(work);
  } catch (const std::system_error&) {
    // No more threads to be had: those started and this one share the rest.
  }
  work();
  for (std::thread& t : helpers) t.join();
  return out;
}

std::vector<TrendSeries> AnalyzeHistory(const HistoryDb& db, const SeriesFilter& filter,
                                        const stats::ChangePointOptions& options) {
  SeriesFilter canaries = filter;
  canaries.statistics = {"value"};
  return AnalyzeTrends(db.Series(filter), options, HostSpeeds::FromSeries(db.Series(canaries, HostSpeedMetrics())));
}

bool IsRegression(const TrendSeries& trend, const stats::ChangePoint& change) {
  switch (trend.series.better) {
    case Better::kLower:
      return change.mean_after > change.mean_before;
    case Better::kHigher:
      return change.mean_after < change.mean_before;
    case Better::kNone:
      return true;  // any move of a metric without a good direction deserves a look
  }
  return true;
}

std::string TrendChartSvg(const TrendSeries& trend) {
  const HistorySeries& s = trend.series;
  if (s.points.empty()) return "";
  constexpr int kWidth = 600, kHeight = 190;
  constexpr double kLeft = 64, kRight = kWidth - 12, kTop = 10, kBottom = kHeight - 28;

  double lo = trend.medians.front(), hi = lo;
  for (const HistoryPoint& p : s.points) {
    for (double v : p.values) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (hi <= lo) {
    double pad = std::fabs(hi) > 0 ? std::fabs(hi) * 0.05 : 1.0;
    lo -= pad;
    hi += pad;
  }
  const size_t n = s.points.size();
  auto x = [&](double i) {
    return n == 1 ? (kLeft + kRight) / 2 : kLeft + i / static_cast<double>(n - 1) * (kRight - kLeft);
  };
  auto y = [&](double v) { return kBottom - (v - lo) / (hi - lo) * (kBottom - kTop); };

  std::string label = s.scenario + ": " + SeriesTitle(s) + " over " + std::to_string(n) + " runs";
  std::string w = std::to_string(kWidth), h = std::to_string(kHeight);
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + w + "\" height=\"" + h +
                    "\" viewBox=\"0 0 " + w + " " + h + "\" role=\"img\" aria-label=\"" + Esc(label) + "\"><title>" +
                    Esc(label) + "</title>";
  for (double v : {lo, (lo + hi) / 2, hi}) {
    svg += SvgLine(kLeft, y(v), kRight, y(v), kGridColor, 1, false);
    svg += SvgText(kLeft - 6, y(v) + 3.5, "end", FormatQuantity(v, s.unit));
  }
  svg += SvgText(kLeft, kHeight - 8, "start", TrendCommit(s.points.front().commit));
  if (n > 1) svg += SvgText(kRight, kHeight - 8, "end", TrendCommit(s.points.back().commit));

  // Segment means, then change points over them, then the runs on top.
  size_t begin = 0;
  for (size_t k = 0; k <= trend.change_points.size(); ++k) {
    size_t end = k < trend.change_points.size() ? trend.change_points[k].index : n;
    double mean = k < trend.change_points.size() ? trend.change_points[k].mean_before
                  : trend.change_points.empty()  ? stats::Mean(trend.medians)
                                                 : trend.change_points.back().mean_after;
    svg += SvgLine(x(static_cast<double>(begin)), y(mean), x(static_cast<double>(end - 1)), y(mean), kInkColor, 1.5,
                   false, "mean " + FormatQuantity(mean, s.unit));
    begin = end;
  }
  for (const stats::ChangePoint& c : trend.change_points) {
    double cx = x(static_cast<double>(c.index) - 0.5);
    svg += SvgLine(cx, kTop, cx, kBottom, ChangeColor(trend, c).c_str(), 2, true, ChangeTooltip(trend, c));
  }
  for (size_t i = 0; i < n; ++i) {
    const HistoryPoint& p = s.points[i];
    auto [min_it, max_it] = std::minmax_element(p.values.begin(), p.values.end());
    double px = x(static_cast<double>(i));
    if (*max_it > *min_it) svg += SvgLine(px, y(*min_it), px, y(*max_it), kWhiskerColor, 1.5, false);
    std::string tooltip = "commit " + TrendCommit(p.commit) + " (" + p.branch + "), " + p.timestamp + ": median " +
                          FormatQuantity(trend.medians[i], s.unit) + " of " + std::to_string(p.values.size()) +
                          " repetitions";
    if (p.paired) {
      const PairedChange& c = *p.paired;
      tooltip += "; paired with " + TrendCommit(c.reference) + ": " + FormatPercent(c.change_pct);
      if (c.low_pct && c.high_pct)
        tooltip += " (" + FormatPercent(*c.low_pct) + " \u2026 " + FormatPercent(*c.high_pct) + ")";
      tooltip += ", " + c.verdict;
    }
    // A night whose host was off is drawn hollow, as measured, and says what the change points saw.
    const bool off = i < trend.host.night.size() && trend.host.night[i] != HostNight::kNormal;
    if (off) tooltip += "; " + HostNightText(trend, i);
    svg += "<circle cx=\"" + Num(px) + "\" cy=\"" + Num(y(trend.medians[i])) + "\" r=\"3\" fill=\"" +
           (off ? "#ffffff" : kPointColor) + "\" stroke=\"" + kPointColor + "\"><title>" + Esc(tooltip) +
           "</title></circle>";
  }
  return svg + "</svg>";
}

std::string RenderTrendDashboard(const std::vector<TrendSeries>& trends, const TrendPage& page) {
  std::map<int64_t, bool> runs;
  size_t changes = 0, regressions = 0;
  for (const TrendSeries& t : trends) {
    for (const HistoryPoint& p : t.series.points) runs[p.run_id] = true;
    for (const auto& c : t.change_points) {
      ++changes;
      regressions += IsRegression(t, c);
    }
  }
  std::string summary = std::to_string(runs.size()) + " runs \u00b7 " + std::to_string(trends.size()) +
                        " series \u00b7 " + std::to_string(changes) + " change points (" + std::to_string(regressions) +
                        " for the worse)";
  std::string scope = "history " + page.database + (page.branch.empty() ? ", every branch" : ", branch " + page.branch);
  std::string html =
      "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
      "<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
      "<title>perfgate trends</title>\n"
      "<link rel=\"stylesheet\" href=\"report.css\"/>\n<link rel=\"stylesheet\" href=\"trend.css\"/>\n"
      "</head>\n<body>\n";
  html += std::string("<header class=\"banner ") + (regressions > 0 ? "status-warn" : "status-pass") +
          "\">\n<p class=\"status\">perfgate trends</p>\n<h1>Performance over commits</h1>\n<p class=\"summary\">" +
          Esc(summary) + "</p>\n<p class=\"meta\">" + Esc(scope) + "</p>\n</header>\n<main>\n";
  if (trends.empty())
    html += "<section class=\"card\"><p class=\"muted\">The history holds no runs yet.</p></section>\n";
  html += AlertTable(page.alerts) + ChangePointTable(trends, page.alerts) + ScenarioSections(trends, page);
  html += "</main>\n<footer>Generated by perfgate " + Esc(PerfgateVersion()) +
          ". Change points: E-divisive means, each split kept when Welch's t-test gives p below the threshold."
          "</footer>\n</body>\n</html>\n";
  return html;
}

std::string TrendStylesheet() {
  return R"css(/* perfgate trend dashboard: additions to report.css */
figure.trend { flex: 1 1 520px; max-width: 640px; }
figure.trend svg.chart { max-width: 100%; height: auto; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
tr.row-improved td:first-child { box-shadow: inset 3px 0 0 var(--green); }
.pill.alert-new { background: var(--red-bg); color: var(--red); }
.pill.alert-acknowledged { background: var(--amber-bg); color: var(--amber); }
.pill.alert-expected { background: #ede9fe; color: #5b21b6; }
.pill.alert-invalid { background: var(--blue-bg); color: var(--blue); }
.pill.alert-fixed { background: var(--green-bg); color: var(--green); }
)css";
}

void WriteTrendDashboard(const std::vector<TrendSeries>& trends, const TrendPage& page, const std::string& out_dir) {
  CreateDirectories(out_dir);
  const std::filesystem::path out(out_dir);
  WriteFileAtomic((out / "report.css").string(), HtmlReporter::Stylesheet());
  WriteFileAtomic((out / "trend.css").string(), TrendStylesheet());
  WriteFileAtomic((out / "index.html").string(), RenderTrendDashboard(trends, page));
}

}  // namespace perfgate
