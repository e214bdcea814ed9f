// Known-answer and property tests of gate/stats. Reference values come from
// SciPy 1.10 (scipy.stats.mannwhitneyu, norm.ppf) and from brute-force
// enumeration, computed offline; the tests need neither.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <numeric>
#include <random>
#include <vector>

#include "harness/sampler.h"
#include "stats/descriptive.h"
#include "stats/distributions.h"
#include "stats/hodges_lehmann.h"
#include "stats/kolmogorov_smirnov.h"
#include "stats/mann_whitney.h"
#include "stats/multiple_testing.h"
#include "stats/power.h"
#include "stats/relative_change.h"

namespace perfgate::stats {
namespace {

using perfgate::testing::Sampler;

// ---- descriptive -----------------------------------------------------------

TEST(Descriptive, MedianOfOddAndEvenSamples) {
  EXPECT_DOUBLE_EQ(Median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({7}), 7);
  EXPECT_TRUE(std::isnan(Median({})));
}

TEST(Descriptive, QuantileInterpolatesLikeNumpy) {
  // numpy.quantile([1, 2, 3, 4], [0, .25, .9, 1]) = 1, 1.75, 3.7, 4
  EXPECT_DOUBLE_EQ(Quantile({4, 3, 2, 1}, 0), 1);
  EXPECT_DOUBLE_EQ(Quantile({4, 3, 2, 1}, 0.25), 1.75);
  EXPECT_NEAR(Quantile({4, 3, 2, 1}, 0.9), 3.7, 1e-12);
  EXPECT_DOUBLE_EQ(Quantile({4, 3, 2, 1}, 1), 4);
}

TEST(Descriptive, MeanStdDevAndCv) {
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(Mean(v), 5);
  EXPECT_NEAR(StdDev(v), std::sqrt(32.0 / 7), 1e-12);  // sample (n - 1) deviation
  EXPECT_NEAR(CoefficientOfVariation(v), std::sqrt(32.0 / 7) / 5, 1e-12);
  EXPECT_EQ(StdDev({3}), 0);
  EXPECT_EQ(CoefficientOfVariation({3, 3, 3}), 0);
}

TEST(Descriptive, StdDevKeepsPrecisionForTinyCv) {
  // The one-pass sum-of-squares formula loses every digit here.
  const std::vector<double> v{1e9 + 1, 1e9 + 2, 1e9 + 3};
  EXPECT_NEAR(StdDev(v), 1.0, 1e-9);
}

TEST(Descriptive, MedianAbsoluteDeviation) {
  // median 2; |deviations| 1 1 0 0 2 4 7 -> median 1
  EXPECT_DOUBLE_EQ(MedianAbsoluteDeviation({1, 1, 2, 2, 4, 6, 9}), 1);
}

TEST(Descriptive, RobustCvIgnoresOneOutlierRepetition) {
  const std::vector<double> steady{100, 101, 99, 100.5, 99.5, 100.2, 99.8, 100.1};
  std::vector<double> with_outlier = steady;
  with_outlier.back() = 160;  // one disturbed repetition
  EXPECT_GT(CoefficientOfVariation(with_outlier), 5 * CoefficientOfVariation(steady));
  EXPECT_LT(RobustCoefficientOfVariation(with_outlier), 2 * RobustCoefficientOfVariation(steady));
}

// ---- normal ----------------------------------------------------------------

TEST(Normal, QuantileMatchesScipy) {
  EXPECT_NEAR(NormalQuantile(0.5), 0, 1e-15);
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963984540054, 1e-13);
  EXPECT_NEAR(NormalQuantile(0.999), 3.090232306167813, 1e-13);
  EXPECT_NEAR(NormalQuantile(0.0025), -2.8070337683438042, 1e-13);
  EXPECT_NEAR(NormalQuantile(0.8), 0.8416212335729143, 1e-13);
  EXPECT_NEAR(NormalQuantile(1e-10), -6.361340902404056, 1e-11);
}

TEST(StudentT, QuantileMatchesScipyClosely) {
  EXPECT_NEAR(StudentTQuantile(0.975, 10), 2.2281388519649385, 2e-3);
  EXPECT_NEAR(StudentTQuantile(0.99, 22), 2.508324552898667, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.8, 8), 0.8888895177669744, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.9975, 18), 3.196574222094215, 3e-3);
  EXPECT_NEAR(StudentTQuantile(0.999, 58), 3.236795338886654, 1e-3);
}

