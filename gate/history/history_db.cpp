#include "history/history_db.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "base/error.h"
#include "history/history_store.h"
#include "metrics/results_json.h"

namespace perfgate {
namespace {

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

StoredRun ToStoredRun(const RunResults& results, const RunIdentity& identity) {
  const Environment& env = results.environment;
  StoredRun r;
  r.suite = results.suite;
  r.commit = identity.commit;
  r.branch = identity.branch;
  r.run_timestamp = env.timestamp.empty() ? NowIso8601() : env.timestamp;
  r.added_at = NowIso8601();
  r.hostname = env.hostname;
  r.kernel = env.kernel;
  r.cpu_model = env.cpu_model;
  r.cpu_count = env.cpu_count;
  r.perfgate_version = env.perfgate_version;
  r.verdict = ToString(results.verdict);
  r.kept_whole = true;
  r.reference_commit = identity.reference;
  for (const ScenarioResult& scenario : results.scenarios) {
    // What a baseline file would hold: the verdicts and what they were
    // compared with belong to this run, not to a later one's baseline.
    ScenarioResult kept = scenario;
    kept.checks.clear();
    kept.baseline_repetitions.clear();
    kept.retaken.clear();
    kept.trace.reset();
    const std::string text = ToJson(kept).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    r.wholes.push_back({scenario.name, Deflate(text), static_cast<int64_t>(text.size())});
    for (const Repetition& rep : scenario.repetitions) {
      if (!rep.measured()) continue;
      for (const auto& [name, metric] : rep.metrics) {
        for (const std::string& statistic : StatisticsFor(metric.kind)) {
          std::optional<double> v = StatisticValue(metric, statistic);
          if (!v || !std::isfinite(*v)) continue;
          r.values.push_back(
              {{scenario.name, name, statistic, StatisticUnit(metric, statistic), ToString(metric.better)},
               static_cast<int64_t>(rep.index),
               *v});
        }
      }
    }
    for (const CheckResult& c : scenario.checks) {
      std::optional<double> change;
      if (!c.baseline_values.empty() && std::isfinite(c.change_pct)) change = c.change_pct;
      r.checks.push_back({scenario.name, c.spec.name, c.spec.metric, c.statistic, ToString(c.verdict), change});
      if (change && c.change_ci_low_pct && c.change_ci_high_pct && std::isfinite(*c.change_ci_low_pct) &&
          std::isfinite(*c.change_ci_high_pct)) {
        r.checks.back().change_low_pct = c.change_ci_low_pct;
        r.checks.back().change_high_pct = c.change_ci_high_pct;
      }
    }
  }
  return r;
}

std::unique_ptr<HistoryStore> OpenStore(const std::string& location, OpenMode mode) {
  if (location.empty()) {
    throw InputError(std::string("no history database: give --db or set ") + kHistoryEnvironmentVariable);
  }
  return IsPostgresLocation(location) ? OpenPostgresHistory(location, mode) : OpenSqliteHistory(location, mode);
}

}  // namespace

bool IsPostgresLocation(const std::string& location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

std::string DisplayLocation(const std::string& location) {
  if (!IsPostgresLocation(location)) return location;
  std::string out = location;
  // postgresql://user:secret@host/db: the userinfo ends at the last '@'
  // before the path, and its password after its first ':'.
  const size_t authority = out.find("://") + 3;
  const size_t path = out.find_first_of("/?", authority);
  const size_t at = out.rfind('@', path == std::string::npos ? std::string::npos : path);
  if (at != std::string::npos && at >= authority) {
    const size_t colon = out.find(':', authority);
    if (colon != std::string::npos && colon < at) out.erase(colon, at - colon);
  }
  // ...?password=secret&sslmode=require: the parameter goes, the others stay.
  const size_t query = out.find('?');
  if (query == std::string::npos) return out;
  std::string kept;
  for (size_t start = query + 1; start <= out.size();) {
    size_t end = out.find('&', start);
    if (end == std::string::npos) end = out.size();
    const std::string item = out.substr(start, end - start);
    if (!item.empty() && item.rfind("password=", 0) != 0) kept += (kept.empty() ? "" : "&") + item;
    start = end + 1;
  }
  out.erase(query);
  if (!kept.empty()) out += "?" + kept;
  return out;
}

HistoryDb::HistoryDb(std::unique_ptr<HistoryStore> store) : store_(std::move(store)) {}
HistoryDb::HistoryDb(HistoryDb&&) noexcept = default;
HistoryDb& HistoryDb::operator=(HistoryDb&&) noexcept = default;
HistoryDb::~HistoryDb() = default;

HistoryDb HistoryDb::Open(const std::string& location) { return HistoryDb(OpenStore(location, OpenMode::kCreate)); }
HistoryDb HistoryDb::OpenExisting(const std::string& location) {
  return HistoryDb(OpenStore(location, OpenMode::kExisting));
}
HistoryDb HistoryDb::OpenForReading(const std::string& location) {
  return HistoryDb(OpenStore(location, OpenMode::kReadOnly));
}

const std::string& HistoryDb::Name() const { return store_->Name(); }
int HistoryDb::SchemaVersion() const { return store_->SchemaVersion(); }
int64_t HistoryDb::RunCount() const { return store_->RunCount(); }
std::vector<std::string> HistoryDb::Branches() const { return store_->Branches(); }

bool HistoryDb::AddRun(const RunResults& results, const RunIdentity& identity) {
  if (identity.commit.empty()) throw InputError("--commit: must not be empty");
  if (identity.branch.empty()) throw InputError("--branch: must not be empty");
  if (results.partial) throw InputError("the run is partial (it was interrupted); not added to the history");
  return store_->Insert(ToStoredRun(results, identity));
}

void HistoryDb::ReplaceChangePoints(const std::vector<SeriesChangePoints>& series) {
  store_->ReplaceChangePoints(series, NowIso8601());
}
std::vector<SeriesChangePoints> HistoryDb::ChangePoints() const { return store_->ChangePoints(); }

bool HistoryDb::AddStoredRun(const StoredRun& run) { return store_->Insert(run); }

void HistoryDb::ForEachStoredRun(const std::function<void(const StoredRun&)>& visit) const {
  store_->ForEachStoredRun(visit);
}

// The runs, the series and then their values, each value put straight into
// its series (suite, scenario, metric, statistic), which is then ordered by
// run time and repetition: a year of a suite is millions of values.
std::vector<HistorySeries> HistoryDb::Series(const SeriesFilter& filter) const { return Series(filter, {}); }

std::vector<HistorySeries> HistoryDb::Series(const SeriesFilter& filter,
                                             const std::vector<std::string>& metrics) const {
  const std::vector<SeriesRun> runs = store_->SeriesRuns(filter);
  std::vector<StoredSeries> series = store_->SeriesOf(filter);
  if (!metrics.empty()) {
    std::erase_if(series, [&](const StoredSeries& s) {
      return std::find(metrics.begin(), metrics.end(), s.key[1]) == metrics.end();
    });
  }
  if (runs.empty() || series.empty()) return {};

  // Runs come ordered by suite and time, so a run's place is its order and
  // its suite is numbered by the place of the suite's first run.
  std::unordered_map<int64_t, uint32_t> run_place, series_place;
  std::vector<uint32_t> suite_of(runs.size());
  std::vector<int64_t> run_ids, series_ids;
  for (uint32_t i = 0; i < runs.size(); ++i) {
    suite_of[i] = i > 0 && runs[i].suite == runs[i - 1].suite ? suite_of[i - 1] : i;
    run_place.emplace(runs[i].id, i);
    run_ids.push_back(runs[i].id);
  }
  // One rank per (scenario, metric, statistic): a series whose unit changed
  // between perfgate versions still reads as one, in time order.
  std::vector<uint32_t> rank_of(series.size());
  for (uint32_t i = 0; i < series.size(); ++i) {
    const SeriesKey& k = series[i].key;
    const bool same = i > 0 && std::equal(k.begin(), k.begin() + 3, series[i - 1].key.begin());
    rank_of[i] = i == 0 ? 0 : rank_of[i - 1] + (same ? 0 : 1);
    series_place.emplace(series[i].id, i);
    series_ids.push_back(series[i].id);
  }

  struct Value {
    uint32_t run, series;
    int64_t repetition;
    double value;
  };
  struct Group {
    uint32_t suite, rank;
    std::vector<Value> values;
  };
  std::vector<Group> groups;
  std::unordered_map<uint64_t, uint32_t> group_of;  // suite << 32 | rank
  int64_t last_run_id = 0;
  uint32_t run = 0;
  bool have_run = false;
  store_->ForEachValue(run_ids, series_ids, [&](const SeriesValue& v) {
    if (!have_run || v.run_id != last_run_id) {  // the values of a run mostly come together
      auto found = run_place.find(v.run_id);
      if (found == run_place.end()) return;  // added after the runs were read
      have_run = true;
      last_run_id = v.run_id;
      run = found->second;
    }
    auto s = series_place.find(v.series_id);
    if (s == series_place.end()) return;
    const uint64_t key = uint64_t{suite_of[run]} << 32 | rank_of[s->second];
    auto [g, added] = group_of.emplace(key, static_cast<uint32_t>(groups.size()));
    if (added) groups.push_back({suite_of[run], rank_of[s->second], {}});
    groups[g->second].values.push_back({run, s->second, v.repetition, v.value});
  });

  std::sort(groups.begin(), groups.end(),
            [](const Group& a, const Group& b) { return std::tie(a.suite, a.rank) < std::tie(b.suite, b.rank); });
  std::vector<HistorySeries> out;
  out.reserve(groups.size());
  for (Group& g : groups) {
    auto by_time = [](const Value& a, const Value& b) {
      return std::tie(a.run, a.repetition) < std::tie(b.run, b.repetition);
    };
    if (!std::is_sorted(g.values.begin(), g.values.end(), by_time))
      std::sort(g.values.begin(), g.values.end(), by_time);
    const SeriesKey& k = series[g.values.front().series].key;  // the oldest value's unit and direction
    HistorySeries& hs = out.emplace_back();
    hs = {runs[g.suite].suite, k[0], k[1], k[2], k[3], ParseBetter(k[4]).value_or(Better::kLower), {}};
    for (size_t i = 0; i < g.values.size(); ++i) {
      const Value& v = g.values[i];
      if (i == 0 || g.values[i - 1].run != v.run) {
        const SeriesRun& r = runs[v.run];
        hs.points.push_back({r.id, r.commit, r.branch, r.timestamp, {}});
      }
      hs.points.back().values.push_back(v.value);
    }
  }
  // The paired nights' changes, each on the series of its check.
  std::map<std::tuple<int64_t, std::string, std::string, std::string>, PairedChange> paired;
  for (StoredPairedCheck& c : store_->PairedChecks(filter))
    paired.try_emplace({c.run_id, c.scenario, c.metric, c.statistic}, std::move(c.change));
  if (!paired.empty()) {
    for (HistorySeries& hs : out) {
      for (HistoryPoint& p : hs.points) {
        auto found = paired.find({p.run_id, hs.scenario, hs.metric, hs.statistic});
        if (found != paired.end()) p.paired = found->second;
      }
    }
  }
  return out;
}

std::vector<StoredScenarioRun> HistoryDb::ScenarioRunHeaders(const std::string& suite, const std::string& scenario,
                                                             const std::string& branch, size_t limit) const {
  return RunHeadersByScenario(suite, {scenario}, branch, limit).at(scenario);
}

std::optional<StoredScenarioRun> HistoryDb::LastRun(const std::string& suite, const std::string& branch) const {
  std::vector<StoredScenarioRun> runs = store_->RunHeaders(suite, branch, 1);
  if (runs.empty()) return std::nullopt;
  return std::move(runs.front());
}

std::map<std::string, std::vector<StoredScenarioRun>> HistoryDb::RunHeadersByScenario(
    const std::string& suite, const std::vector<std::string>& scenarios, const std::string& branch,
    size_t limit) const {
  const std::vector<StoredScenarioRun> runs = store_->RunHeaders(suite, branch, limit);
  std::vector<int64_t> ids;
  for (const StoredScenarioRun& run : runs) ids.push_back(run.run_id);
  std::set<std::pair<int64_t, std::string>> stored;
  for (auto& pair : store_->StoredScenarios(ids, scenarios)) stored.insert(std::move(pair));
  std::map<std::string, std::vector<StoredScenarioRun>> out;
  for (const std::string& scenario : scenarios) {
    std::vector<StoredScenarioRun>& of = out[scenario];
    for (const StoredScenarioRun& run : runs) {
      of.push_back(run);
      of.back().has_scenario = stored.count({run.run_id, scenario}) != 0;
    }
  }
  return out;
}

namespace {

ScenarioResult Unpacked(const std::string& db, int64_t run_id, const std::string& scenario,
                        const PackedResult& packed) {
  const std::string where = "run " + std::to_string(run_id) + " scenario " + scenario;
  const std::optional<std::string> text = Inflate(packed.zlib, packed.bytes);
  nlohmann::json j =
      text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json(nlohmann::json::value_t::discarded);
  if (j.is_discarded()) throw InputError(db + ": " + where + ": the stored result is corrupt");
  return ScenarioFromJson(j, db, where);
}

}  // namespace

void HistoryDb::LoadScenario(StoredScenarioRun& run, const std::string& scenario) const {
  if (!run.has_scenario || run.scenario) return;
  std::map<std::string, ScenarioResult> loaded = LoadScenarios(run.run_id, {scenario});
  if (auto found = loaded.find(scenario); found != loaded.end()) run.scenario = std::move(found->second);
}

std::map<std::string, ScenarioResult> HistoryDb::LoadScenarios(int64_t run_id,
                                                               const std::vector<std::string>& scenarios) const {
  std::map<std::string, ScenarioResult> out;
  for (const auto& [scenario, packed] : store_->ScenarioResults(run_id, scenarios))
    out.emplace(scenario, Unpacked(Name(), run_id, scenario, packed));
  return out;
}

std::vector<StoredScenarioRun> HistoryDb::ScenarioRuns(const std::string& suite, const std::string& scenario,
                                                       const std::string& branch) const {
  std::vector<StoredScenarioRun> runs = ScenarioRunHeaders(suite, scenario, branch);
  for (StoredScenarioRun& run : runs) LoadScenario(run, scenario);
  return runs;
}

}  // namespace perfgate

namespace perfgate {

HistoryDb::RecordedAlerts HistoryDb::RecordAlerts(const std::vector<AlertGroup>& found) {
  RecordedAlerts out;
  const std::string now = NowIso8601();
  std::vector<std::string> suites;
  for (const AlertGroup& g : found) {
    auto [id, added] = store_->AddAlertGroup(g, now);
    if (added) out.added.push_back(id);
    if (std::find(suites.begin(), suites.end(), g.suite) == suites.end()) suites.push_back(g.suite);
  }
  for (const std::string& suite : suites) {
    const std::vector<AlertGroup> groups = store_->AlertGroups(suite);
    auto accepted = [&](const AlertGroup& g) {
      return store_->AcceptedChecks(g.suite, g.branch, g.timestamp_before, g.timestamp_after);
    };
    for (AlertTransition& t : AutomaticAlertChanges(groups, accepted)) {
      if (store_->UpdateAlert(t.id, t.update, NowIso8601()) == HistoryStore::UpdateResult::kChanged)
        out.changed.push_back(std::move(t));
    }
  }
  return out;
}

std::vector<AlertGroup> HistoryDb::Alerts(const std::string& suite) const {
  if (store_->SchemaVersion() < 5) return {};
  return store_->AlertGroups(suite);
}

AlertGroup HistoryDb::Alert(int64_t id) const {
  for (AlertGroup& g : Alerts()) {
    if (g.id != id) continue;
    g.changes = store_->AlertChanges(id);
    return std::move(g);
  }
  throw InputError(Name() + ": no alert " + std::to_string(id) + " (perfgate alerts list shows them)");
}

void HistoryDb::SetAlert(int64_t id, const AlertUpdate& update) {
  if (!update.state && !update.owner && !update.bug)
    throw InputError("alerts set: nothing to change (give --state, --owner or --bug)");
  CheckAlertName(update.by, "--by");
  if (update.owner && !update.owner->empty()) CheckAlertName(*update.owner, "--owner");
  if (update.bug && !update.bug->empty()) CheckBugLink(*update.bug, "--bug");
  if (store_->UpdateAlert(id, update, NowIso8601()) == HistoryStore::UpdateResult::kMissing)
    throw InputError(Name() + ": no alert " + std::to_string(id) + " (perfgate alerts list shows them)");
}

bool HistoryDb::OnlyExpectedRegressions(const StoredScenarioRun& run, const std::vector<AlertGroup>& alerts) const {
  if (run.verdict != Verdict::kRegression || alerts.empty()) return false;
  return perfgate::OnlyExpectedRegressions(store_->RegressedChecks(run.run_id), run.environment.timestamp, run.branch,
                                           alerts);
}

}  // namespace perfgate
