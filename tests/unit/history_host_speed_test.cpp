// Nights on a slow host against the trends' change points and the nightly
// alerts (history/host_speed.h): the issue's acceptance, "30 nights of
// history with five nights on a capped host and one planted +10 % step:
// exactly one alert group, at the step", on histories stored as `history
// add` stores the smoke suite's runs, and the rules one by one.
//
// The nights are made like the smoke suite's (workloads/examples/smoke.json)
// on the project's 2-CPU machines: seven repetitions a night with the
// per-repetition spread measured there (docs/ci.md, "Nights on a slow
// host"), a night-to-night drift of the whole host, the host canary before
// every repetition. On the capped nights the host is 1.5 to 2x slower: the
// canary by that factor, each timing metric by its own, night by night
// different power of it (a wall time almost one to one, the CPU time hardly,
// the run-queue latency's tail far more than one to one), counts not at all.
// The step: smoke.loop_time +10 % from night 20 on (wall and CPU time with
// it, a little less), on a host of the usual speed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "harness/history_backends.h"
#include "history/alerts.h"
#include "history/history_db.h"
#include "history/host_speed.h"
#include "history/trend.h"
#include "metrics/metric.h"

namespace perfgate {
namespace {

constexpr int kNights = 30;
constexpr int kReps = 7;
constexpr int kStepNight = 20;
const std::set<int> kCappedNights = {8, 9, 10, 11, 12};
// The spread of a timing metric's repetitions: PERFGATE_TEST_TIME_SPREAD, else 3 %.
const double kTimeSpread = std::getenv("PERFGATE_TEST_TIME_SPREAD") ? std::atof(std::getenv("PERFGATE_TEST_TIME_SPREAD")) : 0.03;

std::string Commit(int night) { return "night-" + std::to_string(night); }

// How each timing metric of this history follows a slower host: a power of
// the host's slowdown, the workload's own, jittered night by night.
struct Sensitivity {
  double wall, loop, cpu, runq, memory, io;
};

// How the host is slower on its slow nights: capped (a CPU quota, a
// throttled guest: the canary slows too), or shared with a neighbour that
// the scheduler gives half the CPU (the short canary, run right after a
// wait, hardly slows: docs/ci.md; the workload waits behind the neighbour).
enum class SlowHost { kCapped, kNeighbour };

struct NightPlan {
  double host = 1;  // how much slower the host is than usual
  double step = 1;  // the code's slowdown of the loop
  Sensitivity powers{};
  SlowHost how = SlowHost::kCapped;
};

// One night of the smoke suite as results.json holds it.
RunResults SmokeNight(int night, const NightPlan& plan, std::mt19937_64& rng) {
  std::normal_distribution<double> unit(0, 1);
  std::uniform_real_distribution<double> uniform(0, 1);
  const auto noisy = [&](double cv) { return std::exp(cv * unit(rng)); };
  // The host's own drift from night to night (clock, cache, neighbours), felt by everything timed.
  const double drift = noisy(0.008);
  const double host = plan.host;
  const auto jitter = [&](double power) { return power + 0.05 * unit(rng); };
  const double wall_power = jitter(plan.powers.wall), loop_power = jitter(plan.powers.loop);
  const double cpu_power = jitter(plan.powers.cpu), runq_power = jitter(plan.powers.runq);
  const double memory_power = jitter(plan.powers.memory), io_power = jitter(plan.powers.io);

  RunResults r;
  r.suite = "smoke";
  char day[32];
  std::snprintf(day, sizeof day, "2026-11-%02dT02:17:00Z", night + 1);
  r.environment.timestamp = day;
  r.environment.hostname = "runner";
  r.environment.kernel = "6.1.0-18-amd64";
  r.environment.cpu_model = "AMD EPYC 7B13";
  r.environment.cpu_count = 2;
  ScenarioResult s;
  s.name = "syscall-alloc-sleep";
  s.workload_kind = "command";
  for (int i = 0; i < kReps; ++i) {
    Repetition rep;
    rep.index = i;
    // The medians and spreads of the smoke suite's repetitions on a 2-CPU
    // runner (docs/ci.md): the loop is most of the wall and CPU time.
    const double loop = 0.111 * plan.step * drift * std::pow(host, loop_power) * noisy(kTimeSpread);
    const double wall = (0.111 * (plan.step - 1) + 0.1165 * drift * std::pow(host, wall_power)) * noisy(kTimeSpread);
    const double cpu = (0.111 * (plan.step - 1) * 0.95 + 0.105 * drift * std::pow(host, cpu_power)) * noisy(kTimeSpread);
    rep.metrics["workload.wall_time"] = ScalarMetric("workload.wall_time", wall, "s");
    rep.metrics["workload.cpu_time"] = ScalarMetric("workload.cpu_time", cpu, "s");
    rep.metrics["smoke.loop_time"] = ScalarMetric("smoke.loop_time", loop, "s");
    Metric syscalls = CounterMetric("syscalls.count", "count", 10875 + std::round(8 * unit(rng)), wall);
    syscalls.ops = 600;
    rep.metrics["syscalls.count"] = syscalls;
    Metric pages = CounterMetric("mm.page_alloc", "pages", 39135 + std::round(580 * unit(rng)), wall);
    pages.ops = 600;
    rep.metrics["mm.page_alloc"] = pages;
    LogLinearHistogram runq;
    // The run-queue latency's tail moves by tens of per cent from one repetition to the next.
    const double runq_scale = drift * std::pow(host, runq_power) * noisy(0.4);
    for (int k = 0; k < 620; ++k)
      runq.Record(static_cast<int64_t>(300 * runq_scale * std::exp(0.9 * unit(rng))));
    rep.metrics["sched.runq_latency"] = HistogramMetric("sched.runq_latency", "ns", runq, wall);
    // Now and then a canary is preempted for a while, several times its time.
    const auto preempted = [&] { return uniform(rng) < 0.03 ? 2 + 4 * uniform(rng) : 1.0; };
    const double canary_host = plan.how == SlowHost::kCapped ? host : 1.0;
    const double canary_cpu = 0.00173 * drift * canary_host * noisy(0.02) * preempted();
    const double canary_memory = 0.64 * drift * std::pow(canary_host, memory_power) * noisy(0.12) * preempted();
    const double canary_io = 0.0001 * std::pow(canary_host, io_power) * noisy(0.14) * preempted();
    // Behind a neighbour the workload waits for the share of its wall time the neighbour took.
    const double waited = plan.how == SlowHost::kNeighbour ? wall * (1 - 1 / std::pow(host, wall_power)) : 0.0;
    rep.metrics[kHostRunqWaitBehindOthers] =
        ScalarMetric(kHostRunqWaitBehindOthers, (0.0003 + waited) * noisy(0.1), "s", Better::kNone);
    rep.metrics[kHostCanaryCpu] = ScalarMetric(kHostCanaryCpu, canary_cpu, "s", Better::kNone);
    rep.metrics[kHostCanaryMemory] = ScalarMetric(kHostCanaryMemory, canary_memory, "s", Better::kNone);
    rep.metrics[kHostCanaryIo] = ScalarMetric(kHostCanaryIo, canary_io, "s", Better::kNone);
    rep.metrics[kHostCanaryElapsed] = ScalarMetric(kHostCanaryElapsed, 0.001, "s", Better::kNone);
    s.repetitions.push_back(rep);
  }
  for (const char* metric : {"workload.wall_time", "workload.cpu_time", "smoke.loop_time"}) {
    CheckResult c;
    c.spec.name = metric;
    c.spec.metric = metric;
    c.statistic = "value";
    c.verdict = Verdict::kPass;
    s.checks.push_back(c);
  }
  r.scenarios.push_back(s);
  return r;
}

// The nightly over 30 nights: each night's run added to `db` as `history
// add` stores it, then the trend of the history so far with its alerts
// recorded, as `perfgate trend` does after every night; the alert groups the
// history holds at the end. `canaries`: judged with the host canaries (else
// as perfgate did before them).
std::vector<AlertGroup> Nightly(HistoryDb& db, uint64_t seed, bool capped = true, bool step = true,
                                bool canaries = true, SlowHost how = SlowHost::kCapped) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::normal_distribution<double> unit(0, 1);
  // The cap of this history's capped nights, and how its workload follows it.
  const double cap = 1.5 + 0.5 * uniform(rng);
  const Sensitivity powers{.wall = 0.75 + 0.25 * uniform(rng),
                           .loop = 0.85 + 0.2 * uniform(rng),
                           .cpu = 0.1 * uniform(rng),
                           .runq = 3 + 2 * uniform(rng),
                           .memory = 0.6 + 0.3 * uniform(rng),
                           .io = 0.2 + 0.3 * uniform(rng)};
  const SeriesFilter main{"main", DefaultTrendStatistics(), ""};
  for (int night = 0; night < kNights; ++night) {
    NightPlan plan{.powers = powers, .how = how};
    if (capped && kCappedNights.count(night)) plan.host = cap * std::exp(0.04 * unit(rng));
    if (step && night >= kStepNight) plan.step = 1.10;
    EXPECT_TRUE(db.AddRun(SmokeNight(night, plan, rng), {Commit(night), "main"}));
    const std::vector<TrendSeries> trends = canaries ? AnalyzeHistory(db, main, {}) : AnalyzeTrends(db.Series(main), {});
    db.RecordAlerts(GroupChangePoints(trends, "main"));
  }
  return db.Alerts("smoke");
}

std::string Describe(const std::vector<AlertGroup>& groups) {
  std::string text;
  for (const AlertGroup& g : groups) {
    text += g.commit_before + ".." + g.commit_after + ":";
    for (const AlertMetric& m : g.metrics) text += " " + m.metric + "." + m.statistic;
    text += "\n";
  }
  return text;
}

// Whether a group's range touches the capped nights: begins or ends on one.
bool AtTheCappedNights(const AlertGroup& g) {
  for (int night = *kCappedNights.begin(); night <= *kCappedNights.rbegin() + 1; ++night)
    if (g.commit_after == Commit(night)) return true;
  return false;
}

bool AtTheStep(const AlertGroup& g) {
  return g.commit_before == Commit(kStepNight - 1) && g.commit_after == Commit(kStepNight);
}

class NightsOnASlowHost : public ::testing::TestWithParam<testing::HistoryBackend> {
 protected:
  void SetUp() override { PERFGATE_REQUIRE_HISTORY_BACKEND(GetParam()); }
};
INSTANTIATE_TEST_SUITE_P(Backends, NightsOnASlowHost,
                         ::testing::Values(testing::HistoryBackend::kSqlite, testing::HistoryBackend::kPostgres),
                         testing::BackendName);

// The acceptance, through the history as the nightly adds to it and `perfgate trend` reads and records it.
TEST_P(NightsOnASlowHost, ThirtyNightsFiveCappedOneStepMakeExactlyOneAlertGroupAtTheStep) {
  testing::TestHistory history(GetParam());
  HistoryDb db = HistoryDb::Open(history.location());
  const std::vector<AlertGroup> alerts = Nightly(db, 1);
  ASSERT_EQ(alerts.size(), 1u) << Describe(alerts);
  EXPECT_TRUE(AtTheStep(alerts[0])) << Describe(alerts);
  // The group keeps the series that moved when it was first found; the
  // planted one, smoke.loop_time, has its change point there by the last night.
  bool loop = false;
  for (const TrendSeries& t : AnalyzeHistory(db, {"main", {"value"}, ""}, {})) {
    if (t.series.metric != "smoke.loop_time") continue;
    ASSERT_EQ(t.change_points.size(), 1u);
    EXPECT_EQ(t.change_points[0].index, static_cast<size_t>(kStepNight));
    EXPECT_EQ(t.change_points[0].before(), static_cast<size_t>(kStepNight - 1));
    EXPECT_TRUE(IsRegression(t, t.change_points[0]));
    EXPECT_NEAR(t.change_points[0].change_pct(), 10, 3);
    loop = true;
  }
  EXPECT_TRUE(loop);
  // The timing series saw every capped night as such; the canary series make no change point.
  for (const TrendSeries& t : AnalyzeHistory(db, {"main", DefaultTrendStatistics(), ""}, {})) {
    if (IsHostSeries(t.series)) {
      EXPECT_TRUE(t.change_points.empty()) << t.series.metric;
    } else if (t.series.unit == "s") {
      for (int night : kCappedNights) EXPECT_NE(t.host.night[night], HostNight::kNormal) << t.series.metric;
    }
  }
}

// Five nights beside a neighbour on the CPU, which the canary hardly sees:
// the workload's waits behind other processes say it.
TEST_P(NightsOnASlowHost, FiveNightsBesideANeighbourTheCanaryMissesMakeNoAlertEither) {
  testing::TestHistory history(GetParam());
  HistoryDb db = HistoryDb::Open(history.location());
  const std::vector<AlertGroup> alerts = Nightly(db, 1, true, true, true, SlowHost::kNeighbour);
  ASSERT_EQ(alerts.size(), 1u) << Describe(alerts);
  EXPECT_TRUE(AtTheStep(alerts[0])) << Describe(alerts);
  for (const TrendSeries& t : AnalyzeHistory(db, {"main", {"value"}, ""}, {})) {
    if (t.series.metric != "workload.wall_time") continue;
    for (int night : kCappedNights) EXPECT_EQ(t.host.part[night], kHostRunqWaitBehindOthers) << night;
  }
}

// The same nights judged without the canaries, as perfgate did before them:
// the capped nights are alerts of their own. The test above can fail.
TEST(NightsOnASlowHostWithoutCanaries, TheCappedNightsAreAlertsOfTheirOwn) {
  testing::TestHistory history(testing::HistoryBackend::kSqlite);
  HistoryDb db = HistoryDb::Open(history.location());
  const std::vector<AlertGroup> alerts = Nightly(db, 1, true, true, false);
  EXPECT_GT(alerts.size(), 1u) << Describe(alerts);
  EXPECT_TRUE(std::any_of(alerts.begin(), alerts.end(), AtTheCappedNights)) << Describe(alerts);
}

// Not one lucky draw: many histories, each with its own noise, cap and
// sensitivities. No alert ever falls on the capped nights; each history has
// its group at the step. A spurious change point of the noise alone
// (E-divisive's own rate, docs/ci.md) may add one elsewhere now and then.
TEST(NightsOnASlowHostSeeds, NoHistoryAlertsOnTheCappedNightsAndEachAlertsAtTheStep) {
  constexpr int kSeeds = 10;
  int exactly_one = 0, quiet = 0, unadjusted_capped = 0;
  for (int seed = 100; seed < 100 + kSeeds; ++seed) {
    for (bool step : {true, false}) {
      testing::TestHistory history(testing::HistoryBackend::kSqlite);
      HistoryDb db = HistoryDb::Open(history.location());
      const std::vector<AlertGroup> groups = Nightly(db, static_cast<uint64_t>(seed), true, step);
      for (const AlertGroup& g : groups) EXPECT_FALSE(AtTheCappedNights(g)) << "seed " << seed << ":\n" << Describe(groups);
      const auto at_step = std::count_if(groups.begin(), groups.end(), AtTheStep);
      if (step) {
        EXPECT_EQ(at_step, 1) << "seed " << seed << ":\n" << Describe(groups);
        exactly_one += groups.size() == 1 && at_step == 1;
      } else {
        quiet += groups.empty();
      }
    }
    testing::TestHistory history(testing::HistoryBackend::kSqlite);
    HistoryDb db = HistoryDb::Open(history.location());
    const std::vector<AlertGroup> unadjusted = Nightly(db, static_cast<uint64_t>(seed), true, true, false);
    unadjusted_capped += std::any_of(unadjusted.begin(), unadjusted.end(), AtTheCappedNights);
  }
  std::printf("%d of %d histories: exactly one alert group, at the step; %d of %d without the step: none; "
              "judged without the canaries, %d of %d alerted on the capped nights\n",
              exactly_one, kSeeds, quiet, kSeeds, unadjusted_capped, kSeeds);
  EXPECT_GE(exactly_one, kSeeds - 1);
  EXPECT_GE(quiet, kSeeds - 1);
  EXPECT_GE(unadjusted_capped, kSeeds - 1);
}

// ---- the rules one by one, on series made by hand --------------------------

HistorySeries Series(const std::string& metric, const std::string& unit, const std::vector<double>& medians) {
  HistorySeries s;
  s.suite = "smoke";
  s.scenario = "scenario";
  s.metric = metric;
  s.statistic = "value";
  s.unit = unit;
  for (size_t i = 0; i < medians.size(); ++i)
    s.points.push_back({static_cast<int64_t>(i + 1), Commit(static_cast<int>(i)), "main", "t", {medians[i]}});
  return s;
}

HostSpeeds Canaries(const std::vector<double>& cpu) {
  return HostSpeeds::FromSeries({Series(kHostCanaryCpu, "s", cpu)});
}

std::vector<double> Wiggle(size_t n, double level, double amplitude) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(level * (1 + amplitude * static_cast<double>(static_cast<int>(i * 7 % 5) - 2)));
  return v;
}