TEST(Normal, SurvivalKeepsTinyTails) {
  EXPECT_NEAR(NormalSurvival(5) / 2.866515718791933e-07, 1, 1e-12);
  EXPECT_NEAR(NormalSurvival(10) / 7.61985302416047e-24, 1, 1e-12);
}

// ---- Mann–Whitney ----------------------------------------------------------

TEST(MannWhitney, ExactCountsForFiveAndFive) {
  // Partitions fitting in a 5x5 box, by size (OEIS A008967 row): symmetric, sum C(10,5) = 252.
  const std::vector<uint64_t> expected{1,  1,  2,  3,  5,  7,  9, 11, 14, 16, 18, 19, 20,
                                       20, 19, 18, 16, 14, 11, 9, 7,  5,  3,  2,  1,  1};
  EXPECT_EQ(MannWhitneyUCounts(5, 5), expected);
}

TEST(MannWhitney, ExactCountsAreExactAtThirtyAndThirty) {
  const std::vector<uint64_t> counts = MannWhitneyUCounts(30, 30);
  ASSERT_EQ(counts.size(), 901u);
  const uint64_t total = std::accumulate(counts.begin(), counts.end(), uint64_t{0});
  EXPECT_EQ(total, 118264581564861424ULL);  // C(60, 30)
  for (size_t u = 0; u < counts.size(); ++u) EXPECT_EQ(counts[u], counts[900 - u]) << u;
  EXPECT_EQ(MannWhitneyUCounts(3, 7), MannWhitneyUCounts(7, 3));
}

TEST(MannWhitney, ExactPValueMatchesTableForSmallSamples) {
  // Tables of the U distribution (n1 = n2 = 5): P(U <= 2) = 4/252, P(U <= 3) = 7/252,
  // so the two-sided 5 % critical value is 2.
  const std::vector<double> baseline{10, 11, 12, 13, 14};
  const std::vector<double> u_is_2{10.5, 10.6, 9, 8, 7};  // pairs c > b: 10.5 > 10, 10.6 > 10
  const MannWhitneyResult r = MannWhitneyU(baseline, u_is_2, Alternative::kCandidateLess);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 2);
  EXPECT_NEAR(r.p_value, 4.0 / 252, 1e-15);
  EXPECT_NEAR(MannWhitneyU(baseline, u_is_2, Alternative::kTwoSided).p_value, 8.0 / 252, 1e-15);
  const MannWhitneyResult r3 = MannWhitneyU(baseline, {10.5, 11.5, 9, 8, 7}, Alternative::kCandidateLess);
  EXPECT_DOUBLE_EQ(r3.u, 3);
  EXPECT_NEAR(r3.p_value, 7.0 / 252, 1e-15);
}

TEST(MannWhitney, ExactPValuesMatchScipy) {
  const std::vector<double> b{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30};
  const std::vector<double> c{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29};
  // c has tied values, for which the exact distribution does not hold (scipy's
  // "exact" ignores that); U itself must still agree.
  const std::vector<double> b2{12.1, 14.3, 13.5, 15.0, 13.9, 14.8, 12.7};
  const std::vector<double> c2{14.9, 15.6, 16.2, 15.1, 14.4, 17.0, 16.5, 15.8, 15.3};
  const MannWhitneyResult greater = MannWhitneyU(b2, c2, Alternative::kCandidateGreater);
  EXPECT_TRUE(greater.exact);
  EXPECT_DOUBLE_EQ(greater.u, 60);
  EXPECT_NEAR(greater.p_value, 0.0006118881118881119, 1e-15);
  EXPECT_NEAR(MannWhitneyU(b2, c2, Alternative::kTwoSided).p_value, 0.0012237762237762239, 1e-15);
  EXPECT_NEAR(MannWhitneyU(b2, c2, Alternative::kCandidateLess).p_value, 0.9996503496503497, 1e-15);
  EXPECT_DOUBLE_EQ(MannWhitneyU(b, c, Alternative::kTwoSided).u, 23);
}

