// The verdict engine (compare/compare.h) on thousands of synthetic suites of
// 20 checks with realistic noise, fixed seeds: how often an A/A run raises a
// false alarm, and how often a real shift is caught. Prints the operating
// characteristic (OC) table that docs/verdicts.md quotes.
//
// Noise, per check (the check index picks one; the CV is the spread of a
// repetition's value):
//   log-normal   value = median * exp(cv * Z)
//   bimodal      log-normal, and 30 % of repetitions land 3 CVs higher
//                (a second mode: another CPU, a cold cache)
//   heavy tail   median * exp(cv * T3 / sqrt(3)) (Student t, 3 degrees)
//   outlier      log-normal, and 5 % of repetitions are 50 % slower
// A shifted check moves its whole distribution by `shift`.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compare/adaptive.h"
#include "compare/compare.h"
#include "compare/confirm.h"
#include "metrics/metric.h"
#include "stats/distributions.h"

namespace perfgate {
namespace {

enum class Noise { kLogNormal, kBimodal, kHeavyTail, kOutlier };
constexpr int kNoiseKinds = 4;

class Draws {
 public:
  explicit Draws(uint64_t seed) : engine_(seed) {}

  double Value(Noise noise, double median, double cv) {
    switch (noise) {
      case Noise::kLogNormal:
        return median * std::exp(cv * normal_(engine_));
      case Noise::kBimodal:
        return median * std::exp(cv * normal_(engine_) + (uniform_(engine_) < 0.3 ? 3 * cv : 0));
      case Noise::kHeavyTail:
        return median * std::exp(cv * student_(engine_) / std::sqrt(3.0));
      case Noise::kOutlier:
        return median * std::exp(cv * normal_(engine_)) * (uniform_(engine_) < 0.05 ? 1.5 : 1.0);
    }
    return median;
  }

  double Uniform() { return uniform_(engine_); }
  double Normal() { return normal_(engine_); }

  // One repetition's latency histogram: `samples` log-normal latencies
  // (median 100 us, sigma 0.5), all scaled by `scale`.
  LogLinearHistogram Latencies(int samples, double scale) {
    LogLinearHistogram hist;
    for (int i = 0; i < samples; ++i)
      hist.Record(static_cast<uint64_t>(100000.0 * scale * std::exp(0.5 * normal_(engine_))));
    return hist;
  }