TEST(HostAdjustment, WithoutCanariesEveryNightIsNormalAndComparedAsMeasured) {
  const std::vector<double> v = Wiggle(20, 1.0, 0.002);
  const HostAdjustment a = AdjustForHost(Series("workload.wall_time", "s", v), v, {});
  EXPECT_EQ(a.off_nights(), 0u);
  EXPECT_EQ(a.compared, v);
}

TEST(HostAdjustment, AHostTwiceAsSlowIsDeflatedByTheFittedElasticity) {
  std::vector<double> canary = Wiggle(20, 1.0, 0.002), wall = Wiggle(20, 1.0, 0.002);
  for (size_t i : {5u, 6u, 7u, 12u}) {
    canary[i] *= 2;
    wall[i] *= std::pow(2.0, 0.8);  // a wall time with sleeps in it follows the host less than one to one
  }
  const HostAdjustment a = AdjustForHost(Series("workload.wall_time", "s", wall), wall, Canaries(canary));
  EXPECT_EQ(a.off_nights(), 4u);
  EXPECT_TRUE(a.fitted);
  EXPECT_NEAR(a.elasticity, 0.8, 0.02);
  for (size_t i : {5u, 6u, 7u, 12u}) {
    EXPECT_EQ(a.night[i], HostNight::kDeflated);
    EXPECT_NEAR(a.compared[i], 1.0, 0.01);
    EXPECT_NEAR(a.factor[i], 2.0, 0.02);
    EXPECT_EQ(a.part[i], kHostCanaryCpu);
  }
  EXPECT_EQ(a.compared[4], wall[4]);
}

