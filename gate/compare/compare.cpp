#include "compare/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "compare/adaptive.h"
#include "compare/deterministic.h"
#include "compare/host_speed.h"
#include "compare/load_allowance.h"
#include "metrics/did_you_mean.h"
#include "metrics/metric.h"
#include "metrics/quantity.h"
#include "stats/descriptive.h"
#include "stats/kolmogorov_smirnov.h"
#include "stats/mann_whitney.h"
#include "stats/multiple_testing.h"
#include "stats/power.h"
#include "stats/relative_change.h"
#include "stats/signed_rank.h"

namespace perfgate {

namespace {

using Repetitions = std::vector<const MetricSet*>;

// Only successful measured repetitions are independent samples of the workload.
Repetitions MeasuredRepetitions(const ScenarioResult& scenario) {
  Repetitions reps;
  for (const Repetition& rep : scenario.repetitions) {
    if (rep.measured()) reps.push_back(&rep.metrics);
  }
  return reps;
}

const Metric* FindMetric(const Repetitions& reps, const std::string& name) {
  for (const MetricSet* metrics : reps) {
    if (auto it = metrics->find(name); it != metrics->end()) return &it->second;
  }
  return nullptr;
}

std::vector<double> StatisticValues(const Repetitions& reps, const std::string& name, const std::string& statistic) {
  std::vector<double> values;
  values.reserve(reps.size());
  for (const MetricSet* metrics : reps) {
    auto it = metrics->find(name);
    if (it == metrics->end()) continue;
    if (std::optional<double> v = StatisticValue(it->second, statistic); v && std::isfinite(*v)) values.push_back(*v);
  }
  return values;
}

// The statistic per repetition index, for pairing the two sides of an
// interleaved run: their repetitions of one round share an index.
std::map<int, double> ValuesByRound(const ScenarioResult& scenario, const std::string& name,
                                    const std::string& statistic) {
  std::map<int, double> values;
  for (const Repetition& rep : scenario.repetitions) {
    if (!rep.measured()) continue;
    auto it = rep.metrics.find(name);
    if (it == rep.metrics.end()) continue;
    if (std::optional<double> v = StatisticValue(it->second, statistic); v && std::isfinite(*v))
      values.emplace(rep.index, *v);
  }
  return values;
}

// ---- "did you mean" --------------------------------------------------------

std::string Join(const std::vector<std::string>& names, const std::string& separator) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : separator) + name;
  return joined;
}

// A metric one of the scenario's probes said it cannot measure here (a
// hardware counter on a host without a PMU): its reason and what to do,
// which no list of the metrics measured instead would tell.
std::string MissingMetricMessage(const std::string& metric, const ScenarioResult& scenario, const Repetitions& reps) {
  std::string message = "metric " + metric + " not measured in scenario " + scenario.name;
  for (const ProbeReport& probe : scenario.probes) {
    for (const UnavailableMetrics& u : probe.unavailable) {
      if (std::find(u.metrics.begin(), u.metrics.end(), metric) == u.metrics.end()) continue;
      return message + ": probe " + probe.name + ": " + u.reason + (u.instead.empty() ? "" : "; " + u.instead);
    }
  }
  std::set<std::string> present;
  for (const MetricSet* metrics : reps) {
    for (const auto& [name, _] : *metrics) present.insert(name);
  }
  std::vector<std::string> close = ClosestMatches(metric, {present.begin(), present.end()}, 3);
  if (!close.empty()) return message + "; did you mean " + Join(close, " or ") + "?";
  if (present.empty()) return message + "; no metrics were measured";
  return message + "; measured: " + Join({present.begin(), present.end()}, ", ");
}

// ---- formatting ------------------------------------------------------------

std::string FormatSignedPct(double pct) { return FormatValue("%+.1f", pct); }
std::string FormatPct(double pct) { return FormatValue("%.3g", pct) + " %"; }
std::string FormatP(double p) { return FormatValue("%.2g", p); }

std::string Subject(const CheckResult& check) { return check.spec.metric + " " + check.statistic; }

// ---- resolving a check -----------------------------------------------------

void SetError(CheckResult& check, std::string message) {
  check.verdict = Verdict::kError;
  check.message = std::move(message);
}

// Statistic, unit, direction and candidate values; false (verdict error) when
// the check cannot be evaluated at all.
bool ResolveCandidate(CheckResult& check, const ScenarioResult& result, const Repetitions& reps) {
  const std::string& scenario = result.name;
  const Metric* metric = FindMetric(reps, check.spec.metric);
  if (metric == nullptr) {
    SetError(check, MissingMetricMessage(check.spec.metric, result, reps));
    return false;
  }
  check.statistic = check.spec.statistic.empty() ? DefaultStatistic(metric->kind) : check.spec.statistic;
  check.unit = StatisticUnit(*metric, check.statistic);
  check.better = metric->better;
  const std::vector<std::string> allowed = StatisticsFor(metric->kind);
  if (std::find(allowed.begin(), allowed.end(), check.statistic) == allowed.end()) {
    SetError(check, "statistic " + check.statistic + " does not apply to " + ToString(metric->kind) + " metric " +
                        check.spec.metric + " in scenario " + scenario + "; use one of: " + Join(allowed, ", "));
    return false;
  }
  check.candidate_values = StatisticValues(reps, check.spec.metric, check.statistic);
  if (check.candidate_values.empty()) {
    SetError(check, Subject(check) + " has no value in any repetition of scenario " + scenario +
                        (check.statistic == "per_op" ? " (the workload reported no operation count)" : ""));
    return false;
  }
  check.candidate_median = stats::Median(check.candidate_values);
  return true;
}

