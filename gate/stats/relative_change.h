// Relative change, candidate vs baseline, with a confidence interval: two
// estimators, for positive data and for data that may hold zeros.
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

// Ratio estimate for positive data: the Hodges–Lehmann shift of the log
// values and its distribution-free interval (stats/hodges_lehmann.h), mapped
// back with exp(x) - 1. Under a multiplicative change the interval's coverage
// is exact for any continuous distribution, it inverts the same rank test
// that gives the p-value, and it costs n1*n2 differences, not thousands of
// resamples. NaN change when a value is <= 0 or a sample is empty.
RelativeChange RelativeShiftOfLogs(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                   double confidence);

// NaN change when either sample is empty or the baseline median is not positive.
// Deterministic: the resampling generator is seeded from the data, so the same
// inputs give the same interval on every machine, and different checks of a
// run do not share resampling noise.
RelativeChange RelativeChangeOfMedians(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                       double confidence, int resamples = kDefaultBootstrapResamples);

}  // namespace perfgate::stats