TEST(MannWhitney, ExactPValuesMatchScipyAtThirtyAndThirty) {
  const std::vector<double> b{10.6894, 9.6728, 9.6314,  9.7498,  11.5235, 9.572,  9.6963,  10.3526, 9.8792,  9.8027,
                              8.8859,  9.9885, 9.5564,  11.1661, 10.6531, 9.9759, 10.6684, 9.6601,  11.0521, 9.9946,
                              10.5834, 8.7091, 10.3467, 8.3118,  7.9647,  9.6955, 9.1001,  10.1641, 12.2448, 9.1683};
  const std::vector<double> c{9.9761,  10.8054, 11.093,  10.4236, 10.3941, 11.3025, 11.1199, 9.5663,  10.5208, 10.6353,
                              9.5455,  10.8598, 9.742,   11.5721, 10.7927, 10.6893, 10.009,  10.4814, 8.6023,  9.4686,
                              10.9628, 8.4714,  11.4466, 8.8539,  11.3567, 9.7545,  11.379,  10.731,  9.0632,  11.8491};
  const MannWhitneyResult r = MannWhitneyU(b, c, Alternative::kCandidateGreater);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 583);
  EXPECT_NEAR(r.p_value, 0.02480999998232806, 1e-14);
  EXPECT_NEAR(MannWhitneyU(b, c, Alternative::kTwoSided).p_value, 0.04961999996465612, 1e-14);
  EXPECT_NEAR(MannWhitneyU(b, c, Alternative::kCandidateLess).p_value, 0.9760550879562018, 1e-14);
}

TEST(MannWhitney, NormalApproximationWithTiesMatchesScipy) {
  const std::vector<double> b{3, 4, 4, 5, 6, 6, 6, 7, 8, 9};
  const std::vector<double> c{5, 6, 7, 7, 8, 8, 9, 10, 10, 11, 12};
  const MannWhitneyResult r = MannWhitneyU(b, c, Alternative::kCandidateGreater);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 90.5);
  EXPECT_NEAR(r.p_value, 0.006524647618063078, 1e-13);
  EXPECT_NEAR(MannWhitneyU(b, c, Alternative::kTwoSided).p_value, 0.013049295236126156, 1e-13);
  EXPECT_NEAR(MannWhitneyU(b, c, Alternative::kCandidateLess).p_value, 0.9946653497198429, 1e-13);
}

TEST(MannWhitney, NormalApproximationForLargeSamplesMatchesScipy) {
  const std::vector<double> b{100.006, 101.494, 98.629,  95.547,  97.727,  95.042,  100.301, 106.701, 97.539, 96.898,
                              102.449, 101.784, 100.527, 95.348,  99.854,  103.477, 93.279,  97.712,  90.494, 93.552,
                              90.791,  98.825,  93.663,  101.356, 100.784, 99.065,  87.416,  97.307,  99.757, 100.567,
                              92.349,  97.611,  95.107,  95.956,  105.304, 95.962,  99.837,  104.422, 97.082, 99.441};
  const std::vector<double> c{103.552, 103.319, 96.875,  103.381, 109.794, 95.264,  107.297, 103.597, 99.793,
                              113.002, 106.811, 97.004,  103.373, 105.883, 102.056, 106.415, 102.667, 106.336,
                              110.193, 99.622,  104.016, 100.683, 103.636, 97.064,  100.103, 102.019, 107.494,
                              108.726, 96.382,  99.027,  106.235, 93.038,  100.684, 102.514, 109.285};
  const MannWhitneyResult r = MannWhitneyU(b, c, Alternative::kCandidateGreater);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 1102);
  EXPECT_NEAR(r.p_value / 1.0045198458054545e-05, 1, 1e-10);
  EXPECT_NEAR(MannWhitneyU(b, c, Alternative::kTwoSided).p_value / 2.009039691610909e-05, 1, 1e-10);
}