// ---- budget checks ---------------------------------------------------------

// The repetitions of `scenario` a neighbour did not disturb
// (Repetition::tainted empty) and the taint of the first one it did.
std::pair<Repetitions, std::string> CleanRepetitions(const ScenarioResult& scenario) {
  Repetitions clean;
  std::string first_taint;
  for (const Repetition& rep : scenario.repetitions) {
    if (!rep.measured()) continue;
    if (rep.tainted.empty()) {
      clean.push_back(&rep.metrics);
    } else if (first_taint.empty()) {
      first_taint = rep.tainted;
    }
  }
  return {std::move(clean), std::move(first_taint)};
}

void EvaluateBudget(CheckResult& check, const ScenarioResult& scenario) {
  const CheckSpec& spec = check.spec;
  if (!spec.max && !spec.min) {
    SetError(check, "budget check " + spec.name + " has neither max nor min");
    return;
  }
  // A budget is an absolute bound, and a host kept busy by other work moves
  // some metrics past it by itself (run-queue waits, wall time, a rate
  // under its minimum). A crossed bound is judged on the repetitions the
  // host left alone: their median when they are at least half, else the
  // check is inconclusive.
  // What the load cannot explain is decided on every repetition, busy or
  // not (compare/load_allowance.h): a count or its rate over its maximum, CPU
  // time past it by more than contention adds, a count under its minimum.
  std::string clean_note;
  if ((spec.max && check.candidate_median > *spec.max) || (spec.min && check.candidate_median < *spec.min)) {
    const auto [clean, taint] = CleanRepetitions(scenario);
    const std::vector<double> values = StatisticValues(clean, spec.metric, check.statistic);
    const size_t all = check.candidate_values.size(), busy = all - std::min(all, values.size());
    const LoadAllowance allowance = AllowanceOf(spec.metric, check.statistic, check.unit);
    const bool over = spec.max && check.candidate_median > *spec.max;
    const double bound = over ? *spec.max : *spec.min;
    const double explained = BoundTheLoadCanExplain(bound, over, allowance);
    const bool beyond_load = allowance.inflation != LoadInflation::kUnbounded &&
                             (over ? check.candidate_median > explained : check.candidate_median < explained);
    if (busy > 0 && beyond_load) {
      clean_note = " (median of " + std::to_string(all) + " repetitions, " + std::to_string(busy) +
                   " taken while other work kept the host busy: " + taint + "; " + AllowanceText(allowance) +
                   (explained != bound ? ", to " + FormatQuantity(explained, check.unit) : "") +
                   (over ? "" : ", and never lowers a value") + ", so the load cannot explain it)";
    } else if (busy > 0 && values.size() * 2 < all) {
      const std::string allowance_text = AllowanceText(allowance);
      check.verdict = Verdict::kInconclusive;
      check.message =
          Subject(check) + " " + FormatQuantity(check.candidate_median, check.unit) + " beyond budget " +
          FormatQuantity(bound, check.unit) + "; inconclusive: other work kept the host busy in " +
          std::to_string(busy) + " of " + std::to_string(all) + " repetitions (" + taint + ")" +
          (allowance_text.empty() ? ", which can stretch it without bound"
                                  : ", and " + allowance_text + ", to " + FormatQuantity(explained, check.unit)) +
          ", so the bound is not held against the workload";
      return;
    }
    if (busy > 0 && !beyond_load) {
      check.candidate_median = stats::Median(values);
      clean_note = " (median of the " + std::to_string(values.size()) + " repetitions the host left alone; " +
                   std::to_string(busy) + " taken while other work kept it busy are left out)";
    }
  }
  const double median = check.candidate_median;
  const bool over = spec.max && median > *spec.max;
  const bool under = !over && spec.min && median < *spec.min;
  check.verdict = over || under ? Verdict::kRegression : Verdict::kPass;

  // Name the bound that decided, or the one nearer to being crossed.
  const bool use_max = over || (!under && spec.max.has_value());
  const double bound = use_max ? *spec.max : *spec.min;
  const auto beyond = std::count_if(check.candidate_values.begin(), check.candidate_values.end(),
                                    [&](double v) { return use_max ? v > bound : v < bound; });
  const char* relation = over ? " > " : under ? " < " : use_max ? " <= " : " >= ";
  check.message = Subject(check) + " " + FormatQuantity(median, check.unit) + relation + "budget " +
                  FormatQuantity(bound, check.unit);
  if (!clean_note.empty()) {
    check.message += clean_note;
  } else if (beyond > 0 && static_cast<size_t>(beyond) < check.candidate_values.size()) {
    check.message += " (median of " + std::to_string(check.candidate_values.size()) + " repetitions; " +
                     std::to_string(beyond) + (use_max ? " above)" : " below)");
  }
}

// ---- regression checks -----------------------------------------------------