TEST(HostAdjustment, ANightTheDeflationDoesNotLineUpIsLeftOut) {
  std::vector<double> canary = Wiggle(20, 1.0, 0.002), wall = Wiggle(20, 1.0, 0.002);
  const double powers[] = {1.0, 1.0, 1.0, 1.6};
  const size_t nights[] = {5, 6, 7, 12};
  for (size_t k = 0; k < 4; ++k) {
    canary[nights[k]] *= 1.8;
    wall[nights[k]] *= std::pow(1.8, powers[k]);
  }
  const HostAdjustment a = AdjustForHost(Series("workload.wall_time", "s", wall), wall, Canaries(canary));
  EXPECT_NEAR(a.elasticity, 1.0, 0.02);
  EXPECT_EQ(a.night[5], HostNight::kDeflated);
  EXPECT_EQ(a.night[12], HostNight::kLeftOut);
  EXPECT_TRUE(std::isnan(a.compared[12]));
}

TEST(HostAdjustment, ACountThatTheHostDoesNotMoveKeepsItsValues) {
  std::vector<double> canary = Wiggle(20, 1.0, 0.002), count(20, 21.0);
  for (size_t i : {3u, 4u, 5u}) canary[i] *= 1.7;
  HistorySeries s = Series("syscalls.count", "count/op", count);
  s.statistic = "per_op";
  const HostAdjustment a = AdjustForHost(s, count, Canaries(canary));
  EXPECT_EQ(a.off_nights(), 3u);
  EXPECT_NEAR(a.elasticity, 0, 1e-9);
  for (size_t i : {3u, 4u, 5u}) EXPECT_EQ(a.compared[i], 21.0);
}