TEST(MannWhitney, AllValuesTiedGiveNoEvidence) {
  EXPECT_DOUBLE_EQ(MannWhitneyU({4, 4, 4}, {4, 4, 4, 4}, Alternative::kCandidateGreater).p_value, 1);
  EXPECT_DOUBLE_EQ(MannWhitneyU({}, {1, 2}, Alternative::kTwoSided).p_value, 1);
}

TEST(MannWhitney, OneOutlierRepetitionMovesOnlyOneRank) {
  const std::vector<double> baseline{100, 101, 102, 103, 104, 105};
  const auto p = [&](double last) {
    return MannWhitneyU(baseline, {99.1, 99.2, 99.3, 99.4, 99.5, last}, Alternative::kCandidateGreater).p_value;
  };
  EXPECT_DOUBLE_EQ(p(500), p(105.5));  // how far beyond the others does not matter
  EXPECT_GT(p(500), 0.5);
}

TEST(MannWhitney, ExactTestSizeIsTheLargestAttainablePValue) {
  // 6 + 6: P(U >= 36) = 1/924, P(U >= 35) = 2/924, P(U >= 34) = 4/924.
  EXPECT_NEAR(ExactTestSize(6, 6, 0.0025), 2.0 / 924, 1e-15);
  EXPECT_EQ(ExactTestSize(5, 5, 0.0025), 0);
  EXPECT_EQ(ExactTestSize(40, 40, 0.0025), 0.0025);
}