// Evidence of one regression check, before the family-wise adjustment.
struct CheckEvidence {
  CheckResult* check = nullptr;
  double p_worse = 1;   // one-sided towards the bad direction (two-sided without one)
  double p_better = 1;  // one-sided towards the good direction (1 without one)
  double cv = 0;        // pooled robust coefficient of variation
  // Median CPUs of other work on the host, candidate and baseline, when both
  // recorded it.
  std::optional<std::pair<double, double>> host_other_cpus;
  // Median idle CPUs while the candidate ran (CPU count minus other work minus
  // the workload's own use), when known.
  std::optional<double> candidate_spare_cpus;
  Repetitions candidate;                          // the candidate's measured repetitions, for the outlier note
  const AdaptiveRepetitions* adaptive = nullptr;  // the scenario's plan, when adaptive
  // The level of the look where the scenario stopped, over alpha (1: a fixed count).
  double level_scale = 1;
  bool interleaved = false;  // CompareOptions::interleaved
  // The host's speed now against the stored baseline's (canary), when both
  // sides timed it and the sides did not run interleaved.
  const HostSpeed* host_speed = nullptr;
  // Pairs of an interleaved run the verdict rests on (0: the two sides as
  // independent samples), and the robust standard deviation of their log ratios.
  size_t pairs = 0;
  double pair_sd = 0;
  int tests = 1;                             // tests whose smallest p the check's p is (Bonferroni): 2 for pairs
  const ScenarioResult* baseline = nullptr;  // for gathering it again unpaired
  std::string scenario;
  std::string test;  // "rank+KS, " when KS gave a second opinion (tails), "paired signed-rank, " for pairs
  // Why a near-deterministic metric is decided by the rank tests after all
  // (compare/deterministic.h), for the end of the message.
  std::string deterministic_fallback;
};

bool IsTailStatistic(const std::string& statistic) {
  return statistic == "p90" || statistic == "p99" || statistic == "p99.9" || statistic == "max";
}

// A timing regression measured while other work kept this many more CPUs busy
// than when the baseline was recorded is not attributed to the change: on
// the 2-CPU CI hosts a parallel build next to the workload alone slows it by
// 30-80 %. A quarter CPU is well above /proc/stat's tick resolution.
constexpr double kBusierHostCpus = 0.25;

// Idle CPUs per candidate repetition: with none to spare, the workload queued
// behind other work and its times say nothing about the change.
std::optional<double> SpareCpus(const Repetitions& candidate, int cpu_count) {
  if (cpu_count <= 0) return std::nullopt;
  std::vector<double> spare;
  for (const MetricSet* metrics : candidate) {
    auto other = metrics->find(kHostOtherCpus);
    auto cpu = metrics->find(kWorkloadCpuTime);
    auto wall = metrics->find(kWorkloadWallTime);
    if (other == metrics->end() || cpu == metrics->end() || wall == metrics->end() || !(wall->second.value > 0))
      continue;
    spare.push_back(cpu_count - other->second.value - cpu->second.value / wall->second.value);
  }
  if (spare.empty()) return std::nullopt;
  return stats::Median(spare);
}

std::optional<std::pair<double, double>> HostOtherCpus(const Repetitions& candidate, const ScenarioResult* baseline) {
  if (baseline == nullptr) return std::nullopt;
  std::vector<double> now = StatisticValues(candidate, kHostOtherCpus, "value");
  std::vector<double> then = StatisticValues(MeasuredRepetitions(*baseline), kHostOtherCpus, "value");
  if (now.empty() || then.empty()) return std::nullopt;
  return std::make_pair(stats::Median(now), stats::Median(then));
}

// The change as seen from the bad side: positive is worse. In percent.
struct BadSideChange {
  double estimate = 0;
  std::optional<double> worst;  // worst end of the interval
  std::optional<double> best;   // best end of the interval (0 when a two-sided one spans no change)
  double good = 0;              // the change in the good direction (-inf when none is good)
};

BadSideChange ToBadSide(const CheckResult& check) {
  const double change = check.change_pct;
  const auto& low = check.change_ci_low_pct;
  const auto& high = check.change_ci_high_pct;
  switch (check.better) {
    case Better::kLower:
      return {change, high, low, -change};
    case Better::kHigher:
      return {-change, low ? std::optional<double>(-*low) : std::nullopt,
              high ? std::optional<double>(-*high) : std::nullopt, change};
    case Better::kNone: {
      if (!low || !high) return {std::fabs(change), std::nullopt, std::nullopt, -HUGE_VAL};
      const double nearest = *low > 0 ? *low : *high < 0 ? -*high : 0;
      return {std::fabs(change), std::max(*high, -*low), nearest, -HUGE_VAL};
    }
  }
  return {};
}

double PooledVariance(double cv_a, size_t n_a, double cv_b, size_t n_b) {
  const double dof = static_cast<double>(n_a + n_b) - 2;
  if (dof <= 0) return 0;
  return (cv_a * cv_a * (static_cast<double>(n_a) - 1) + cv_b * cv_b * (static_cast<double>(n_b) - 1)) / dof;
}

// Interval of the relative change. Positive data (times, rates, latencies):
// the Hodges–Lehmann interval of the log ratio — exact coverage, the inversion
// of the rank test that gives p, and ~100x cheaper than resampling (the
// bootstrap took ~0.4 ms per check at 30 + 30 repetitions). A repetition that
// measured 0 makes logs impossible: percentile bootstrap of the median ratio.
stats::RelativeChange ChangeInterval(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                     double confidence) {
  stats::RelativeChange shift = stats::RelativeShiftOfLogs(baseline, candidate, confidence);
  if (!std::isnan(shift.change)) return shift;
  return stats::RelativeChangeOfMedians(baseline, candidate, confidence);
}