 private:
  std::mt19937_64 engine_;
  std::normal_distribution<double> normal_;
  std::uniform_real_distribution<double> uniform_;
  std::student_t_distribution<double> student_{3.0};
};

struct Experiment {
  int suites = 2000;
  int checks = 20;
  int repetitions = 10;  // per side
  double cv = 0.02;
  double threshold_pct = 2;
  double shift = 0;       // relative shift of check 0 (0: A/A)
  bool p99 = false;       // check 0 is the p99 of per-repetition histograms
  int samples_per_repetition = 5000;
  uint64_t seed = 1;
};

struct SimulatedOutcome {
  double false_alarm_rate = 0;  // suites in which some unshifted check was a regression
  double detection_rate = 0;    // suites in which check 0 (shifted) was a regression
};

Metric Histogram(const std::string& name, LogLinearHistogram hist) {
  Metric m;
  m.name = name;
  m.kind = MetricKind::kHistogram;
  m.unit = "ns";
  m.hist = std::move(hist);
  return m;
}

ScenarioResult Side(const Experiment& e, bool candidate, Draws& draws) {
  ScenarioResult scenario;
  scenario.name = "s";
  for (int r = 0; r < e.repetitions; ++r) {
    Repetition rep;
    rep.index = r;
    for (int c = 0; c < e.checks; ++c) {
      const std::string name = "m" + std::to_string(c);
      const double scale = candidate && c == 0 ? 1 + e.shift : 1.0;
      if (c == 0 && e.p99) {
        rep.metrics[name] = Histogram(name, draws.Latencies(e.samples_per_repetition, scale));
      } else {
        rep.metrics[name] =
            ScalarMetric(name, draws.Value(static_cast<Noise>(c % kNoiseKinds), 100 * scale, e.cv), "count");
      }
    }
    scenario.repetitions.push_back(std::move(rep));
  }
  for (int c = 0; c < e.checks; ++c) {
    CheckResult check;
    check.spec.metric = "m" + std::to_string(c);
    check.spec.statistic = c == 0 && e.p99 ? "p99" : "value";
    check.spec.max_regression_pct = e.threshold_pct;
    check.spec.name = check.spec.metric;
    scenario.checks.push_back(std::move(check));
  }
  return scenario;
}

// Counts a suite's verdicts: a false alarm when any unshifted check
// regressed, a detection when the shifted check 0 did.
void Tally(const Experiment& e, const std::vector<CheckResult>& checks, int& alarms, int& detections) {
  bool alarm = false;
  for (size_t c = 0; c < checks.size(); ++c) {
    EXPECT_NE(checks[c].verdict, Verdict::kError) << checks[c].message;
    const bool regression = checks[c].verdict == Verdict::kRegression;
    if (c == 0 && e.shift > 0)
      detections += regression;
    else
      alarm |= regression;
  }
  alarms += alarm;
}

// Evaluates one suite and counts it.
void Judge(const Experiment& e, ScenarioResult candidate, const ScenarioResult& baseline, int& alarms,
           int& detections) {
  RunResults run;
  run.scenarios.push_back(std::move(candidate));
  EvaluateChecks(run, {{"s", baseline}}, {});
  Tally(e, run.scenarios[0].checks, alarms, detections);
}

SimulatedOutcome Simulate(const Experiment& e) {
  Draws draws(e.seed);
  int alarms = 0, detections = 0;
  for (int s = 0; s < e.suites; ++s) {
    ScenarioResult candidate = Side(e, true, draws);
    Judge(e, std::move(candidate), Side(e, false, draws), alarms, detections);
  }
  return {static_cast<double>(alarms) / e.suites, static_cast<double>(detections) / e.suites};
}

// Adaptive repetitions {min, max} against a baseline recorded with `max`:
// the candidate grows one repetition at a time while NeedsMoreRepetitions
// says so (the runner's rule), then the run is judged.
struct AdaptiveOutcome {
  double false_alarm_rate = 0;
  double detection_rate = 0;
  double mean_repetitions = 0;  // candidate repetitions per suite
};

AdaptiveOutcome SimulateAdaptive(const Experiment& e, int min, int max) {
  Draws draws(e.seed);
  Experiment full = e;
  full.repetitions = max;
  int alarms = 0, detections = 0;
  double repetitions = 0;
  for (int s = 0; s < e.suites; ++s) {
    // Repetitions are independent, so drawing all of them up front is the
    // same as drawing each when the runner asks for it.
    ScenarioResult candidate = Side(full, true, draws);
    const ScenarioResult baseline = Side(full, false, draws);
    ScenarioResult so_far = candidate;
    so_far.adaptive = AdaptiveRepetitions{min, max, false};
    so_far.repetitions.resize(min);
    while (NeedsMoreRepetitions(so_far, &baseline, {}, {}, e.checks))
      so_far.repetitions.push_back(candidate.repetitions[so_far.repetitions.size()]);
    repetitions += static_cast<double>(so_far.repetitions.size());

    Judge(e, std::move(so_far), baseline, alarms, detections);
  }
  return {static_cast<double>(alarms) / e.suites, static_cast<double>(detections) / e.suites,
          repetitions / e.suites};
}

// A/A: every check of every suite is drawn twice from the same distribution.
TEST(VerdictSimulation, AaFamilyWiseFalseAlarmRateIsAtMostOnePercent) {
  for (double cv : {0.02, 0.10}) {
    Experiment e;
    e.cv = cv;
    e.seed = 11;
    const SimulatedOutcome o = Simulate(e);
    std::printf("A/A, 2000 suites x 20 checks, CV %.0f %%, 10+10 repetitions, T 2 %%: false alarm in %.2f %% of suites\n",
                100 * cv, 100 * o.false_alarm_rate);
    EXPECT_LE(o.false_alarm_rate, 0.01) << "CV " << cv;
  }
}

// A 5 % shift at CV 2 % is 2.5 standard deviations. Among 20 checks at a
// family-wise 1 %, the shifted check's one-sided p must be below 0.0005; with
// 10 + 10 repetitions the rank test gets there in about 85 % of suites (even
// the best test for this noise, below, in only about 90 %), with 14 + 14 in over 95 %.
TEST(VerdictSimulation, FivePercentMedianShiftAtTwoPercentCv) {
  for (int reps : {10, 14}) {
    Experiment e;
    e.shift = 0.05;
    e.repetitions = reps;
    e.seed = 12;
    const SimulatedOutcome o = Simulate(e);
    std::printf("A/B, 2000 suites, one check +5 %% at CV 2 %%, %d+%d repetitions, T 2 %%: caught in %.2f %%, "
                "false alarm (other 19 checks) in %.2f %%\n",
                reps, reps, 100 * o.detection_rate, 100 * o.false_alarm_rate);
    EXPECT_GE(o.detection_rate, reps >= 14 ? 0.95 : 0.80) << reps;
    EXPECT_LE(o.false_alarm_rate, 0.01) << reps;
  }
}

// Why "95 % of 5 % shifts at CV 2 % with 10 + 10 repetitions" is out of
// reach of any test that keeps the family-wise 1 % over 20 checks: check 0's
// noise is log-normal, for which the pooled t-test on the logs is the
// uniformly most powerful unbiased test when the spread is unknown. At the
// per-check level of Holm's first step (0.01 / 20), on the same kind of
// draws, it catches the shift in about 90 % of suites; only a test that knew
// the spread in advance (a z-test) would pass 95 %. perfgate's rank test
// trades a few points of that for validity under every noise kind here.
TEST(VerdictSimulation, NoTestWithTenRepetitionsPerSideReachesNinetyFivePercent) {
  const int n = 10, suites = 20000;
  const double cv = 0.02, shift = 0.05, alpha = 0.01 / 20;
  const double t_critical = stats::StudentTQuantile(1 - alpha, 2 * n - 2);
  const double z_critical = stats::NormalQuantile(1 - alpha);
  Draws draws(14);
  int t_caught = 0, z_caught = 0;
  for (int s = 0; s < suites; ++s) {
    double sum[2] = {0, 0}, sum_sq[2] = {0, 0};
    for (int side = 0; side < 2; ++side) {
      for (int r = 0; r < n; ++r) {
        const double log_value = std::log(draws.Value(Noise::kLogNormal, side == 1 ? 1 + shift : 1.0, cv));
        sum[side] += log_value;
        sum_sq[side] += log_value * log_value;
      }
    }
    const double mean_difference = (sum[1] - sum[0]) / n;
    double pooled = 0;
    for (int side = 0; side < 2; ++side) pooled += sum_sq[side] - sum[side] * sum[side] / n;
    pooled /= 2 * n - 2;
    t_caught += mean_difference / std::sqrt(pooled * 2.0 / n) > t_critical;
    z_caught += mean_difference / (cv * std::sqrt(2.0 / n)) > z_critical;
  }
  const double t_power = static_cast<double>(t_caught) / suites;
  const double z_power = static_cast<double>(z_caught) / suites;
  std::printf("one check +5 %% at CV 2 %%, 10+10 repetitions, one-sided level 0.0005: t-test on logs (spread "
              "unknown) %.2f %%, z-test (spread known) %.2f %%\n",
              100 * t_power, 100 * z_power);
  EXPECT_LT(t_power, 0.95);
  EXPECT_GT(t_power, 0.88);
  EXPECT_GT(z_power, 0.97);
}

TEST(VerdictSimulation, TenPercentShiftOfP99IsCaughtWithTenRepetitions) {
  Experiment e;
  e.suites = 500;  // each repetition draws 5,000 latencies
  e.shift = 0.10;
  e.p99 = true;
  e.threshold_pct = 3;
  e.seed = 13;
  const SimulatedOutcome o = Simulate(e);
  std::printf("A/B, 500 suites, p99 of 5,000 latencies per repetition +10 %%, 10+10 repetitions, T 3 %%: "
              "caught in %.2f %%\n",
              100 * o.detection_rate);
  EXPECT_GE(o.detection_rate, 0.90);
}

// Adaptive A/A: peeking at every look does not add false alarms (the error
// is spent over the looks), and most runs stop early because no check can
// still become a regression.
TEST(VerdictSimulation, AdaptiveAaKeepsTheFalseAlarmRateAndStopsEarly) {
  for (auto [min, max] : {std::pair{5, 10}, {8, 16}}) {
    for (double cv : {0.02, 0.10}) {
      Experiment e;
      e.suites = 1000;
      e.cv = cv;
      e.seed = 31;
      const AdaptiveOutcome o = SimulateAdaptive(e, min, max);
      std::printf("adaptive A/A, {min %d, max %d}, CV %.0f %%, T 2 %%: false alarm in %.2f %% of suites, "
                  "%.2f repetitions on average (%.0f %% of max)\n",
                  min, max, 100 * cv, 100 * o.false_alarm_rate, o.mean_repetitions, 100 * o.mean_repetitions / max);
      EXPECT_LE(o.false_alarm_rate, 0.01) << min << "-" << max << " CV " << cv;
      EXPECT_LE(o.mean_repetitions, 0.6 * max) << min << "-" << max << " CV " << cv;
    }
  }
}

// Adaptive A/B: a real 5 % shift keeps the run going, so detection is that of
// the maximum: {8, 16} catches it in over 95 % of suites with about 10
// candidate repetitions on average; {5, 10} about as often as a fixed 10.
TEST(VerdictSimulation, AdaptiveFivePercentShiftRunsOnAndIsCaught) {
  for (auto [min, max] : {std::pair{5, 10}, {8, 16}}) {
    Experiment e;
    e.suites = 1000;
    e.shift = 0.05;
    e.seed = 32;
    const AdaptiveOutcome o = SimulateAdaptive(e, min, max);
    std::printf("adaptive A/B, {min %d, max %d}, one check +5 %% at CV 2 %%, T 2 %%: caught in %.2f %%, "
                "false alarm in %.2f %%, %.2f repetitions on average\n",
                min, max, 100 * o.detection_rate, 100 * o.false_alarm_rate, o.mean_repetitions);
    EXPECT_GE(o.detection_rate, max >= 16 ? 0.95 : 0.75) << min << "-" << max;
    EXPECT_LE(o.false_alarm_rate, 0.01);
    if (max >= 16) {
      EXPECT_LE(o.mean_repetitions, 11);
    }
  }
}

// The OC table: detection of one shifted check among 20 (any noise kind is
// check 0's: log-normal), and the false-alarm rate of the other 19, per CV
// and repetitions per side, at threshold 2 %. 300 suites per cell.
TEST(VerdictSimulation, PrintsTheOperatingCharacteristicTable) {
  std::printf("\nOperating characteristic: T = 2 %%, 20 checks per suite (Holm), 300 suites per cell\n");
  std::printf("%-6s %-5s %12s %10s %10s %10s\n", "CV", "reps", "A/A alarm", "+5 %", "+10 %", "+20 %");
  double weakest_large_shift = 1;
  for (double cv : {0.01, 0.02, 0.05, 0.10}) {
    for (int reps : {5, 10, 20}) {
      double alarm = 0;
      std::vector<double> caught;
      for (double shift : {0.05, 0.10, 0.20}) {
        Experiment e;
        e.suites = 300;
        e.repetitions = reps;
        e.cv = cv;
        e.shift = shift;
        e.seed = 100 + static_cast<uint64_t>(reps * 1000 + cv * 1000 + shift * 100);
        const SimulatedOutcome o = Simulate(e);
        alarm = std::max(alarm, o.false_alarm_rate);
        caught.push_back(o.detection_rate);
      }
      std::printf("%4.0f %%  %4d %11.1f %% %8.1f %% %8.1f %% %8.1f %%\n", 100 * cv, reps, 100 * alarm, 100 * caught[0],
                  100 * caught[1], 100 * caught[2]);
      if (cv <= 0.02 && reps >= 10) weakest_large_shift = std::min(weakest_large_shift, caught[2]);
    }
  }
  // The table is evidence, not decoration: at low noise a 20 % shift is
  // always caught.
  EXPECT_GE(weakest_large_shift, 0.99);
}

// ---- interleaved runs on a shared host (perfgate ab) ------------------------

// What the host adds to an interleaved run: the two repetitions of a round
// run back to back and share the host's state of the moment, a factor that
// wanders from round to round (a random walk: thermal state, other tenants'
// load, the page cache); and a neighbour's burst slows a single repetition.
struct HostNoise {
  double drift_step = 0.03;       // sd of the log factor's step per round
  double burst_probability = 0.10;  // per repetition
  double burst_low = 0.2, burst_high = 0.6;  // the slowdown a burst adds
  // Retaking tainted rounds (run/host_load's rule): the share of bursts the
  // host-load measurement sees, and whether a seen one is measured again
  // within the runner's budget (run/schedule.h RetakeBudget: half the
  // rounds, at least 2; at most 2 retakes of one round).
  double burst_seen = 0;
  bool retake = false;
};

// Both sides of one interleaved run of `e.repetitions` rounds: check 0 of
// the candidate shifted by e.shift, every other check unchanged.
std::pair<ScenarioResult, ScenarioResult> InterleavedSides(const Experiment& e, const HostNoise& host, Draws& draws) {
  ScenarioResult sides[2] = {Side(e, false, draws), Side(e, true, draws)};
  double drift = 0;
  int budget = std::max(2, e.repetitions / 2);
  for (int r = 0; r < e.repetitions; ++r) {
    double factors[2];
    for (int attempt = 0;; ++attempt) {
      drift += host.drift_step * draws.Normal();
      bool seen = false;
      for (double& factor : factors) {
        factor = std::exp(drift);
        if (draws.Uniform() < host.burst_probability) {
          factor *= 1 + host.burst_low + (host.burst_high - host.burst_low) * draws.Uniform();
          if (host.retake && draws.Uniform() < host.burst_seen) seen = true;
        }
      }
      if (!host.retake || !seen || budget == 0 || attempt == 2) break;
      --budget;
    }
    for (int side = 0; side < 2; ++side) {
      for (auto& [name, metric] : sides[side].repetitions[r].metrics) metric.value *= factors[side];
    }
  }
  return {std::move(sides[1]), std::move(sides[0])};
}

struct ProcedureOutcome {
  double false_alarm_rate = 0;
  double detection_rate = 0;
  double confirmations = 0;  // share of suites that measured a confirmation round
};

enum class Procedure { kUnpaired, kPaired, kPairedConfirmed };

// `suites` interleaved runs judged by one procedure: the two sides as
// independent samples (the rank-sum test, as before pairing), the pairs
// (signed-rank), or the pairs with confirmation of flagged regressions in a
// fresh interleaved round (compare/confirm.h), as perfgate ab does.
ProcedureOutcome SimulateInterleaved(const Experiment& e, const HostNoise& host, Procedure procedure) {
  Draws draws(e.seed);
  int alarms = 0, detections = 0, confirmations = 0;
  for (int s = 0; s < e.suites; ++s) {
    auto [candidate, baseline] = InterleavedSides(e, host, draws);
    if (procedure == Procedure::kUnpaired) {
      for (Repetition& rep : baseline.repetitions) rep.index += 1000;  // no round in common
    }
    CompareOptions options;
    options.interleaved = true;
    if (procedure == Procedure::kPairedConfirmed) options.screen_alpha = kScreenAlpha;
    RunResults run;
    run.scenarios.push_back(std::move(candidate));
    EvaluateChecks(run, {{"s", baseline}}, options);
    if (procedure == Procedure::kPairedConfirmed && !ChecksToConfirm(run).empty()) {
      ++confirmations;
      auto [again, again_baseline] = InterleavedSides(e, host, draws);
      ApplyConfirmation(run, {{"s", again}}, {{"s", again_baseline}}, options, {});
    }
    Tally(e, run.scenarios[0].checks, alarms, detections);
  }
  return {static_cast<double>(alarms) / e.suites, static_cast<double>(detections) / e.suites,
          static_cast<double>(confirmations) / e.suites};
}

// What pairing and confirmation buy on a shared host: 4 checks (every noise
// kind), 16 interleaved pairs, CV 2 %, threshold 2 %, with a drift of 3 %
// per round, alone and with a bursty neighbour (3 % of repetitions +20-60 %).
// The paired, confirmed procedure keeps the family-wise 1 % in A/A runs under
// both; with drift it catches a 5 % shift in over 95 % of runs, where the
// unpaired test, which must count the drift as noise, catches under half.
// Bursts that hit one side of a pair still cost power (about 78 % here).
// Retaking the rounds whose burst the host-load measurement saw wins most of
// it back: with 80 % of bursts seen (the rest too short or too small to cross
// the taint bound), the full procedure of `perfgate ab` — pairs, tainted
// rounds retaken, confirmation — keeps 1 % and catches about 94 % with 16
// pairs, over 95 % with 24.
// A/A ([0]) and +5 % ([1]) runs of `procedure` with `pairs` rounds on `host`:
// 2,000 each, 4 checks, CV 2 %, T 2 %.
std::array<ProcedureOutcome, 2> AaAndFivePercent(const HostNoise& host, Procedure procedure, int pairs,
                                                 uint64_t seed) {
  std::array<ProcedureOutcome, 2> outcomes;
  for (double shift : {0.0, 0.05}) {
    Experiment e;
    e.suites = 2000;
    e.checks = 4;
    e.repetitions = pairs;
    e.shift = shift;
    e.seed = shift > 0 ? seed : seed + 1;
    outcomes[shift > 0] = SimulateInterleaved(e, host, procedure);
  }
  return outcomes;
}

TEST(VerdictSimulation, PairingAndConfirmationOnADriftingBurstyHost) {
  const char* names[] = {"unpaired (rank-sum)", "paired", "paired + confirmation",
                         "paired + confirmation + retakes (80 % of bursts seen)"};
  for (double bursts : {0.0, 0.03}) {
    std::array<ProcedureOutcome, 2> outcomes[4];
    for (int procedure = 0; procedure < 4; ++procedure) {
      HostNoise host;
      host.burst_probability = bursts;
      host.retake = procedure == 3;
      host.burst_seen = 0.8;
      outcomes[procedure] = AaAndFivePercent(host, static_cast<Procedure>(std::min(procedure, 2)), 16, 41);
      std::printf("interleaved, drift 3 %%/round, %.0f %% bursts of +20-60 %%, 4 checks, 16 pairs, CV 2 %%, T 2 %%, "
                  "%s: A/A false alarm %.2f %%, +5 %% caught %.2f %% (confirmation rounds in %.1f %% of A/A runs, "
                  "%.1f %% of A/B runs)\n",
                  100 * bursts, names[procedure], 100 * outcomes[procedure][0].false_alarm_rate,
                  100 * outcomes[procedure][1].detection_rate, 100 * outcomes[procedure][0].confirmations,
                  100 * outcomes[procedure][1].confirmations);
    }
    EXPECT_LE(outcomes[1][0].false_alarm_rate, 0.01) << "bursts " << bursts;
    EXPECT_LE(outcomes[2][0].false_alarm_rate, 0.01) << "bursts " << bursts;
    EXPECT_LE(outcomes[3][0].false_alarm_rate, 0.01) << "bursts " << bursts;
    EXPECT_GT(outcomes[2][1].detection_rate, outcomes[0][1].detection_rate + 0.3) << "bursts " << bursts;
    if (bursts == 0) {
      EXPECT_GE(outcomes[2][1].detection_rate, 0.95);
      EXPECT_GE(outcomes[3][1].detection_rate, 0.95);
      continue;
    }
    EXPECT_GE(outcomes[3][1].detection_rate, outcomes[2][1].detection_rate + 0.1);
    // The bursts the host-load measurement misses stay; more pairs outweigh them.
    HostNoise host;
    host.burst_probability = bursts;
    host.retake = true;
    host.burst_seen = 0.8;
    const std::array<ProcedureOutcome, 2> longer = AaAndFivePercent(host, Procedure::kPairedConfirmed, 24, 43);
    std::printf("interleaved, drift 3 %%/round, 3 %% bursts, 24 pairs, %s: A/A false alarm %.2f %%, +5 %% caught "
                "%.2f %%\n",
                names[3], 100 * longer[0].false_alarm_rate, 100 * longer[1].detection_rate);
    EXPECT_LE(longer[0].false_alarm_rate, 0.01);
    EXPECT_GE(longer[1].detection_rate, 0.95);
  }
}

// perfgate ab on a busy host: every repetition beside a constant neighbour,
// so the rounds are fair pairs (kept, not retaken) whose ratios vary about
// twice as much as on a quiet host. A fixed 7 pairs then cannot resolve a
// 5 % threshold; the runner makes such a scenario adaptive up to
// kBusyHostRoundsFactor times its pairs (metrics/results.h), first round
// and confirmation alike (run/schedule.h busy_rounds), growing while NeedsMoreRepetitions or
// ConfirmationNeedsMore say a check could still be decided.
struct BusyOutcome {
  ProcedureOutcome outcome;
  double mean_pairs = 0;  // first round and confirmation, per suite
};

// Grows an interleaved round of `min` pairs, drawn up to `max`, while `more` says so.
template <typename More>
std::pair<ScenarioResult, ScenarioResult> GrownRound(const Experiment& e, const HostNoise& host, Draws& draws, int min,
                                                     int max, More more) {
  Experiment full = e;
  full.repetitions = max;
  auto [candidate, baseline] = InterleavedSides(full, host, draws);
  ScenarioResult c = candidate, b = baseline;
  c.repetitions.resize(min);
  b.repetitions.resize(min);
  if (max > min) c.adaptive = b.adaptive = AdaptiveRepetitions{min, max, true, true};
  while (max > min && more(c, b) && c.repetitions.size() < static_cast<size_t>(max)) {
    c.repetitions.push_back(candidate.repetitions[c.repetitions.size()]);
    b.repetitions.push_back(baseline.repetitions[b.repetitions.size()]);
  }
  return {std::move(c), std::move(b)};
}

BusyOutcome SimulateBusyAb(const Experiment& e, const HostNoise& host, int max) {
  Draws draws(e.seed);
  int alarms = 0, detections = 0, confirmations = 0;
  double pairs = 0;
  CompareOptions options;
  options.interleaved = true;
  options.screen_alpha = kScreenAlpha;
  for (int s = 0; s < e.suites; ++s) {
    auto [candidate, baseline] =
        GrownRound(e, host, draws, e.repetitions, max, [&](const ScenarioResult& c, const ScenarioResult& b) {
          return NeedsMoreRepetitions(c, &b, {}, options, static_cast<size_t>(e.checks));
        });
    pairs += static_cast<double>(candidate.repetitions.size());
    RunResults run;
    run.scenarios.push_back(std::move(candidate));
    EvaluateChecks(run, {{"s", baseline}}, options);
    const auto flagged = ChecksToConfirm(run);
    if (!flagged.empty()) {
      ++confirmations;
      const std::vector<size_t>& checks = flagged.begin()->second;
      auto [again, again_baseline] =
          GrownRound(e, host, draws, e.repetitions, max, [&](const ScenarioResult& c, const ScenarioResult& b) {
            return ConfirmationNeedsMore(c, b, checks, {}, options, checks.size());
          });
      pairs += static_cast<double>(again.repetitions.size());
      ApplyConfirmation(run, {{"s", again}}, {{"s", again_baseline}}, options, {});
    }
    Tally(e, run.scenarios[0].checks, alarms, detections);
  }
  return {{static_cast<double>(alarms) / e.suites, static_cast<double>(detections) / e.suites,
           static_cast<double>(confirmations) / e.suites},
          pairs / e.suites};
}

// 4 checks (every noise kind), 7 pairs, threshold 5 %, CV 4 % and a drift of
// 3 % per round (7 pairs whose ratios vary by about 6 %, as the smoke
// suite's CPU time beside a one-CPU burner: docs/instruction-counts.md).
// The extension keeps the family-wise 1 % of A/A runs and catches a +10 %
// shift in at least 95 % of runs, where the fixed 7 pairs catch far fewer.
TEST(VerdictSimulation, BusyHostExtendsFixedPairsAndCatchesATenPercentShift) {
  HostNoise host;
  host.burst_probability = 0;
  BusyOutcome outcomes[2][2];  // [extended][shifted]
  for (int extended = 0; extended < 2; ++extended) {
    for (int shifted = 0; shifted < 2; ++shifted) {
      Experiment e;
      e.suites = 1000;
      e.checks = 4;
      e.repetitions = 7;
      e.cv = 0.04;
      e.threshold_pct = 5;
      e.shift = shifted ? 0.10 : 0;
      e.seed = 51 + static_cast<uint64_t>(shifted);
      outcomes[extended][shifted] = SimulateBusyAb(e, host, extended ? 7 * kBusyHostRoundsFactor : 7);
    }
    std::printf("busy host, drift 3 %%/round, CV 4 %%, 4 checks, T 5 %%, 7 pairs%s: A/A false alarm %.2f %% "
                "(%.1f pairs), +10 %% caught %.2f %% (%.1f pairs)\n",
                extended ? " extended up to 28" : " fixed", 100 * outcomes[extended][0].outcome.false_alarm_rate,
                outcomes[extended][0].mean_pairs, 100 * outcomes[extended][1].outcome.detection_rate,
                outcomes[extended][1].mean_pairs);
  }
  EXPECT_LE(outcomes[0][0].outcome.false_alarm_rate, 0.01);
  EXPECT_LE(outcomes[1][0].outcome.false_alarm_rate, 0.01);
  EXPECT_GE(outcomes[1][1].outcome.detection_rate, 0.95);
  EXPECT_GT(outcomes[1][1].outcome.detection_rate, outcomes[0][1].outcome.detection_rate + 0.2);
  // An A/A run buys few pairs: most of its checks pass at the first looks.
  EXPECT_LT(outcomes[1][0].mean_pairs, 14);
}

// A run against stored numbers on a host with moments: each measurement —
// the baseline's, the run's, a confirmation's — falls, with probability
// `moment`, into a moment of a slower host that no canary sees, and every
// value of it is 27 % higher (the smoke suite's A/A that failed CI: its
// three timings +27 %, the runs a second either side unchanged). Decided
// at once (1 %), or screened at 5 % with the flagged checks measured again
// in an independent measurement against the same baseline (as perfgate run
// does, compare/confirm.h). [0]: A/A, [1]: check 0 +20 %.
std::array<SimulatedOutcome, 2> StoredWithMoments(Experiment e, double moment, bool confirm) {
  std::array<SimulatedOutcome, 2> outcomes;
  for (int shifted = 0; shifted < 2; ++shifted) {
    e.shift = shifted ? 0.20 : 0;
    Draws draws(e.seed + static_cast<uint64_t>(shifted));
    auto measure = [&](bool candidate) {
      ScenarioResult side = Side(e, candidate, draws);
      if (draws.Uniform() < moment) {
        for (Repetition& rep : side.repetitions) {
          for (auto& [name, metric] : rep.metrics) metric.value *= 1.27;
        }
      }
      return side;
    };
    int alarms = 0, detections = 0;
    for (int s = 0; s < e.suites; ++s) {
      const ScenarioResult baseline = measure(false);
      CompareOptions options;
      if (confirm) options.screen_alpha = kScreenAlpha;
      RunResults run;
      run.scenarios.push_back(measure(true));
      EvaluateChecks(run, {{"s", baseline}}, options);
      if (confirm && !ChecksToConfirm(run).empty())
        ApplyConfirmation(run, {{"s", measure(true)}}, {{"s", baseline}}, options, {});
      Tally(e, run.scenarios[0].checks, alarms, detections);
    }
    outcomes[shifted] = {static_cast<double>(alarms) / e.suites, static_cast<double>(detections) / e.suites};
  }
  return outcomes;
}

// The smoke suite's shape: 8 checks, 7 repetitions a side, CV 4 %, T 10 %,
// a moment in 5 % of measurements. Decided at once, about one A/A run in
// twenty fails (the moment's); confirmed, a failure needs the run and its
// confirmation both in a moment, about 0.25 %. A real +20 % fails as often
// as before: it shows again (a baseline measured in a moment hides it from
// both procedures alike).
TEST(VerdictSimulation, StoredBaselineConfirmationOutlastsAMomentOfASlowerHost) {
  Experiment e;
  e.suites = 4000;
  e.checks = 8;
  e.repetitions = 7;
  e.cv = 0.04;
  e.threshold_pct = 10;
  e.seed = 71;
  const std::array<SimulatedOutcome, 2> at_once = StoredWithMoments(e, 0.05, false);
  const std::array<SimulatedOutcome, 2> confirmed = StoredWithMoments(e, 0.05, true);
  std::printf("stored baseline, moments of a +27 %% slower host in 5 %% of measurements, 8 checks, CV 4 %%, "
              "T 10 %%, 7+7: decided at once A/A %.2f %%, +20 %% caught %.2f %%; confirmed A/A %.2f %%, +20 %% "
              "caught %.2f %%\n",
              100 * at_once[0].false_alarm_rate, 100 * at_once[1].detection_rate, 100 * confirmed[0].false_alarm_rate,
              100 * confirmed[1].detection_rate);
  EXPECT_GE(at_once[0].false_alarm_rate, 0.03);
  EXPECT_LE(confirmed[0].false_alarm_rate, 0.01);
  EXPECT_GE(confirmed[1].detection_rate, 0.90);
  EXPECT_GE(confirmed[1].detection_rate, at_once[1].detection_rate - 0.02);
}

}  // namespace
}  // namespace perfgate
