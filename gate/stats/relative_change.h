// Relative change of the median, candidate vs baseline, with a percentile
// bootstrap interval. The point estimate is exactly the ratio of the two
// medians a reader sees in the report, so the interval is built around it.
#pragma once

#include <optional>
#include <vector>

namespace perfgate::stats {

struct RelativeChange {
  double change = 0;  // median(candidate) / median(baseline) - 1, a fraction (0.3 = +30 %)
  // Percentile bootstrap interval of the same ratio; absent when a resampled
  // baseline median can be 0 or negative (the ratio is then undefined).
  std::optional<double> low;
  std::optional<double> high;
};

inline constexpr int kDefaultBootstrapResamples = 2000;

// NaN change when either sample is empty or the baseline median is not positive.
// Deterministic: the resampling generator is seeded from the data, so the same
// inputs give the same interval on every machine, and different checks of a
// run do not share resampling noise.
RelativeChange RelativeChangeOfMedians(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                       double confidence, int resamples = kDefaultBootstrapResamples);

}  // namespace perfgate::stats