TEST(MannWhitney, SmallestOneSidedPValueIsOneOverBinomial) {
  EXPECT_NEAR(SmallestOneSidedPValue(5, 5), 1.0 / 252, 1e-15);
  EXPECT_NEAR(SmallestOneSidedPValue(6, 6), 1.0 / 924, 1e-15);
  EXPECT_NEAR(MannWhitneyU({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, Alternative::kCandidateGreater).p_value, 1.0 / 252,
              1e-15);
}

TEST(MannWhitney, HoldsItsLevelUnderTheNull) {
  Sampler sampler(11);
  int rejections = 0;
  const int trials = 4000;
  for (int i = 0; i < trials; ++i) {
    const auto b = sampler.LogNormal(8, 1, 0.05), c = sampler.LogNormal(8, 1, 0.05);
    rejections += MannWhitneyU(b, c, Alternative::kCandidateGreater).p_value < 0.05;
  }
  // Exact test: level <= 5 % (discreteness makes it a little conservative).
  EXPECT_LE(rejections, trials * 0.05 + 3 * std::sqrt(trials * 0.05));
}

TEST(MannWhitney, DetectsTenPercentShiftAtTenRepsAndCvThreePercent) {
  Sampler sampler(12);
  int detections = 0;
  for (int i = 0; i < 500; ++i) {
    detections +=
        MannWhitneyU(sampler.LogNormal(10, 1, 0.03), sampler.LogNormal(10, 1.1, 0.03), Alternative::kCandidateGreater)
            .p_value < 0.0025;
  }
  EXPECT_GE(detections, 495);
}

// ---- Hodges–Lehmann --------------------------------------------------------

TEST(HodgesLehmann, MatchesBruteForceEnumeration) {
  // Reference: median of the 63 differences and the exact U distribution by
  // enumerating all C(16, 9) orderings: k = 13, interval [D(13), D(51)].
  const std::vector<double> b{12.1, 14.3, 13.5, 15.0, 13.9, 14.8, 12.7};
  const std::vector<double> c{14.9, 15.6, 16.2, 15.1, 14.4, 17.0, 16.5, 15.8, 15.3};
  const ShiftEstimate shift = HodgesLehmannShift(b, c, 0.95);
  EXPECT_NEAR(shift.estimate, 1.8, 1e-12);
  EXPECT_NEAR(shift.low, 0.8, 1e-12);
  EXPECT_NEAR(shift.high, 3.0, 1e-12);
  EXPECT_GE(shift.confidence, 0.95);
}

TEST(HodgesLehmann, ReportsAchievedConfidenceWhenSamplesAreTooSmall) {
  // 3 + 3: P(U = 0) = 1/20, so no interval reaches 95 %; the full range gives 90 %.
  const ShiftEstimate shift = HodgesLehmannShift({1, 2, 3}, {4, 5, 7}, 0.95);
  EXPECT_DOUBLE_EQ(shift.low, 1);
  EXPECT_DOUBLE_EQ(shift.high, 6);
  EXPECT_NEAR(shift.confidence, 0.9, 1e-12);
}

TEST(HodgesLehmann, IntervalCoversTheTrueShiftAtLeastNominally) {
  Sampler sampler(13);
  for (size_t n : {6u, 12u, 40u}) {  // exact and normal critical values
    int covered = 0;
    const int trials = 2000;
    for (int i = 0; i < trials; ++i) {
      std::vector<double> b(n), c(n);
      for (double& v : b) v = sampler.Normal();
      for (double& v : c) v = 0.7 + sampler.Normal();
      const ShiftEstimate s = HodgesLehmannShift(b, c, 0.95);
      covered += s.low <= 0.7 && 0.7 <= s.high;
    }
    EXPECT_GE(covered, trials * 0.95 - 3 * std::sqrt(trials * 0.05)) << n;
    EXPECT_LE(covered, trials * 0.99) << n;  // and not absurdly wide
  }
}

// ---- relative change -------------------------------------------------------

TEST(RelativeChange, PointEstimateIsTheRatioOfMedians) {
  const RelativeChange r =
      RelativeChangeOfMedians({0.50, 0.52, 0.51, 0.49, 0.512}, {0.66, 0.67, 0.668, 0.7, 0.65}, 0.95);
  EXPECT_NEAR(r.change, 0.668 / 0.51 - 1, 1e-12);
  ASSERT_TRUE(r.low && r.high);
  EXPECT_LE(*r.low, r.change);
  EXPECT_GE(*r.high, r.change);
  EXPECT_GT(*r.low, 0.2);
}

TEST(RelativeChange, IsDeterministic) {
  Sampler sampler(14);
  const auto b = sampler.LogNormal(9, 1, 0.05), c = sampler.LogNormal(9, 1, 0.05);
  const RelativeChange first = RelativeChangeOfMedians(b, c, 0.95);
  const RelativeChange second = RelativeChangeOfMedians(b, c, 0.95);
  EXPECT_EQ(*first.low, *second.low);
  EXPECT_EQ(*first.high, *second.high);
}

TEST(RelativeChange, UndefinedForNonPositiveBaselineMedian) {
  EXPECT_TRUE(std::isnan(RelativeChangeOfMedians({0, 0, 1}, {1, 2, 3}, 0.95).change));
  // Median positive, but a resample can have a zero median: no interval.
  const RelativeChange r = RelativeChangeOfMedians({0, 0, 1, 2, 3}, {1, 2, 3}, 0.95);
  EXPECT_DOUBLE_EQ(r.change, 1);
  EXPECT_FALSE(r.low.has_value());
}

TEST(RelativeChange, BootstrapIntervalCoversTheTrueChange) {
  Sampler sampler(15);
  for (size_t n : {5u, 10u, 30u}) {
    int covered = 0;
    const int trials = 1000;
    for (int i = 0; i < trials; ++i) {
      const RelativeChange r =
          RelativeChangeOfMedians(sampler.LogNormal(n, 1, 0.04), sampler.LogNormal(n, 1.3, 0.04), 0.95);
      covered += *r.low <= 0.3 && 0.3 <= *r.high;
    }
    // The percentile bootstrap of a median is a little liberal for tiny samples.
    EXPECT_GE(covered, trials * 0.90) << n;
  }
}

// ---- multiple testing ------------------------------------------------------

TEST(Holm, MatchesDefinition) {
  const std::vector<double> adjusted = HolmAdjust({0.01, 0.04, 0.03, 0.005, 0.2, 0.04});
  const std::vector<double> expected{0.05, 0.12, 0.12, 0.03, 0.2, 0.12};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(adjusted[i], expected[i], 1e-15) << i;
  EXPECT_EQ(HolmAdjust({0.6, 0.7}), (std::vector<double>{1, 1}));  // capped at 1
  EXPECT_TRUE(HolmAdjust({}).empty());
}

TEST(BenjaminiHochberg, MatchesDefinition) {
  const std::vector<double> adjusted = BenjaminiHochbergAdjust({0.01, 0.04, 0.03, 0.005, 0.2, 0.04});
  const std::vector<double> expected{0.03, 0.048, 0.048, 0.03, 0.2, 0.048};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(adjusted[i], expected[i], 1e-15) << i;
}

TEST(Holm, ControlsFamilyWiseError) {
  Sampler sampler(16);
  const int families = 4000;
  int with_false_rejection = 0, bh_with_false_rejection = 0;
  for (int f = 0; f < families; ++f) {
    std::vector<double> p(20);
    for (double& v : p) v = sampler.Uniform();
    const auto holm = HolmAdjust(p), bh = BenjaminiHochbergAdjust(p);
    with_false_rejection += std::any_of(holm.begin(), holm.end(), [](double q) { return q < 0.05; });
    bh_with_false_rejection += std::any_of(bh.begin(), bh.end(), [](double q) { return q < 0.05; });
  }
  const double slack = 3 * std::sqrt(families * 0.05);
  EXPECT_LE(with_false_rejection, families * 0.05 + slack);
  // Under the global null FDR = FWER, so BH holds the same level.
  EXPECT_LE(bh_with_false_rejection, families * 0.05 + slack);
  // Unadjusted, a family of 20 fails 1 - 0.95^20 = 64 % of the time.
}

TEST(Holm, KeepsPowerForOneRealEffect) {
  std::vector<double> p(20, 0.5);
  p[7] = 0.001;  // < 0.05 / 20
  EXPECT_LT(HolmAdjust(p)[7], 0.05);
}

// ---- power -----------------------------------------------------------------

TEST(MinimumDetectableEffect, MatchesTheFormulaForLargeSamples) {
  // (t_0.95 + t_0.8, 78 dof) * 0.03 * sqrt(2/40) / sqrt(3/pi), then exp - 1;
  // t quantiles from scipy.stats.t.ppf.
  const double shift =
      (1.6646246444385238 + 0.846253754174898) * 0.03 * std::sqrt(0.05) / std::sqrt(3 / std::numbers::pi);
  EXPECT_NEAR(MinimumDetectableRelativeEffect(40, 40, 0.03, 0.05), std::expm1(shift), 1e-5);
}

TEST(MinimumDetectableEffect, ShrinksWithRepetitionsAndGrowsWithNoise) {
  EXPECT_LT(MinimumDetectableRelativeEffect(20, 20, 0.05, 0.01), MinimumDetectableRelativeEffect(10, 10, 0.05, 0.01));
  EXPECT_GT(MinimumDetectableRelativeEffect(10, 10, 0.08, 0.01), MinimumDetectableRelativeEffect(10, 10, 0.05, 0.01));
}

TEST(MinimumDetectableEffect, InfiniteWhenTheRankTestCannotReachTheLevel) {
  // 5 + 5: smallest p 1/252 = 0.004 > 0.05 / 20.
  EXPECT_TRUE(std::isinf(MinimumDetectableRelativeEffect(5, 5, 0.01, 0.05 / 20)));
  EXPECT_TRUE(std::isfinite(MinimumDetectableRelativeEffect(6, 6, 0.01, 0.05 / 20)));
}

TEST(MinimumDetectableEffect, ChangeOfThatSizeIsDetectedAboutEightyPercentOfTheTime) {
  Sampler sampler(17);
  const double alpha = 0.0025, cv = 0.05;  // 0.05 / 20 checks
  const size_t n = 10;
  const double effect = MinimumDetectableRelativeEffect(n, n, cv, alpha);
  int detections = 0;
  const int trials = 2000;
  for (int i = 0; i < trials; ++i) {
    detections +=
        MannWhitneyU(sampler.LogNormal(n, 1, cv), sampler.LogNormal(n, 1 + effect, cv), Alternative::kCandidateGreater)
            .p_value < alpha;
  }
  EXPECT_NEAR(detections / static_cast<double>(trials), 0.8, 0.05);
}

}  // namespace
}  // namespace perfgate::stats