// p_worse and p_better of `evidence` from a test `p(alternative)`, by the
// metric's better direction (no direction: two-sided p_worse, p_better 1).
template <typename Test>
void SetDirectionalP(CheckEvidence& evidence, Better better, const Test& p) {
  using stats::Alternative;
  evidence.p_worse = evidence.p_better = 1;
  switch (better) {
    case Better::kLower:
      evidence.p_worse = p(Alternative::kCandidateGreater);
      evidence.p_better = p(Alternative::kCandidateLess);
      break;
    case Better::kHigher:
      evidence.p_worse = p(Alternative::kCandidateLess);
      evidence.p_better = p(Alternative::kCandidateGreater);
      break;
    case Better::kNone:
      evidence.p_worse = p(Alternative::kTwoSided);
      break;
  }
}

// Fewer pairs than this: the two sides as independent samples. Five pairs
// are the fewest whose one-sided signed-rank p can go below 5 %.
constexpr size_t kMinPairs = 5;

// log(candidate / baseline) of every round both sides measured, when the
// two sides ran interleaved (CompareOptions::interleaved); empty when they
// cannot be paired: too few common rounds, or a value <= 0 (no log).
std::vector<double> PairedLogRatios(const CheckResult& check, const ScenarioResult& candidate,
                                    const ScenarioResult& baseline) {
  const std::map<int, double> b = ValuesByRound(baseline, check.spec.metric, check.statistic);
  const std::map<int, double> c = ValuesByRound(candidate, check.spec.metric, check.statistic);
  std::vector<double> ratios;
  for (const auto& [round, value] : c) {
    auto other = b.find(round);
    if (other == b.end()) continue;
    if (!(value > 0) || !(other->second > 0)) return {};
    ratios.push_back(std::log(value / other->second));
  }
  if (ratios.size() < kMinPairs) return {};
  return ratios;
}

// The paired evidence of an interleaved run: the within-pair change cancels
// what both sides of a round shared (drift, the host's load of the moment).
// The estimate is the Hodges–Lehmann centre of the log ratios, the interval
// the signed-rank test's. A neighbour's burst that hit one side of a pair is
// the opposite case: it gives that pair the largest |ratio|, and so the
// largest rank, where the two-sample rank test sees one slow repetition among
// many. So both tests are run, and each p is twice the smaller of the two
// (Bonferroni over the two keeps the check's level); the estimate and
// interval are those of the test with the smaller p towards a regression.
// `evidence` holds the two-sample test's on entry.
void PairedEvidence(CheckEvidence& evidence, const std::vector<double>& ratios, double confidence) {
  CheckResult& check = *evidence.check;
  const CheckEvidence unpaired = evidence;
  using stats::Alternative;
  const auto p = [&](Alternative alternative) { return stats::WilcoxonSignedRank(ratios, alternative).p_value; };
  SetDirectionalP(evidence, check.better, p);
  const bool paired_leads = evidence.p_worse <= unpaired.p_worse;
  evidence.p_worse = std::min(1.0, 2 * std::min(evidence.p_worse, unpaired.p_worse));
  evidence.p_better = std::min(1.0, 2 * std::min(evidence.p_better, unpaired.p_better));
  evidence.tests = 2;
  if (!paired_leads) {
    evidence.test = "rank-sum of pairs, ";
    return;
  }
  const stats::ShiftEstimate shift = stats::PairedShift(ratios, confidence);
  check.change_pct = 100 * std::expm1(shift.estimate);
  check.change_ci_low_pct = 100 * std::expm1(shift.low);
  check.change_ci_high_pct = 100 * std::expm1(shift.high);
  evidence.pairs = ratios.size();
  evidence.pair_sd = 1.4826 * stats::MedianAbsoluteDeviation(ratios);
  if (!(evidence.pair_sd > 0)) evidence.pair_sd = stats::StdDev(ratios);
  evidence.test = "paired signed-rank, ";
}

