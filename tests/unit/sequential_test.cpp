// Error spending for adaptive repetitions (stats/sequential.h): boundaries
// against published values, and the overall error by simulation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "compare/adaptive.h"
#include "stats/distributions.h"
#include "stats/sequential.h"

namespace perfgate::stats {
namespace {

TEST(Sequential, OneLookIsTheFixedTest) {
  const std::vector<double> b = SequentialBoundaries({1.0}, 0.025);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_NEAR(b[0], 1.95996, 1e-4);
  EXPECT_NEAR(SequentialLevels({1.0}, 0.01)[0], 0.01, 1e-9);
}

// Lan–DeMets O'Brien–Fleming spending, 5 equally spaced looks, one-sided
// 0.025: the boundaries tabulated for this design (e.g. by gsDesign's sfLDOF).
TEST(Sequential, FiveEqualLooksMatchPublishedBoundaries) {
  const std::vector<double> b = SequentialBoundaries({0.2, 0.4, 0.6, 0.8, 1.0}, 0.025);
  const double expected[] = {4.8769, 3.3569, 2.6803, 2.2898, 2.0310};
  ASSERT_EQ(b.size(), 5u);
  for (int k = 0; k < 5; ++k) EXPECT_NEAR(b[k], expected[k], 2e-3) << "look " << k + 1;
}

TEST(Sequential, SpendingIsMonotoneAndEndsAtAlpha) {
  double previous = 0;
  for (double t = 0.05; t <= 1.0001; t += 0.05) {
    const double spent = ObrienFlemingSpending(t, 0.01);
    EXPECT_GE(spent, previous);
    previous = spent;
  }
  EXPECT_DOUBLE_EQ(ObrienFlemingSpending(1, 0.01), 0.01);
  EXPECT_EQ(ObrienFlemingSpending(0, 0.01), 0);
}

// Brownian motion observed at unequal fractions (a baseline of 12
// repetitions against a candidate that grows from 5 to 12, looking after
// every repetition): the chance of ever crossing is alpha; the first look
// spends a fifth of it, and the last keeps about two thirds.
TEST(Sequential, SimulatedOverallErrorIsAlpha) {
  std::vector<double> t;
  const double full = TwoSampleInformation(12, 12);
  for (int n = 5; n <= 12; ++n) t.push_back(TwoSampleInformation(12, n) / full);
  const double alpha = 0.05;
  const std::vector<double> b = SequentialBoundaries(t, alpha);
  const std::vector<double> levels = SequentialLevels(t, alpha);
  EXPECT_GT(levels.back(), 0.6 * alpha);
  EXPECT_LT(levels.front(), 0.25 * alpha);

  std::mt19937_64 engine(7);
  std::normal_distribution<double> normal;
  const int trials = 200000;
  int crossed = 0;
  for (int i = 0; i < trials; ++i) {
    double s = 0, t_previous = 0;
    for (size_t k = 0; k < t.size(); ++k) {
      s += std::sqrt(t[k] - t_previous) * normal(engine);
      t_previous = t[k];
      if (s / std::sqrt(t[k]) > b[k]) {
        ++crossed;
        break;
      }
    }
  }
  const double rate = static_cast<double>(crossed) / trials;
  EXPECT_NEAR(rate, alpha, 0.0025) << rate;  // ~5 standard errors
}

TEST(Sequential, SmallAlphaAndManyLooksStayFinite) {
  std::vector<double> t;
  for (int k = 1; k <= 21; ++k) t.push_back(k / 21.0);
  const std::vector<double> levels = SequentialLevels(t, 0.0005);
  ASSERT_EQ(levels.size(), 21u);
  for (size_t k = 1; k < levels.size(); ++k) EXPECT_GE(levels[k], levels[k - 1]);
  EXPECT_GT(levels.back(), 0.0003);
  EXPECT_LE(levels.back(), 0.0005);
}

}  // namespace
}  // namespace perfgate::stats

namespace perfgate {
namespace {

TEST(AdaptiveLooks, MinThenEvenStepsToMax) {
  EXPECT_EQ(AdaptiveLooks(5, 5), (std::vector<int>{5}));
  EXPECT_EQ(AdaptiveLooks(5, 7), (std::vector<int>{5, 6, 7}));
  EXPECT_EQ(AdaptiveLooks(5, 10), (std::vector<int>{5, 6, 8, 9, 10}));
  EXPECT_EQ(AdaptiveLooks(8, 16), (std::vector<int>{8, 10, 12, 14, 16}));
  EXPECT_EQ(AdaptiveLooks(10, 1000).size(), static_cast<size_t>(kMaxLooks));
}

TEST(AdaptiveLooks, LevelScaleIsOneForAFixedCountAndBelowOneForAnEarlyLook) {
  EXPECT_EQ(SequentialLevelScale({10, 10, false}, 10, 10, 0.01), 1);
  const AdaptiveRepetitions plan{8, 16, false};
  const double first = SequentialLevelScale(plan, 16, 8, 0.0005);
  const double last = SequentialLevelScale(plan, 16, 16, 0.0005);
  EXPECT_GT(first, 0);
  EXPECT_LT(first, 0.1);  // the first look spends little
  EXPECT_GT(last, 0.6);   // the last keeps most of alpha
  EXPECT_LT(last, 1);
  // In ab mode both sides grow, so the first look holds less information.
  EXPECT_LT(SequentialLevelScale({8, 16, true}, 8, 8, 0.0005), first);
}

}  // namespace
}  // namespace perfgate