namespace perfgate::stats {
namespace {

TEST(KolmogorovSmirnov, CompleteSeparationIsTheSmallestPossibleP) {
  std::vector<double> low, high;
  for (int i = 0; i < 10; ++i) {
    low.push_back(i);
    high.push_back(100 + i);
  }
  const KolmogorovSmirnovResult greater = KolmogorovSmirnov(low, high, Alternative::kCandidateGreater);
  EXPECT_TRUE(greater.exact);
  EXPECT_DOUBLE_EQ(greater.d, 1);
  EXPECT_NEAR(greater.p_value, 1 / 184756.0, 1e-12);  // 1 / C(20, 10)
  EXPECT_NEAR(KolmogorovSmirnov(low, high, Alternative::kTwoSided).p_value, 2 / 184756.0, 1e-12);
  EXPECT_DOUBLE_EQ(KolmogorovSmirnov(low, high, Alternative::kCandidateLess).p_value, 1);
  EXPECT_NEAR(KolmogorovSmirnov(high, low, Alternative::kCandidateLess).p_value, 1 / 184756.0, 1e-12);
}

// The exact p-value is the share of orderings at least as extreme: checked
// against shuffles of the pooled values, for unequal sizes and both sides.
TEST(KolmogorovSmirnov, ExactPValueMatchesPermutations) {
  const std::vector<double> baseline = {1.0, 1.3, 1.9, 2.2, 2.8, 3.1, 3.3};
  const std::vector<double> candidate = {1.7, 2.5, 3.0, 3.6, 3.9, 4.4, 4.6, 5.0, 5.2};
  std::vector<double> pooled = baseline;
  pooled.insert(pooled.end(), candidate.begin(), candidate.end());
  std::mt19937_64 engine(3);
  for (Alternative alternative : {Alternative::kCandidateGreater, Alternative::kTwoSided}) {
    const KolmogorovSmirnovResult observed = KolmogorovSmirnov(baseline, candidate, alternative);
    ASSERT_TRUE(observed.exact);
    int extreme = 0;
    const int shuffles = 100000;
    for (int s = 0; s < shuffles; ++s) {
      std::shuffle(pooled.begin(), pooled.end(), engine);
      const std::vector<double> b(pooled.begin(), pooled.begin() + 7), c(pooled.begin() + 7, pooled.end());
      extreme += KolmogorovSmirnov(b, c, alternative).d >= observed.d - 1e-12;
    }
    EXPECT_NEAR(observed.p_value, static_cast<double>(extreme) / shuffles, 0.005) << observed.d;
  }
}

TEST(KolmogorovSmirnov, LargeSamplesUseTheAsymptoticTail) {
  std::vector<double> a, b;
  for (int i = 0; i < 200; ++i) {
    a.push_back(i);
    b.push_back(i + 20);
  }
  const KolmogorovSmirnovResult r = KolmogorovSmirnov(a, b, Alternative::kCandidateGreater);
  EXPECT_FALSE(r.exact);
  EXPECT_NEAR(r.d, 0.1, 1e-12);
  EXPECT_GT(r.p_value, 0.05);  // lambda ~ 1.0: exp(-2) ~ 0.13
  EXPECT_LT(r.p_value, 0.2);
  EXPECT_DOUBLE_EQ(KolmogorovSmirnov({}, b, Alternative::kTwoSided).p_value, 1);
}

}  // namespace
}  // namespace perfgate::stats