std::optional<CheckEvidence> GatherEvidence(CheckResult& check, const std::string& scenario,
                                            const ScenarioResult* baseline, double confidence,
                                            const std::vector<double>& paired_log_ratios = {}) {
  if (baseline == nullptr) {
    check.verdict = Verdict::kInconclusive;
    check.message = Subject(check) + ": no baseline for scenario " + scenario;
    return std::nullopt;
  }
  check.baseline_values = StatisticValues(MeasuredRepetitions(*baseline), check.spec.metric, check.statistic);
  if (check.baseline_values.empty()) {
    check.verdict = Verdict::kInconclusive;
    check.message = Subject(check) + ": the baseline of scenario " + scenario + " has no values of it";
    return std::nullopt;
  }
  check.baseline_median = stats::Median(check.baseline_values);
  if (!(check.baseline_median > 0)) {
    check.verdict = Verdict::kInconclusive;
    check.message = Subject(check) + ": baseline median " + FormatQuantity(check.baseline_median, check.unit) +
                    " leaves a relative change undefined; use a budget check";
    return std::nullopt;
  }
  // The point estimate is the ratio of the medians the message shows.
  check.change_pct = 100 * (check.candidate_median / check.baseline_median - 1);
  const stats::RelativeChange interval = ChangeInterval(check.baseline_values, check.candidate_values, confidence);
  if (interval.low && interval.high) {
    check.change_ci_low_pct = 100 * *interval.low;
    check.change_ci_high_pct = 100 * *interval.high;
  }

  CheckEvidence evidence;
  evidence.check = &check;
  using stats::Alternative;
  // Tail statistics get KS as a second opinion, the way Pinpoint pairs the
  // two: a tail that grew in some repetitions only changes the shape of the
  // per-repetition p99s more than their ranks. Bonferroni over the two tests
  // (twice the smaller p) keeps the check's level.
  const bool tail = IsTailStatistic(check.statistic);
  const auto p = [&](Alternative alternative) {
    const double rank = stats::MannWhitneyU(check.baseline_values, check.candidate_values, alternative).p_value;
    if (!tail) return rank;
    const double ks = stats::KolmogorovSmirnov(check.baseline_values, check.candidate_values, alternative).p_value;
    return std::min(1.0, 2 * std::min(rank, ks));
  };
  if (tail) evidence.test = "rank+KS, ";
  SetDirectionalP(evidence, check.better, p);
  evidence.cv = std::sqrt(
      PooledVariance(stats::RobustCoefficientOfVariation(check.baseline_values), check.baseline_values.size(),
                     stats::RobustCoefficientOfVariation(check.candidate_values), check.candidate_values.size()));
  if (!paired_log_ratios.empty()) PairedEvidence(evidence, paired_log_ratios, confidence);
  return evidence;
}

// ---- outlier repetitions ---------------------------------------------------

// A repetition further than this many robust standard deviations from the
// median is an outlier (Iglewicz and Hoaglin's cut-off).
constexpr double kOutlierZ = 3.5;

// Repetition `i`'s most unusual other metric, relative to its own median
// across `reps`: what that repetition did differently (more run-queue wait,
// a busier host, more reclaim). Empty when nothing stands out.
std::string WhatStandsOut(const Repetitions& reps, size_t i, const std::string& exclude) {
  std::string found;
  double strongest = 0;
  for (const auto& [name, metric] : *reps[i]) {
    // The workload's own times and counts move with the check itself.
    if (name == exclude || name.starts_with("workload.")) continue;
    const char* statistic = metric.kind == MetricKind::kHistogram ? "p99"
                            : metric.kind == MetricKind::kCounter ? "count"
                                                                  : "value";
    const std::optional<double> value = StatisticValue(metric, statistic);
    const std::vector<double> all = StatisticValues(reps, name, statistic);
    if (!value || all.size() != reps.size()) continue;
    const double median = stats::Median(all);
    if (!(*value > 0) || !(median > 0) || !(std::fabs(stats::RobustZ(all, *value)) > kOutlierZ)) continue;
    const double strength = std::fabs(std::log(*value / median));
    if (strength <= strongest) continue;
    strongest = strength;
    found = name + (metric.kind == MetricKind::kHistogram ? " p99" : "") + " was " +
            FormatValue("%.2g", *value / median) + "x its median";
  }
  return found;
}

// Names the most extreme outlier repetition of a check's candidate values,
// and what stood out in it, at the end of the message.
void AddOutlierNote(CheckResult& check, const Repetitions& reps) {
  const std::vector<double>& values = check.candidate_values;
  if (values.size() < 5 || values.size() != reps.size()) return;
  size_t worst = values.size();
  double worst_z = kOutlierZ;
  for (size_t i = 0; i < values.size(); ++i) {
    const double z = std::fabs(stats::RobustZ(values, values[i]));
    if (z > worst_z) {
      worst_z = z;
      worst = i;
    }
  }
  if (worst == values.size()) return;
  const double median = stats::Median(values);
  check.message += "; outlier: repetition " + std::to_string(worst + 1);
  if (median != 0) check.message += " (" + FormatSignedPct(100 * (values[worst] / median - 1)) + " % from the median)";
  if (std::string why = WhatStandsOut(reps, worst, check.spec.metric); !why.empty()) check.message += ", where " + why;
}

struct Family {
  size_t size = 0;
  double alpha = 0.01;             // improvements
  double regression_alpha = 0.01;  // regressions: alpha, or the screening level before a confirmation
  double interval_confidence = 0.90;
  std::string method;  // "Holm" or "BH"
};

// A two-sided test spends half on each side.
double PerCheckAlpha(const CheckResult& check, const Family& family) {
  const double alpha = family.regression_alpha / static_cast<double>(family.size);
  return check.better == Better::kNone ? alpha / 2 : alpha;
}

