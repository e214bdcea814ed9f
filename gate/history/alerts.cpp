#include "history/alerts.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "base/error.h"
#include "base/escape.h"
#include "base/quantity.h"
#include "history/trend.h"

namespace perfgate {
namespace {

constexpr AlertState kStates[] = {AlertState::kNew, AlertState::kAcknowledged, AlertState::kExpected,
                                  AlertState::kInvalid, AlertState::kFixed};

std::string Short(const std::string& commit) { return commit.substr(0, 12); }

std::string Range(const AlertGroup& g) { return Short(g.commit_before) + ".." + Short(g.commit_after); }

bool SameSeries(const AlertMetric& a, const AlertMetric& b) {
  return a.scenario == b.scenario && a.metric == b.metric && a.statistic == b.statistic;
}

size_t WorseCount(const AlertGroup& g) {
  return static_cast<size_t>(
      std::count_if(g.metrics.begin(), g.metrics.end(), [](const AlertMetric& m) { return m.for_the_worse; }));
}

// A value echoed in a one-line message: control characters as spaces.
std::string Shown(const std::string& text) {
  std::string out = Abbreviate(SanitizeText(text), 200);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < ' ' || c == '\x7f') c = ' ';
  }
  return out;
}

}  // namespace

std::string ToString(AlertState state) {
  switch (state) {
    case AlertState::kNew:
      return "new";
    case AlertState::kAcknowledged:
      return "acknowledged";
    case AlertState::kExpected:
      return "expected";
    case AlertState::kInvalid:
      return "invalid";
    case AlertState::kFixed:
      return "fixed";
  }
  return "new";
}

std::optional<AlertState> ParseAlertState(const std::string& text) {
  for (AlertState s : kStates) {
    if (ToString(s) == text) return s;
  }
  return std::nullopt;
}

std::string AlertStateNames() {
  std::string out;
  for (AlertState s : kStates) out += (out.empty() ? "" : ", ") + ToString(s);
  return out;
}

std::vector<AlertGroup> GroupChangePoints(const std::vector<TrendSeries>& trends, const std::string& branch) {
  std::map<std::tuple<std::string, std::string, std::string>, AlertGroup> groups;
  for (const TrendSeries& t : trends) {
    const HistorySeries& s = t.series;
    for (const stats::ChangePoint& c : t.change_points) {
      if (c.index == 0 || c.index >= s.points.size()) continue;
      const HistoryPoint& before = s.points[c.before()];
      const HistoryPoint& after = s.points[c.index];
      AlertGroup& g = groups[{s.suite, before.commit, after.commit}];
      if (g.metrics.empty()) {
        g.suite = s.suite;
        g.branch = branch;
        g.commit_before = before.commit;
        g.commit_after = after.commit;
        g.timestamp_before = before.timestamp;
        g.timestamp_after = after.timestamp;
      }
      g.metrics.push_back({s.scenario, s.metric, s.statistic, s.unit, c.mean_before, c.mean_after, c.change_pct(),
                           c.p_value, IsRegression(t, c)});
    }
  }
  std::vector<AlertGroup> out;
  for (auto& [key, g] : groups) {
    std::sort(g.metrics.begin(), g.metrics.end(), [](const AlertMetric& a, const AlertMetric& b) {
      return std::tie(a.scenario, a.metric, a.statistic) < std::tie(b.scenario, b.metric, b.statistic);
    });
    out.push_back(std::move(g));
  }
  // Oldest first, so that ids grow with time.
  std::stable_sort(out.begin(), out.end(),
                   [](const AlertGroup& a, const AlertGroup& b) { return a.timestamp_after < b.timestamp_after; });
  return out;
}

bool AcceptedInRange(const AlertGroup& group, const std::vector<AcceptedCheck>& accepted) {
  if (WorseCount(group) == 0) return false;
  // An accepted check covers its metric whatever statistic the trend drew:
  // it accepted the change of the metric.
  return std::all_of(group.metrics.begin(), group.metrics.end(), [&](const AlertMetric& m) {
    return !m.for_the_worse || std::any_of(accepted.begin(), accepted.end(), [&](const AcceptedCheck& a) {
      return a.scenario == m.scenario && a.metric == m.metric;
    });
  });
}