TEST(HostAdjustment, ASizeStepOnAnOffNightIsTheCodesAndKeepsItsRange) {
  // The nightly alerts' test made this: a real night (the canary as this
  // host measured it) among nights copied from another, its step in a size.
  std::vector<double> canary = Wiggle(30, 1.0, 0.002), size = Wiggle(30, 12000, 0.001);
  canary[10] *= 1.3;
  for (size_t i = 10; i < 30; ++i) size[i] *= 1.2;
  const std::vector<TrendSeries> trends = AnalyzeTrends({Series("app.output_size", "bytes", size)}, {}, Canaries(canary));
  EXPECT_EQ(trends[0].host.night[10], HostNight::kDeflated);
  EXPECT_EQ(trends[0].host.compared[10], size[10]);
  ASSERT_EQ(trends[0].change_points.size(), 1u);
  EXPECT_EQ(trends[0].change_points[0].index, 10u);
  EXPECT_EQ(trends[0].change_points[0].before(), 9u);
}

TEST(HostAdjustment, FewOffNightsUseTheUnitsNominalElasticity) {
  EXPECT_EQ(NominalElasticity("s"), 1);
  EXPECT_EQ(NominalElasticity("ns/op"), 1);
  EXPECT_EQ(NominalElasticity("count/s"), -1);
  EXPECT_EQ(NominalElasticity("ns/s"), 0);  // a share of the time: the host lengthens both
  EXPECT_EQ(NominalElasticity("count/op"), 0);
  EXPECT_EQ(NominalElasticity("bytes"), 0);
  std::vector<double> canary = Wiggle(20, 1.0, 0.002), rate = Wiggle(20, 1000.0, 0.002);
  canary[9] *= 1.5;
  rate[9] /= 1.5;
  HistorySeries s = Series("mm.page_alloc", "pages/s", rate);
  s.statistic = "rate";
  const HostAdjustment a = AdjustForHost(s, rate, Canaries(canary));
  EXPECT_FALSE(a.fitted);
  EXPECT_EQ(a.elasticity, -1);
  EXPECT_EQ(a.night[9], HostNight::kDeflated);
  EXPECT_NEAR(a.compared[9], 1000.0, 10);
}