std::string ResolutionLimit(const CheckResult& check, const CheckEvidence& evidence, double per_check_alpha,
                            double mde_pct) {
  const std::string threshold = FormatPct(check.spec.max_regression_pct);
  if (evidence.pairs > 0) {
    const std::string pairs = std::to_string(evidence.pairs) + " pairs";
    if (std::isinf(mde_pct))
      return "cannot resolve " + threshold + " with " + pairs + ": the signed-rank test's smallest p " +
             FormatP(stats::SmallestSignedRankPValue(static_cast<int>(evidence.pairs))) +
             " cannot reach the per-check level " + FormatP(per_check_alpha) + "; add repetitions";
    return "cannot resolve " + threshold + " with " + pairs + " whose ratios vary by " +
           FormatPct(100 * evidence.pair_sd) + "; minimum detectable " + FormatPct(mde_pct);
  }
  const std::string reps =
      std::to_string(check.baseline_values.size()) + "+" + std::to_string(check.candidate_values.size());
  if (std::isinf(mde_pct)) {
    const auto m = static_cast<int>(check.baseline_values.size());
    const auto n = static_cast<int>(check.candidate_values.size());
    return "cannot resolve " + threshold + " with " + reps + " repetitions: the rank test's smallest p " +
           FormatP(stats::SmallestOneSidedPValue(m, n)) + " cannot reach the per-check level " +
           FormatP(per_check_alpha) + "; add repetitions";
  }
  return "cannot resolve " + threshold + " with " + reps + " repetitions at CV " + FormatPct(100 * evidence.cv) +
         "; minimum detectable " + FormatPct(mde_pct);
}