bool MovedBack(const AlertGroup& group, const std::vector<AlertGroup>& all, const AlertGroup** later) {
  if (WorseCount(group) == 0) return false;
  const AlertGroup* last = nullptr;
  for (const AlertMetric& m : group.metrics) {
    if (!m.for_the_worse) continue;
    const AlertGroup* back = nullptr;
    for (const AlertGroup& g : all) {
      if (g.suite != group.suite || g.branch != group.branch || g.timestamp_after <= group.timestamp_after) continue;
      for (const AlertMetric& n : g.metrics) {
        if (SameSeries(m, n) && (n.change_pct > 0) != (m.change_pct > 0) && n.change_pct != 0 &&
            (back == nullptr || g.timestamp_after < back->timestamp_after))
          back = &g;
      }
    }
    if (back == nullptr) return false;
    if (last == nullptr || back->timestamp_after > last->timestamp_after) last = back;
  }
  if (later) *later = last;
  return true;
}

std::vector<AlertTransition> AutomaticAlertChanges(
    const std::vector<AlertGroup>& groups,
    const std::function<std::vector<AcceptedCheck>(const AlertGroup&)>& accepted) {
  std::vector<AlertTransition> out;
  for (const AlertGroup& g : groups) {
    const AlertGroup* later = nullptr;
    if ((g.state == AlertState::kNew || g.state == AlertState::kAcknowledged) && MovedBack(g, groups, &later)) {
      AlertUpdate u;
      u.state = AlertState::kFixed;
      u.by = "perfgate";
      u.note = "every series that moved for the worse moved back in alert " + std::to_string(later->id) + " (" +
               Range(*later) + ")";
      u.only_from = {AlertState::kNew, AlertState::kAcknowledged};
      out.push_back({g.id, std::move(u)});
      continue;
    }
    if (g.state != AlertState::kNew || WorseCount(g) == 0) continue;
    const std::vector<AcceptedCheck> in_range = accepted(g);
    if (!AcceptedInRange(g, in_range)) continue;
    std::vector<std::string> commits;
    for (const AcceptedCheck& a : in_range) {
      if (std::find(commits.begin(), commits.end(), Short(a.commit)) == commits.end())
        commits.push_back(Short(a.commit));
    }
    std::string list;
    for (const std::string& c : commits) list += (list.empty() ? "" : ", ") + c;
    AlertUpdate u;
    u.state = AlertState::kExpected;
    u.by = "perfgate";
    u.note = "accepted in the range by the run of " + list;
    u.only_from = {AlertState::kNew};
    out.push_back({g.id, std::move(u)});
  }
  return out;
}

bool OnlyExpectedRegressions(const std::vector<RegressedCheck>& regressed, const std::string& run_timestamp,
                             const std::string& run_branch, const std::vector<AlertGroup>& groups) {
  if (regressed.empty()) return false;
  for (const RegressedCheck& r : regressed) {
    // The newest group up to the run that moved this metric for the worse.
    const AlertGroup* newest = nullptr;
    for (const AlertGroup& g : groups) {
      if (g.timestamp_after > run_timestamp || (!g.branch.empty() && g.branch != run_branch)) continue;
      const bool moved = std::any_of(g.metrics.begin(), g.metrics.end(), [&](const AlertMetric& m) {
        return m.for_the_worse && m.scenario == r.scenario && m.metric == r.metric;
      });
      if (moved && (newest == nullptr || g.timestamp_after > newest->timestamp_after)) newest = &g;
    }
    if (newest == nullptr || newest->state != AlertState::kExpected) return false;
  }
  return true;
}

void CheckBugLink(const std::string& url, const std::string& option) {
  const bool web = url.rfind("https://", 0) == 0 || url.rfind("http://", 0) == 0;
  const bool clean = std::none_of(url.begin(), url.end(), [](char c) {
    return static_cast<unsigned char>(c) <= ' ' || c == '\x7f' || c == '"' || c == '<' || c == '>';
  });
  const size_t host = url.find("://") + 3;
  if (!web || !clean || url.size() <= host || url.size() > 2000)
    throw InputError(option + ": \"" + Shown(url) + "\" is not a bug link (an http:// or https:// URL without spaces)");
}

void CheckAlertName(const std::string& text, const std::string& option) {
  const bool control =
      std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < ' ' || c == '\x7f'; });
  if (text.empty() || control || text.size() > 200)
    throw InputError(option + ": \"" + Shown(text) + "\" is not a name (1 to 200 characters, no control characters)");
}

