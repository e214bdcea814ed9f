#include "history/host_speed.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <iterator>
#include <map>
#include <tuple>

#include "metrics/metric.h"
#include "stats/descriptive.h"

namespace perfgate {
namespace {

constexpr double kNormalSd = 1.4826;  // MAD to the SD of normal data

// The robust SD of the series' noise from one normal night to the next:
// successive differences, so a step between them counts once, not as spread.
double NightToNightSpread(const std::vector<double>& logs, const std::vector<size_t>& normal) {
  std::vector<double> diffs;
  for (size_t k = 1; k < normal.size(); ++k) diffs.push_back(logs[normal[k]] - logs[normal[k - 1]]);
  if (diffs.size() < 2) return 0;
  return kNormalSd * stats::MedianAbsoluteDeviation(diffs) / std::sqrt(2.0);
}

// The level of the normal nights nearest to `at` on either side (ln values).
std::optional<double> LocalLevel(const std::vector<double>& logs, const std::vector<size_t>& normal, size_t at) {
  const auto after = std::lower_bound(normal.begin(), normal.end(), at);
  std::vector<double> near;
  for (auto it = after; it != normal.begin() && near.size() < HostAdjustment::kNeighbours;) near.push_back(logs[*--it]);
  const size_t before = near.size();
  for (auto it = after; it != normal.end() && near.size() < before + HostAdjustment::kNeighbours; ++it)
    near.push_back(logs[*it]);
  if (near.empty()) return std::nullopt;
  return stats::Median(near);
}

}  // namespace

// The loop, the stream and the faults: the direct reads spread about 100 %
// over a run on a busy CI host and decide nothing (compare/host_speed.h does
// the same).
const std::vector<std::string>& HostSpeedParts() {
  static const std::vector<std::string> parts = [] {
    std::vector<std::string> p(std::begin(kHostSpeedCanaries), std::end(kHostSpeedCanaries));
    p.push_back(kHostRunqWaitBehindOthers);
    return p;
  }();
  return parts;
}

const std::vector<std::string>& HostSpeedMetrics() {
  static const std::vector<std::string> metrics = [] {
    std::vector<std::string> m = HostSpeedParts();
    m.push_back(kWorkloadWallTime);
    return m;
  }();
  return metrics;
}

bool IsHostSeries(const HistorySeries& series) { return series.metric.rfind("host.", 0) == 0; }

HostSpeeds HostSpeeds::FromSeries(const std::vector<HistorySeries>& series) {
  HostSpeeds speeds;
  const std::vector<std::string> canaries(std::begin(kHostSpeedCanaries), std::end(kHostSpeedCanaries));
  // (suite, scenario, run): the night's mean wall time and wait behind others.
  std::map<std::tuple<std::string, std::string, int64_t>, std::pair<double, double>> waits;
  for (const HistorySeries& s : series) {
    if (s.statistic != "value") continue;
    if (s.metric == kHostRunqWaitBehindOthers || s.metric == kWorkloadWallTime) {
      for (const HistoryPoint& p : s.points) {
        if (p.values.empty()) continue;
        auto& [wall, wait] = waits.try_emplace({s.suite, s.scenario, p.run_id}, -1.0, -1.0).first->second;
        (s.metric == kWorkloadWallTime ? wall : wait) = stats::Mean(p.values);
      }
      continue;
    }
    if (std::find(canaries.begin(), canaries.end(), s.metric) == canaries.end()) continue;
    for (const HistoryPoint& p : s.points) {
      if (p.values.empty()) continue;
      // The median: a slower host slows every canary, while a quiet one
      // preempts one now and then by several times.
      const double median = stats::Median(p.values);
      if (std::isfinite(median) && median > 0) speeds.values_[{s.metric, s.suite, s.scenario, p.run_id}] = median;
    }
  }
  // The share of the wall time the workload waited behind other processes'
  // tasks is time the host took from it: wall / (wall - wait) is how much
  // slower it ran for that (at most 10x: waits of several threads add up).
  for (const auto& [key, night] : waits) {
    const auto& [wall, wait] = night;
    if (!(wall > 0) || !(wait >= 0)) continue;
    const auto& [suite, scenario, run] = key;
    speeds.values_[{kHostRunqWaitBehindOthers, suite, scenario, run}] = wall / std::max(wall - wait, wall / 10);
  }
  return speeds;
}

std::optional<double> HostSpeeds::Of(const std::string& metric, const std::string& suite, const std::string& scenario,
                                     int64_t run_id) const {
  auto it = values_.find({metric, suite, scenario, run_id});
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

size_t HostAdjustment::off_nights() const {
  return static_cast<size_t>(std::count_if(night.begin(), night.end(), [](HostNight n) { return n != HostNight::kNormal; }));
}

double NominalElasticity(const std::string& unit) {
  if (IsTimeUnit(unit)) return 1;
  const size_t slash = unit.rfind('/');
  if (slash != std::string::npos) {
    const std::string of = unit.substr(0, slash), per = unit.substr(slash + 1);
    if (per == "op" && IsTimeUnit(of)) return 1;
    if (per == "s" && !IsTimeUnit(of)) return -1;
  }
  return 0;
}

HostAdjustment AdjustForHost(const HistorySeries& series, const std::vector<double>& medians,
                             const HostSpeeds& speeds) {
  const size_t n = medians.size();
  HostAdjustment a;
  a.factor.assign(n, 1.0);
  a.part.assign(n, "");
  a.night.assign(n, HostNight::kNormal);
  a.compared = medians;
  a.elasticity = NominalElasticity(series.unit);
  if (speeds.empty() || IsHostSeries(series) || n != series.points.size()) return a;

  // 1. Off nights: for each canary part, each night against the series' usual.
  std::vector<double> log_factor(n, 0.0);
  for (const std::string& part : HostSpeedParts()) {
    std::vector<std::optional<double>> canary(n);
    std::vector<double> known;
    for (size_t i = 0; i < n; ++i) {
      canary[i] = speeds.Of(part, series.suite, series.scenario, series.points[i].run_id);
      if (canary[i]) known.push_back(*canary[i]);
    }
    // Too few nights to know what is usual.
    if (known.size() < 5) continue;
    const double usual = stats::Median(known);
    std::vector<double> logs;
    for (double c : known) logs.push_back(std::log(c / usual));
    // The canary's own spread, from the nights within the threshold it
    // gives, again: a stretch of off nights must not widen it until they
    // no longer look off.
    double threshold = std::numeric_limits<double>::infinity();
    for (int round = 0; round < 4; ++round) {
      std::vector<double> within;
      for (double l : logs)
        if (std::fabs(l) <= threshold) within.push_back(l);
      threshold = std::max(std::log1p(HostAdjustment::kMinHostShift),
                           HostAdjustment::kOffSpreads * kNormalSd * stats::MedianAbsoluteDeviation(within));
    }
    for (size_t i = 0; i < n; ++i) {
      if (!canary[i]) continue;
      const double l = std::log(*canary[i] / usual);
      if (std::fabs(l) > threshold && std::fabs(l) > std::fabs(log_factor[i])) {
        log_factor[i] = l;
        a.part[i] = part;
        a.night[i] = HostNight::kDeflated;
      }
    }
  }
  for (size_t i = 0; i < n; ++i) a.factor[i] = std::exp(log_factor[i]);
  if (a.off_nights() == 0) return a;

  // 2. The elasticity, fitted on the off nights against their neighbours.
  // A series that is not positive throughout has no ratios to deflate: its
  // off nights are left out.
  const bool positive = std::all_of(medians.begin(), medians.end(), [](double v) { return std::isfinite(v) && v > 0; });
  std::vector<double> logs(n, 0.0);
  std::vector<size_t> normal, off;
  for (size_t i = 0; i < n; ++i) {
    if (positive) logs[i] = std::log(medians[i]);
    (a.night[i] == HostNight::kNormal ? normal : off).push_back(i);
  }
  std::vector<std::optional<double>> level(n);
  std::vector<double> ratios;
  if (positive) {
    for (size_t i : off) {
      level[i] = LocalLevel(logs, normal, i);
      if (level[i]) ratios.push_back((logs[i] - *level[i]) / log_factor[i]);
    }
  }
  if (ratios.size() >= HostAdjustment::kMinFittedNights) {
    a.elasticity = std::clamp(stats::Median(ratios), -HostAdjustment::kMaxElasticity, HostAdjustment::kMaxElasticity);
    a.fitted = true;
  }

  // A series the host does not move (a count, a size) keeps its off nights
  // as measured: a step of the code on one of them is the code's.
  if (std::fabs(a.elasticity) < HostAdjustment::kMinElasticity) {
    for (size_t i : off) a.compared[i] = medians[i];
    return a;
  }
  // 3. Deflated where that lines the night up with its neighbours, else left out.
  const double tolerance = std::max(HostAdjustment::kAlignedSpreads * NightToNightSpread(logs, normal),
                                    std::log1p(HostAdjustment::kMinAlignment));
  for (size_t i : off) {
    const double deflated = logs[i] - a.elasticity * log_factor[i];
    if (positive && level[i] && std::fabs(deflated - *level[i]) <= tolerance) {
      a.compared[i] = std::exp(deflated);
    } else {
      a.night[i] = HostNight::kLeftOut;
      a.compared[i] = std::numeric_limits<double>::quiet_NaN();
    }
  }
  return a;
}

}  // namespace perfgate