void DecideRegression(const CheckEvidence& evidence, double p_worse_adjusted, double p_better_adjusted,
                      const Family& family) {
  CheckResult& check = *evidence.check;
  const double threshold = check.spec.max_regression_pct;
  const BadSideChange change = ToBadSide(check);
  const bool worse_significant = p_worse_adjusted < family.regression_alpha;
  const bool better_significant = p_better_adjusted < family.alpha;

  // Per-check level of the first Holm / BH step, at the look where an
  // adaptive scenario stopped.
  const double per_check_alpha = PerCheckAlpha(check, family) * evidence.level_scale / evidence.tests;
  const double mde_pct =
      100 * (evidence.pairs > 0 ? stats::MinimumDetectablePairedEffect(static_cast<int>(evidence.pairs),
                                                                       evidence.pair_sd, per_check_alpha)
                                : stats::MinimumDetectableRelativeEffect(
                                      static_cast<int>(check.baseline_values.size()),
                                      static_cast<int>(check.candidate_values.size()), evidence.cv, per_check_alpha));
  if (std::isfinite(mde_pct)) check.min_detectable_pct = mde_pct;

  std::string tail;
  bool report_better_p = change.good > 0;
  // The whole interval beyond the threshold, not just the estimate: a shift
  // of about the threshold's size (machine drift between the baseline and
  // now is 1-4 % on shared CI hosts) must not flip between pass and fail.
  const bool beyond = change.estimate > threshold && (!change.best || *change.best > threshold);
  const bool host_busier = !evidence.interleaved && IsTimeUnit(check.unit) && evidence.host_other_cpus &&
                           evidence.host_other_cpus->first - evidence.host_other_cpus->second > kBusierHostCpus;
  // Saturated by other work, not by the workload alone (one busy thread on a
  // one-CPU host leaves nothing idle and is still a fair measurement).
  const bool host_saturated = !evidence.interleaved && IsTimeUnit(check.unit) && evidence.candidate_spare_cpus &&
                              evidence.host_other_cpus && *evidence.candidate_spare_cpus < kBusierHostCpus &&
                              evidence.host_other_cpus->first > kBusierHostCpus;
  // A change beyond what contention can add on top of the threshold is the
  // workload's, busy host or not; a count the load does not move at all.
  // The bad side of a rate is up only when lower is better.
  const LoadAllowance allowance = AllowanceOf(check.spec.metric, check.statistic, check.unit);
  const bool load_can_reach_bad_side =
      allowance.inflation == LoadInflation::kUnbounded ||
      (allowance.inflation == LoadInflation::kLowersOnly && check.better != Better::kLower);
  const bool beyond_load = !load_can_reach_bad_side && change.best &&
                           *change.best > 100 * (BoundTheLoadCanExplain(1 + threshold / 100, true, allowance) - 1);
  const std::string load_note = (host_saturated || host_busier) && beyond_load
                                    ? " (the host was busy, and " + AllowanceText(allowance) + ")"
                                    : "";
  const std::string allowance_note = allowance.inflation == LoadInflation::kBounded
                                         ? "; " + AllowanceText(allowance) + ", and the interval's low end " +
                                               FormatSignedPct(change.best.value_or(0)) + " % is within it"
                                         : "";
  // A slower host stretches times and thins rates by as much as its
  // canary's change: a regression within that is the host's; beyond it, it
  // is the workload's, whatever the load (compare/host_speed.h).
  // NaN: the host's speed explains nothing on that side.
  const double host_bad = evidence.host_speed
                              ? ChangeTheHostExplains(check, *evidence.host_speed, true).value_or(NAN)
                              : NAN;
  const double host_good = evidence.host_speed
                               ? ChangeTheHostExplains(check, *evidence.host_speed, false).value_or(NAN)
                               : NAN;
  const std::string host_text =
      evidence.host_speed ? DescribeHostSpeed(*evidence.host_speed) : "";
  // What the interval's worst end would be without a faster host's push (NaN: no push).
  const double hidden = evidence.host_speed && change.worst
                            ? WorstChangeBeneathTheHost(check, *evidence.host_speed, *change.worst).value_or(NAN)
                            : NAN;
  const bool host_slows = !std::isnan(host_bad);
  const bool host_explains_bad = host_slows && !(change.best && *change.best > host_bad);
  const std::string host_note =
      host_slows && !host_explains_bad
          ? " (" + host_text + ", which explains up to " + FormatSignedPct(host_bad) + " %)"
          : "";
  if (worse_significant && beyond && host_explains_bad) {
    check.verdict = Verdict::kInconclusive;
    tail = " > threshold " + FormatPct(threshold) + "; inconclusive: " + host_text + ": up to " +
           FormatSignedPct(host_bad) + " % is the host's, and the interval's low end " +
           FormatSignedPct(change.best.value_or(0)) + " % is within it";
    report_better_p = false;
  } else if (worse_significant && beyond && host_slows) {
    check.verdict = Verdict::kRegression;
    tail = " > threshold " + FormatPct(threshold) + host_note;
    report_better_p = false;
  } else if (worse_significant && beyond && beyond_load) {
    check.verdict = Verdict::kRegression;
    tail = " > threshold " + FormatPct(threshold) + load_note;
    report_better_p = false;
  } else if (worse_significant && beyond && host_saturated && !host_busier) {
    check.verdict = Verdict::kInconclusive;
    tail = " > threshold " + FormatPct(threshold) + "; inconclusive: the host had no CPU to spare (" +
           FormatValue("%.2f", std::max(0.0, *evidence.candidate_spare_cpus)) + " idle) while the candidate ran" +
           allowance_note;
    report_better_p = false;
  } else if (worse_significant && beyond && host_busier) {
    check.verdict = Verdict::kInconclusive;
    tail = " > threshold " + FormatPct(threshold) + "; inconclusive: the host was busier, other work kept " +
           FormatValue("%.2f", evidence.host_other_cpus->first) + " CPUs busy vs " +
           FormatValue("%.2f", evidence.host_other_cpus->second) + " when the baseline was recorded" + allowance_note;
    report_better_p = false;
  } else if (worse_significant && beyond) {
    check.verdict = Verdict::kRegression;
    tail = " > threshold " + FormatPct(threshold);
    report_better_p = false;
  } else if (better_significant && change.good > threshold && change.good <= host_good) {
    check.verdict = Verdict::kInconclusive;
    tail = "; inconclusive: an improvement beyond threshold " + FormatPct(threshold) + ", but " + host_text +
           ": up to " + FormatSignedPct(host_good) + " % the other way is the host's";
  } else if (better_significant && change.good > threshold) {
    check.verdict = Verdict::kImprovement;
    tail = " improvement beyond threshold " + FormatPct(threshold);
  } else if (change.estimate <= threshold && change.worst && *change.worst <= threshold && hidden > threshold) {
    check.verdict = Verdict::kInconclusive;
    tail = " within threshold " + FormatPct(threshold) + "; inconclusive: " + host_text + ", which can hide up to " +
           FormatSignedPct(hidden) + " %";
  } else if (change.estimate <= threshold &&
             ((change.worst && *change.worst <= threshold) || (!worse_significant && mde_pct <= threshold))) {
    check.verdict = Verdict::kPass;
    tail = " within threshold " + FormatPct(threshold);
  } else {
    check.verdict = Verdict::kInconclusive;
    if (!worse_significant && !(mde_pct <= threshold)) {
      tail = "; inconclusive: " + ResolutionLimit(check, evidence, per_check_alpha, mde_pct);
    } else if (!worse_significant) {
      tail = "; inconclusive: beyond threshold " + FormatPct(threshold) + " but not significant";
    } else if (change.estimate > threshold) {
      tail = "; inconclusive: significant and beyond threshold " + FormatPct(threshold) +
             ", but the interval reaches back within it";
    } else {
      tail = "; inconclusive: significant, but the interval reaches past threshold " + FormatPct(threshold);
    }
  }

  check.pairs = static_cast<int>(evidence.pairs);
  check.p_value = report_better_p ? evidence.p_better : evidence.p_worse;
  check.p_adjusted = report_better_p ? p_better_adjusted : p_worse_adjusted;
  std::string interval;
  if (check.change_ci_low_pct && check.change_ci_high_pct) {
    interval = ", " + FormatValue("%.0f", 100 * family.interval_confidence) + " % CI " +
               FormatSignedPct(*check.change_ci_low_pct) + " … " + FormatSignedPct(*check.change_ci_high_pct) + " %";
  }
  check.message = Subject(check) + ": " + FormatQuantity(check.baseline_median, check.unit) + " → " +
                  FormatQuantity(check.candidate_median, check.unit) + " (" + FormatSignedPct(check.change_pct) + " %" +
                  interval + "), p=" + FormatP(*check.p_value) + " (" + evidence.test + family.method + " " +
                  FormatP(*check.p_adjusted) + ")" + tail;
}

// Resets everything EvaluateChecks computes, so re-evaluating a run is idempotent.
void ResetOutcome(CheckResult& check) {
  CheckSpec spec = std::move(check.spec);
  check = CheckResult{};
  check.spec = std::move(spec);
}

}  // namespace

