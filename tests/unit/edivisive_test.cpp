// Change-point detection for the trend dashboard: Student's t CDF, Welch's
// test, the energy statistic, and E-divisive finding planted steps at their
// index in noisy synthetic series (fixed seeds) without inventing others.
#include "stats/edivisive.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "stats/welch_t_test.h"

namespace perfgate::stats {
namespace {

TEST(StudentTCdf, MatchesClosedFormsForOneAndTwoDegreesOfFreedom) {
  for (double t : {-30.0, -3.0, -1.0, -0.2, 0.0, 0.5, 2.0, 12.0}) {
    EXPECT_NEAR(StudentTCdf(t, 1), 0.5 + std::atan(t) / M_PI, 1e-12) << t;
    EXPECT_NEAR(StudentTCdf(t, 2), 0.5 + t / (2 * std::sqrt(2 + t * t)), 1e-12) << t;
  }
}

TEST(StudentTCdf, ApproachesTheNormalAndHasKnownQuantiles) {
  EXPECT_NEAR(StudentTCdf(1.959964, 1e7), 0.975, 1e-6);
  EXPECT_NEAR(StudentTCdf(2.228139, 10), 0.975, 1e-6);  // t table, 10 dof
  EXPECT_NEAR(StudentTCdf(3.169273, 10), 0.995, 1e-6);
  EXPECT_EQ(StudentTCdf(INFINITY, 3), 1);
}

TEST(WelchTTest, KnownExample) {
  // Means 3 and 5, variances 2.5 each: t = 2, dof = 8, two-sided p = 0.0805.
  WelchResult r = WelchTTest({1, 2, 3, 4, 5}, {3, 4, 5, 6, 7});
  EXPECT_DOUBLE_EQ(r.t, 2);
  EXPECT_DOUBLE_EQ(r.dof, 8);
  EXPECT_NEAR(r.p_value, 0.080516, 1e-5);
}

TEST(WelchTTest, DegenerateSamples) {
  EXPECT_EQ(WelchTTest({1}, {2, 3}).p_value, 1);
  EXPECT_EQ(WelchTTest({1, 1}, {1, 1}).p_value, 1);
  EXPECT_EQ(WelchTTest({1, 1}, {2, 2}).p_value, 0);
}

TEST(EnergyStatistic, ZeroWithoutDifferenceAndLargestAtTheStep) {
  std::vector<double> flat(10, 4.0);
  EXPECT_EQ(EnergyStatistic(flat, 0, 5, 10), 0);
  std::vector<double> step = {1, 1, 1, 1, 1, 1, 5, 5, 5, 5};
  EXPECT_GT(EnergyStatistic(step, 0, 6, 10), EnergyStatistic(step, 0, 5, 10));
  EXPECT_GT(EnergyStatistic(step, 0, 6, 10), EnergyStatistic(step, 0, 7, 10));
  EXPECT_EQ(BestSplit(step, 0, 10, 2), 6u);
}

TEST(BestSplit, TheIncrementalScanAgreesWithTheEnergyOfEverySplit) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 1);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> values;
    for (int i = 0; i < 40; ++i) values.push_back(noise(rng) + (i >= 10 + trial ? 0.8 : 0));
    size_t lo = trial % 3, hi = values.size() - trial % 4, best = hi;
    double best_energy = 0;
    for (size_t tau = lo + 4; tau + 4 <= hi; ++tau) {
      double e = EnergyStatistic(values, lo, tau, hi);
      if (e > best_energy) {
        best_energy = e;
        best = tau;
      }
    }
    EXPECT_EQ(BestSplit(values, lo, hi, 4), best) << "trial " << trial;
  }
}

// `length` values around 100 with relative noise `cv`, multiplied by
// `factor` from each step's index on.
std::vector<double> Series(size_t length, double cv, const std::vector<std::pair<size_t, double>>& steps,
                           unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, cv);
  std::vector<double> out;
  double level = 100;
  for (size_t i = 0; i < length; ++i) {
    for (const auto& [index, factor] : steps) {
      if (i == index) level *= factor;
    }
    out.push_back(level * (1 + noise(rng)));
  }
  return out;
}

std::vector<size_t> Indices(const std::vector<ChangePoint>& points) {
  std::vector<size_t> out;
  for (const auto& p : points) out.push_back(p.index);
  return out;
}

TEST(FindChangePoints, FindsPlantedStepsAtTheirIndexAtSeveralNoiseLevels) {
  for (double cv : {0.002, 0.005, 0.01}) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
      // +10 % at 20 (a regression), -7 % at 45 (a partial fix), in 70 commits.
      std::vector<double> values = Series(70, cv, {{20, 1.10}, {45, 0.93}}, seed);
      std::vector<ChangePoint> found = FindChangePoints(values);
      ASSERT_EQ(Indices(found), (std::vector<size_t>{20, 45})) << "cv " << cv << " seed " << seed;
      EXPECT_NEAR(found[0].change_pct(), 10, 3 * cv * 100) << "cv " << cv << " seed " << seed;
      EXPECT_NEAR(found[1].change_pct(), -7, 3 * cv * 100) << "cv " << cv << " seed " << seed;
      EXPECT_LT(found[0].p_value, 0.001);
    }
  }
}