nlohmann::json AlertToJson(const AlertGroup& g) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const AlertMetric& m : g.metrics) {
    metrics.push_back({{"scenario", m.scenario},
                       {"metric", m.metric},
                       {"statistic", m.statistic},
                       {"unit", m.unit},
                       {"before", m.before},
                       {"after", m.after},
                       {"change_pct", m.change_pct},
                       {"p_value", m.p_value},
                       {"for_the_worse", m.for_the_worse}});
  }
  nlohmann::json j = {{"id", g.id},
                      {"suite", g.suite},
                      {"branch", g.branch},
                      {"commit_before", g.commit_before},
                      {"commit_after", g.commit_after},
                      {"timestamp_before", g.timestamp_before},
                      {"timestamp_after", g.timestamp_after},
                      {"state", ToString(g.state)},
                      {"owner", g.owner},
                      {"bug", g.bug},
                      {"created_at", g.created_at},
                      {"updated_at", g.updated_at},
                      {"metrics", metrics}};
  if (!g.changes.empty()) {
    nlohmann::json changes = nlohmann::json::array();
    for (const AlertChange& c : g.changes) {
      changes.push_back({{"at", c.at},
                         {"by", c.by},
                         {"state", ToString(c.state)},
                         {"owner", c.owner},
                         {"bug", c.bug},
                         {"note", c.note}});
    }
    j["changes"] = changes;
  }
  return j;
}

std::string AlertLine(const AlertGroup& g) {
  const size_t worse = WorseCount(g);
  std::string line = "#" + std::to_string(g.id) + "\t" + ToString(g.state) + "\t" + g.suite + "\t" + Range(g) + "\t" +
                     Plural(g.metrics.size(), "series", "series") + " (" + std::to_string(worse) + " for the worse)";
  line += "\towner " + (g.owner.empty() ? std::string("-") : g.owner);
  if (!g.bug.empty()) line += "\t" + g.bug;
  return SanitizeText(line);
}

std::string AlertMarkdown(const AlertGroup& g, const std::string& history_name) {
  auto md = [](const std::string& text) { return MarkdownEscape(text); };
  const size_t worse = WorseCount(g);
  std::string out = "## perfgate alert #" + std::to_string(g.id) + ": " + md(g.suite) + ", " +
                    Plural(g.metrics.size(), "series", "series") + " moved between `" + Short(g.commit_before) +
                    "` and `" + Short(g.commit_after) + "`\n\n";
  out += "- **State:** " + ToString(g.state) + "\n";
  out += "- **Owner:** " + (g.owner.empty() ? std::string("nobody yet") : md(g.owner)) + "\n";
  if (!g.bug.empty()) out += "- **Bug:** <" + md(g.bug) + ">\n";
  out += "- **Commits:** `" + md(g.commit_before) + "` (last run before, " + md(g.timestamp_before) + ") .. `" +
         md(g.commit_after) + "` (first run after, " + md(g.timestamp_after) + ")";
  if (!g.branch.empty()) out += " on " + md(g.branch);
  out += "\n- **For the worse:** " + std::to_string(worse) + " of " + std::to_string(g.metrics.size()) + "\n";
  out += "- **History:** " + md(history_name) + "\n\n";
  out +=
      "| Scenario | Metric | Statistic | Before | After | Change | p |\n| --- | --- | --- | ---: | ---: | ---: | ---: "
      "|\n";
  for (const AlertMetric& m : g.metrics) {
    out += "| " + md(m.scenario) + " | " + md(m.metric) + " | " + md(m.statistic) + " | " +
           md(FormatQuantity(m.before, m.unit)) + " | " + md(FormatQuantity(m.after, m.unit)) + " | " +
           (m.for_the_worse ? "**" + md(FormatPercent(m.change_pct)) + "**" : md(FormatPercent(m.change_pct))) + " | " +
           md(FormatPValue(m.p_value)) + " |\n";
  }
  if (!g.changes.empty()) {
    out += "\n<details><summary>State changes</summary>\n\n";
    for (const AlertChange& c : g.changes) {
      out += "- " + md(c.at) + " " + md(c.by) + ": " + ToString(c.state);
      if (!c.owner.empty()) out += ", owner " + md(c.owner);
      if (!c.bug.empty()) out += ", bug " + md(c.bug);
      if (!c.note.empty()) out += " (" + md(c.note) + ")";
      out += "\n";
    }
    out += "\n</details>\n";
  }
  out += "\nSet its state with `perfgate alerts set " + std::to_string(g.id) + " --state STATE` (" + AlertStateNames() +
         ").\n";
  return out;
}

}  // namespace perfgate