void EvaluateChecks(RunResults& candidate, const std::map<std::string, ScenarioResult>& baseline,
                    const CompareOptions& options) {
  std::vector<CheckEvidence> family;
  for (ScenarioResult& scenario : candidate.scenarios) {
    const Repetitions reps = MeasuredRepetitions(scenario);
    const auto recorded = baseline.find(scenario.name);
    const ScenarioResult* baseline_scenario = recorded == baseline.end() ? nullptr : &recorded->second;
    // Interleaved sides shared the host's speed of the moment; a baseline
    // from another machine is not compared at all.
    scenario.host_speed.reset();
    if (baseline_scenario && !options.interleaved && !options.foreign_baselines.contains(scenario.name))
      scenario.host_speed = CompareHostSpeed(scenario, *baseline_scenario, options.interval_confidence);
    for (CheckResult& check : scenario.checks) {
      ResetOutcome(check);
      if (!scenario.error.empty()) {
        SetError(check, "scenario " + scenario.name + " did not run: " + scenario.error);
        continue;
      }
      if (!ResolveCandidate(check, scenario, reps)) continue;
      if (check.spec.type == CheckSpec::Type::kBudget) {
        EvaluateBudget(check, scenario);
      } else if (auto foreign = options.foreign_baselines.find(scenario.name);
                 foreign != options.foreign_baselines.end() && baseline_scenario != nullptr) {
        // The change is shown for what it is worth; it takes no part in the family.
        if (GatherEvidence(check, scenario.name, baseline_scenario, options.interval_confidence)) {
          check.verdict = Verdict::kInconclusive;
          check.message = Subject(check) + ": " + FormatQuantity(check.baseline_median, check.unit) + " → " +
                          FormatQuantity(check.candidate_median, check.unit) + " (" +
                          FormatSignedPct(check.change_pct) +
                          " %); inconclusive: the baseline was recorded on another machine (" + foreign->second +
                          "), so the change is not this host's (--allow-other-host compares anyway)";
        }
      } else if (auto evidence = GatherEvidence(check, scenario.name, baseline_scenario, options.interval_confidence,
                                                options.interleaved && baseline_scenario
                                                    ? PairedLogRatios(check, scenario, *baseline_scenario)
                                                    : std::vector<double>{})) {
        // Near-deterministic counts are decided by their interval, outside the family.
        std::string fallback;
        if (IsNearDeterministic(check.spec.metric) && DecideNearDeterministic(check, fallback)) continue;
        evidence->deterministic_fallback = fallback;
        evidence->host_other_cpus = HostOtherCpus(reps, baseline_scenario);
        evidence->candidate_spare_cpus = SpareCpus(reps, candidate.environment.cpu_count);
        evidence->candidate = reps;
        evidence->interleaved = options.interleaved;
        if (scenario.host_speed) evidence->host_speed = &*scenario.host_speed;
        evidence->baseline = baseline_scenario;
        evidence->scenario = scenario.name;
        if (scenario.adaptive) evidence->adaptive = &*scenario.adaptive;
        family.push_back(*evidence);
      }
    }
  }
  if (family.empty()) return;

  // One family across the whole run: every regression check is a chance of a
  // false alarm, whichever scenario it belongs to.
  const Family context{std::max(family.size(), options.family_size_at_least), options.alpha, RegressionAlpha(options),
                       options.interval_confidence, options.fdr ? "BH" : "Holm"};
  // Unseen checks of a look count with p = 1.
  std::vector<double> p_worse(context.size, 1.0), p_better(context.size, 1.0);
  for (size_t i = 0; i < family.size(); ++i) {
    CheckEvidence& evidence = family[i];
    if (evidence.adaptive) {
      evidence.level_scale =
          SequentialLevelScale(*evidence.adaptive, evidence.check->baseline_values.size(),
                               evidence.check->candidate_values.size(), PerCheckAlpha(*evidence.check, context));
    }
    // Too few pairs for the signed-rank test to ever reach the check's level
    // (its smallest p is 2^-n; the rank-sum test's, 1 / C(2n, n), is far
    // smaller): the two sides as independent samples, which can.
    if (evidence.tests > 1 &&
        stats::SmallestSignedRankPValue(static_cast<int>(evidence.check->candidate_values.size())) >
            PerCheckAlpha(*evidence.check, context) * evidence.level_scale / 2) {
      CheckEvidence unpaired =
          *GatherEvidence(*evidence.check, evidence.scenario, evidence.baseline, options.interval_confidence);
      // What the pairing did not decide carries over.
      std::tie(unpaired.host_other_cpus, unpaired.candidate_spare_cpus, unpaired.candidate, unpaired.adaptive,
               unpaired.level_scale, unpaired.interleaved, unpaired.host_speed, unpaired.deterministic_fallback) =
          std::tie(evidence.host_other_cpus, evidence.candidate_spare_cpus, evidence.candidate, evidence.adaptive,
                   evidence.level_scale, evidence.interleaved, evidence.host_speed, evidence.deterministic_fallback);
      evidence = std::move(unpaired);
    }
    p_worse[i] = std::min(1.0, evidence.p_worse / evidence.level_scale);
    p_better[i] = std::min(1.0, evidence.p_better / evidence.level_scale);
  }
  const auto adjust = options.fdr ? stats::BenjaminiHochbergAdjust : stats::HolmAdjust;
  const std::vector<double> worse_adjusted = adjust(p_worse);
  const std::vector<double> better_adjusted = adjust(p_better);
  for (size_t i = 0; i < family.size(); ++i) {
    DecideRegression(family[i], worse_adjusted[i], better_adjusted[i], context);
    family[i].check->message += family[i].deterministic_fallback;
    AddOutlierNote(*family[i].check, family[i].candidate);
  }
}

}  // namespace perfgate