TEST(HostAdjustment, TheCanarysOwnNoiseMakesNoNightOff) {
  // 3 % of night-to-night spread in the canary: 4 robust SDs are 12 %.
  std::vector<double> canary, wall = Wiggle(40, 1.0, 0.002);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 0.03);
  for (int i = 0; i < 40; ++i) canary.push_back(std::exp(noise(rng)));
  const HostAdjustment a = AdjustForHost(Series("workload.wall_time", "s", wall), wall, Canaries(canary));
  EXPECT_EQ(a.off_nights(), 0u);
}

TEST(HostAdjustment, TheWorkloadsWaitsBehindOtherProcessesAreAHostFactor) {
  // As measured beside a CPU burner pinned to the workload's CPU: the wall
  // time twice as long, half of it waiting behind the burner, the canary as usual.
  std::vector<double> wall = Wiggle(20, 0.075, 0.002), wait(20, 0.0003), canary = Wiggle(20, 1.0, 0.002);
  for (size_t i : {6u, 7u, 8u}) {
    wall[i] *= 2;
    wait[i] = wall[i] / 2;
  }
  const HostSpeeds speeds = HostSpeeds::FromSeries(
      {Series("workload.wall_time", "s", wall), Series(kHostRunqWaitBehindOthers, "s", wait),
       Series(kHostCanaryCpu, "s", canary)});
  const HostAdjustment a = AdjustForHost(Series("workload.wall_time", "s", wall), wall, speeds);
  EXPECT_EQ(a.off_nights(), 3u);
  for (size_t i : {6u, 7u, 8u}) {
    EXPECT_EQ(a.part[i], kHostRunqWaitBehindOthers);
    EXPECT_NEAR(a.factor[i], 2.0, 0.01);
    EXPECT_EQ(a.night[i], HostNight::kDeflated);
  }
}

