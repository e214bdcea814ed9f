// The paired statistics (stats/signed_rank.h): known answers from the exact
// null distribution enumerated by hand, and properties checked by seeded
// simulation (level, coverage, power at the detectable effect).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "harness/sampler.h"
#include "stats/signed_rank.h"

namespace perfgate::stats {
namespace {

using perfgate::testing::Sampler;

TEST(SignedRank, CountsAreTheSubsetSumsOfTheRanks) {
  // Subsets of {1, 2, 3}: sums 0 1 2 3 3 4 5 6.
  EXPECT_EQ(SignedRankCounts(3), (std::vector<uint64_t>{1, 1, 1, 2, 1, 1, 1}));
  for (int n : {1, 10, 30, 50}) {
    const std::vector<uint64_t> counts = SignedRankCounts(n);
    EXPECT_EQ(counts.size(), static_cast<size_t>(n * (n + 1) / 2 + 1));
    EXPECT_DOUBLE_EQ(std::accumulate(counts.begin(), counts.end(), 0.0), std::ldexp(1.0, n)) << n;
    for (size_t w = 0; w < counts.size(); ++w) EXPECT_EQ(counts[w], counts[counts.size() - 1 - w]) << "symmetric";
  }
}

TEST(SignedRank, ExactPValuesOfSmallSamples) {
  // All five positive: W+ = 15, the most extreme of 32 sign assignments.
  SignedRankResult all = WilcoxonSignedRank({0.1, 0.2, 0.3, 0.4, 0.5}, Alternative::kCandidateGreater);
  EXPECT_TRUE(all.exact);
  EXPECT_DOUBLE_EQ(all.w_plus, 15);
  EXPECT_DOUBLE_EQ(all.p_value, 1.0 / 32);
  // The smallest |d| negative: W+ = 14, and W+ >= 14 has 2 of 32.
  SignedRankResult one = WilcoxonSignedRank({-0.1, 0.2, 0.3, 0.4, 0.5}, Alternative::kCandidateGreater);
  EXPECT_DOUBLE_EQ(one.w_plus, 14);
  EXPECT_DOUBLE_EQ(one.p_value, 2.0 / 32);
  EXPECT_DOUBLE_EQ(WilcoxonSignedRank({-0.1, 0.2, 0.3, 0.4, 0.5}, Alternative::kCandidateLess).p_value, 31.0 / 32);
  EXPECT_DOUBLE_EQ(WilcoxonSignedRank({-0.1, 0.2, 0.3, 0.4, 0.5}, Alternative::kTwoSided).p_value, 4.0 / 32);
  // Zeros are dropped (Wilcoxon's convention): four pairs remain.
  SignedRankResult zeros = WilcoxonSignedRank({0, 0.2, 0.3, 0.4, 0.5}, Alternative::kCandidateGreater);
  EXPECT_EQ(zeros.n, 4);
  EXPECT_DOUBLE_EQ(zeros.p_value, 1.0 / 16);
  EXPECT_DOUBLE_EQ(WilcoxonSignedRank({0, 0, 0}, Alternative::kCandidateGreater).p_value, 1);
}

TEST(SignedRank, TiesAndLargeSamplesUseTheNormalApproximation) {
  SignedRankResult tied = WilcoxonSignedRank({1, 1, -1, 2, 2, 3}, Alternative::kCandidateGreater);
  EXPECT_FALSE(tied.exact);
  EXPECT_GT(tied.p_value, 0);
  EXPECT_LT(tied.p_value, 0.2);
  std::vector<double> symmetric;
  for (int i = 1; i <= 60; ++i) symmetric.push_back(i % 2 ? i : -i - 0.5);
  SignedRankResult large = WilcoxonSignedRank(symmetric, Alternative::kCandidateGreater);
  EXPECT_FALSE(large.exact);
  EXPECT_NEAR(large.p_value, 0.5, 0.1);
}

TEST(SignedRank, SmallestPAndTheExactTestSize) {
  EXPECT_DOUBLE_EQ(SmallestSignedRankPValue(5), 1.0 / 32);
  EXPECT_DOUBLE_EQ(ExactSignedRankSize(5, 0.05), 1.0 / 32);
  EXPECT_DOUBLE_EQ(ExactSignedRankSize(5, 0.01), 0);
  // Tables: n = 10, one-sided 5 %: reject when W+ >= 45 (P = 0.042).
  EXPECT_NEAR(ExactSignedRankSize(10, 0.05), 0.0420, 0.0005);
}

TEST(SignedRank, PairedShiftIsTheMedianOfTheWalshAverages) {
  // Walsh averages of 1, 2, 3: 1 1.5 2 2 2.5 3.
  ShiftEstimate shift = PairedShift({3, 1, 2}, 0.5);
  EXPECT_DOUBLE_EQ(shift.estimate, 2);
  EXPECT_LE(shift.low, 2);
  EXPECT_GE(shift.high, 2);
  // Too few pairs for 99 %: the full range, and the coverage it achieves (1 - 2/8).
  ShiftEstimate wide = PairedShift({3, 1, 2}, 0.99);
  EXPECT_DOUBLE_EQ(wide.low, 1);
  EXPECT_DOUBLE_EQ(wide.high, 3);
  EXPECT_DOUBLE_EQ(wide.confidence, 0.75);
  EXPECT_TRUE(std::isnan(PairedShift({}, 0.9).estimate));
}

// 90 % intervals from 12 pairs of lognormal noise with a shared per-pair
// drift: they cover the true log change (5 %) in about 90 % of 2,000 runs,
// and the test's level holds at the true change (p < 5 % in about 5 %).
TEST(SignedRank, IntervalCoverageAndLevelBySimulation) {
  Sampler sampler(20261125);
  const double truth = std::log(1.05);
  int covered = 0, rejected = 0;
  const int runs = 2000;
  for (int run = 0; run < runs; ++run) {
    std::vector<double> d;
    for (int i = 0; i < 12; ++i) {
      const double drift = 0.3 * sampler.Normal();  // shared by both sides of a pair
      const double base = drift + 0.03 * sampler.Normal();
      const double cand = drift + truth + 0.03 * sampler.Normal();
      d.push_back(cand - base);
    }
    const ShiftEstimate shift = PairedShift(d, 0.90);
    if (shift.low <= truth && truth <= shift.high) ++covered;
    std::vector<double> centred;
    for (double x : d) centred.push_back(x - truth);
    if (WilcoxonSignedRank(centred, Alternative::kCandidateGreater).p_value < 0.05) ++rejected;
  }
  EXPECT_NEAR(covered / static_cast<double>(runs), 0.90, 0.025);
  EXPECT_LE(rejected / static_cast<double>(runs), 0.06);
  EXPECT_GE(rejected / static_cast<double>(runs), 0.03);
}

// At the effect MinimumDetectablePairedEffect returns, the test at that
// level rejects in about 80 % of runs.
TEST(SignedRank, PowerAtTheMinimumDetectableEffectIsAboutTheTarget) {
  Sampler sampler(7);
  for (int n : {8, 12, 20}) {
    const double sd = 0.04, alpha = 0.01;
    const double effect = MinimumDetectablePairedEffect(n, sd, alpha);
    ASSERT_TRUE(std::isfinite(effect)) << n;
    int detected = 0;
    const int runs = 1500;
    for (int run = 0; run < runs; ++run) {
      std::vector<double> d;
      for (int i = 0; i < n; ++i) d.push_back(std::log1p(effect) + sd * sampler.Normal());
      if (WilcoxonSignedRank(d, Alternative::kCandidateGreater).p_value < alpha) ++detected;
    }
    EXPECT_NEAR(detected / static_cast<double>(runs), 0.8, 0.08) << n << " pairs, effect " << effect;
  }
  EXPECT_TRUE(std::isinf(MinimumDetectablePairedEffect(5, 0.01, 0.01))) << "2^-5 > 1 %";
}

}  // namespace
}  // namespace perfgate::stats
