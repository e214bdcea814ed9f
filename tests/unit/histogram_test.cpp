// The log-linear bucket layout shared with the BPF programs, and how close
// quantiles read from buckets come to exact quantiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "metrics/log_linear_histogram.h"

namespace perfgate {
namespace {

using Histogram = LogLinearHistogram;

TEST(LogLinearHistogram, BucketsTileTheValueRangeWithoutGaps) {
  EXPECT_EQ(Histogram::BucketLower(0), 0u);
  for (unsigned i = 0; i + 1 < Histogram::kBucketCount; ++i) {
    ASSERT_EQ(Histogram::BucketUpper(i), Histogram::BucketLower(i + 1)) << "bucket " << i;
    ASSERT_LT(Histogram::BucketLower(i), Histogram::BucketUpper(i)) << "bucket " << i;
  }
  EXPECT_EQ(Histogram::BucketUpper(Histogram::kBucketCount - 1), UINT64_MAX);
}

TEST(LogLinearHistogram, EveryBucketBoundaryMapsBackToItsBucket) {
  for (unsigned i = 0; i < Histogram::kBucketCount; ++i) {
    ASSERT_EQ(Histogram::BucketIndex(Histogram::BucketLower(i)), i);
    ASSERT_EQ(Histogram::BucketIndex(Histogram::BucketUpper(i) - 1), i);
  }
}

TEST(LogLinearHistogram, IndexIsMonotoneInTheValue) {
  std::mt19937_64 rng(7);
  for (int n = 0; n < 100000; ++n) {
    uint64_t a = rng() >> (rng() % 64), b = rng() >> (rng() % 64);
    if (a > b) std::swap(a, b);
    ASSERT_LE(Histogram::BucketIndex(a), Histogram::BucketIndex(b)) << a << " vs " << b;
  }
  EXPECT_EQ(Histogram::BucketIndex(UINT64_MAX), Histogram::kBucketCount - 1);
}

TEST(LogLinearHistogram, BucketsAreAtMostOneThirtySecondWide) {
  for (unsigned i = 32; i < Histogram::kBucketCount; ++i) {
    double lower = static_cast<double>(Histogram::BucketLower(i));
    double width = static_cast<double>(Histogram::BucketUpper(i)) - lower;
    ASSERT_LE(width / lower, 1.0 / 32 + 1e-12) << "bucket " << i;
  }
}

// Exact quantile with the same rank convention as Histogram::Quantile: the
// smallest sample with at least q*n samples at or below it.
double ExactQuantile(std::vector<uint64_t> sorted, double q) {
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return static_cast<double>(sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1]);
}

struct Distribution {
  const char* name;
  std::function<double(std::mt19937_64&)> draw;  // nanoseconds
};

std::vector<Distribution> Distributions() {
  return {
      {"lognormal", [](std::mt19937_64& rng) { return std::lognormal_distribution<double>(9.0, 1.2)(rng); }},
      {"exponential", [](std::mt19937_64& rng) { return std::exponential_distribution<double>(1.0 / 5000)(rng); }},
      {"uniform", [](std::mt19937_64& rng) { return std::uniform_real_distribution<double>(100, 100000)(rng); }},
      {"bimodal",
       [](std::mt19937_64& rng) {
         // A fast path near 2 us and a slow one near 400 us, 80/20.
         bool slow = std::bernoulli_distribution(0.2)(rng);
         return slow ? std::normal_distribution<double>(400000, 30000)(rng)
                     : std::normal_distribution<double>(2000, 150)(rng);
       }},
  };
}

class QuantileAccuracy : public ::testing::TestWithParam<int> {};

TEST_P(QuantileAccuracy, P50AndP99AreWithinThreePercentOfExact) {
  for (const auto& distribution : Distributions()) {
    std::mt19937_64 rng(static_cast<uint64_t>(GetParam()));
    std::vector<uint64_t> samples;
    Histogram histogram;
    for (int n = 0; n < 200000; ++n) {
      auto value = static_cast<uint64_t>(std::max(1.0, std::round(distribution.draw(rng))));
      samples.push_back(value);
      histogram.Record(value);
    }
    std::sort(samples.begin(), samples.end());
    for (double q : {0.5, 0.99}) {
      double exact = ExactQuantile(samples, q);
      EXPECT_NEAR(histogram.Quantile(q), exact, 0.03 * exact)
          << distribution.name << " q=" << q << " seed=" << GetParam();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FixedSeeds, QuantileAccuracy, ::testing::Values(1, 42, 2024));

TEST(LogLinearHistogram, MergeAddsCountsBucketByBucket) {
  Histogram a, b;
  a.Record(10, 3);
  a.Record(5000);
  b.Record(5000, 2);
  b.Record(1 << 20);
  a.Merge(b);
  EXPECT_EQ(a.count(), 7u);
  EXPECT_EQ(a.CountAt(Histogram::BucketIndex(5000)), 3u);
  EXPECT_EQ(a.CountAt(Histogram::BucketIndex(1 << 20)), 1u);
}

TEST(LogLinearHistogram, EmptyHistogramReadsAsZero) {
  Histogram empty;
  EXPECT_EQ(empty.Quantile(0.5), 0.0);
  EXPECT_EQ(empty.Mean(), 0.0);
  EXPECT_EQ(empty.Max(), 0.0);
}

TEST(LogLinearHistogram, SmallValuesAreExact) {
  Histogram histogram;
  for (uint64_t v = 0; v < 32; ++v) histogram.Record(v);
  EXPECT_EQ(histogram.Max(), 31.0);
  EXPECT_EQ(histogram.buckets().size(), 32u);
}

}  // namespace
}  // namespace perfgate