TEST(HostAdjustment, HostSeriesAreNeverAdjustedAndGetNoChangePoints) {
  std::vector<double> canary(30, 1.0);
  for (size_t i = 15; i < 30; ++i) canary[i] = 2.0;
  HistorySeries s = Series(kHostCanaryCpu, "s", canary);
  EXPECT_TRUE(IsHostSeries(s));
  EXPECT_EQ(AdjustForHost(s, canary, Canaries(canary)).off_nights(), 0u);
  const std::vector<TrendSeries> trends = AnalyzeTrends({s}, {}, Canaries(canary));
  EXPECT_TRUE(trends[0].change_points.empty());
}

TEST(HostAdjustment, AChangePointAfterLeftOutNightsSpansThemInItsRange) {
  // Nights 10 and 11 on a slow host that the series does not follow as a
  // time would (left out); a real step at night 11 shows from night 12 on.
  std::vector<double> canary = Wiggle(30, 1.0, 0.002), wall = Wiggle(30, 1.0, 0.002);
  canary[10] *= 1.8;
  canary[11] *= 1.8;
  wall[10] *= 3.0;
  for (size_t i = 11; i < 30; ++i) wall[i] *= 1.2;
  const std::vector<TrendSeries> trends = AnalyzeTrends({Series("workload.wall_time", "s", wall)}, {}, Canaries(canary));
  EXPECT_EQ(trends[0].host.night[10], HostNight::kLeftOut);
  EXPECT_EQ(trends[0].host.night[11], HostNight::kLeftOut);
  ASSERT_EQ(trends[0].change_points.size(), 1u);
  const stats::ChangePoint& c = trends[0].change_points[0];
  EXPECT_EQ(c.index, 12u);
  EXPECT_EQ(c.before(), 9u);
  const std::vector<AlertGroup> groups = GroupChangePoints(trends, "main");
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].commit_before, Commit(9));
  EXPECT_EQ(groups[0].commit_after, Commit(12));
}

}  // namespace
}  // namespace perfgate