TEST(FindChangePoints, FindsASmallStepOfFourNoiseWidthsMostly) {
  int exact = 0, extra = 0;
  for (unsigned seed = 1; seed <= 200; ++seed) {
    std::vector<size_t> found = Indices(FindChangePoints(Series(60, 0.01, {{30, 1.04}}, seed)));
    exact += found == std::vector<size_t>{30};
    extra += found.size() > 1;
  }
  // Measured: 94 % at the exact index; the rest one off or not significant.
  EXPECT_GE(exact, 180) << "of 200";
  EXPECT_LE(extra, 2) << "of 200";
}

TEST(FindChangePoints, FindsARecentStepSevenRunsAfterIt) {
  int exact = 0;
  for (unsigned seed = 1; seed <= 100; ++seed) {
    exact += Indices(FindChangePoints(Series(40, 0.01, {{33, 1.10}}, seed))) == std::vector<size_t>{33};
  }
  EXPECT_GE(exact, 95) << "of 100";
}

TEST(FindChangePoints, ShortOrConstantSeriesHaveNone) {
  EXPECT_TRUE(FindChangePoints({}).empty());
  EXPECT_TRUE(FindChangePoints({1, 2, 3, 4, 5}).empty());
  EXPECT_TRUE(FindChangePoints(std::vector<double>(30, 7.0)).empty());
}

TEST(FindChangePoints, AnExactStepInANoiselessSeriesIsFound) {
  std::vector<double> values(12, 1.0);
  for (size_t i = 6; i < values.size(); ++i) values[i] = 2.0;
  std::vector<ChangePoint> found = FindChangePoints(values);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].index, 6u);
  EXPECT_DOUBLE_EQ(found[0].change_pct(), 100);
}

// The operating characteristic of the change-point search that
// stats/edivisive.h and docs/ci.md quote: for each p threshold, the share of
// pure-noise series given a spurious change point and the share of series
// whose one step is found at its exact index (2,000 series per cell, 1 %
// noise, fixed seeds). Heavy-tailed noise is Student's t with 3 degrees of
// freedom, scaled to the same standard deviation.
double SpuriousRate(size_t length, double p, bool heavy_tail) {
  int spurious = 0;
  for (unsigned seed = 1; seed <= 2000; ++seed) {
    std::vector<double> values = Series(length, 0.01, {}, 50000 + seed);
    if (heavy_tail) {
      std::mt19937_64 rng(90000 + seed);
      std::student_t_distribution<double> t3(3);
      for (double& v : values) v = 100 * (1 + 0.01 * t3(rng) / std::sqrt(3.0));
    }
    spurious += !FindChangePoints(values, {.max_p_value = p, .min_segment = 5}).empty();
  }
  return 100.0 * spurious / 2000;
}

double FoundRate(size_t length, size_t step, double factor, double p) {
  int found = 0;
  for (unsigned seed = 1; seed <= 2000; ++seed) {
    std::vector<double> values = Series(length, 0.01, {{step, factor}}, seed);
    found += Indices(FindChangePoints(values, {.max_p_value = p, .min_segment = 5})) == std::vector<size_t>{step};
  }
  return 100.0 * found / 2000;
}

TEST(ChangePointRates, DefaultsKeepSpuriousChangePointsRareAndFindRecentSteps) {
  std::printf("%-8s %13s %13s %15s %12s %12s %13s\n", "p", "spurious n60", "spurious n150", "heavy-tail n60",
              "+5% 7 after", "+5% 5 after", "+10% 5 after");
  for (double p : {1e-3, 1e-4, 1e-5}) {
    double spurious60 = SpuriousRate(60, p, false), spurious150 = SpuriousRate(150, p, false);
    double heavy60 = SpuriousRate(60, p, true);
    double found7 = FoundRate(14, 7, 1.05, p), found5 = FoundRate(40, 35, 1.05, p);
    double found5_large = FoundRate(40, 35, 1.10, p);
    std::printf("%-8g %12.2f%% %12.2f%% %14.2f%% %11.1f%% %11.1f%% %12.1f%%\n", p, spurious60, spurious150, heavy60,
                found7, found5, found5_large);
    if (p != ChangePointOptions{}.max_p_value) continue;
    EXPECT_LE(spurious60, 0.6);
    EXPECT_LE(spurious150, 1.0);
    EXPECT_LE(heavy60, 1.0);
    EXPECT_GE(found7, 90);
    EXPECT_GE(found5_large, 88);
  }
}

}  // namespace
}  // namespace perfgate::stats
