#include "stats/descriptive.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace perfgate::stats {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double Mean(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double StdDev(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  // Two passes: summing squared deviations from the mean avoids the
  // cancellation of the sum-of-squares formula when the CV is tiny.
  const double mean = Mean(values);
  double sum_sq = 0;
  for (double v : values) sum_sq += (v - mean) * (v - mean);
  return std::sqrt(sum_sq / static_cast<double>(values.size() - 1));
}

double CoefficientOfVariation(const std::vector<double>& values) {
  const double sd = StdDev(values);
  if (sd == 0) return 0.0;
  const double mean = Mean(values);
  if (mean == 0) return std::numeric_limits<double>::infinity();
  return sd / std::fabs(mean);
}

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return kNaN;
  q = std::clamp(q, 0.0, 1.0);
  const double position = q * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<size_t>(std::floor(position));
  const double fraction = position - static_cast<double>(lower);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lower), values.end());
  const double at_lower = values[lower];
  if (fraction == 0 || lower + 1 == values.size()) return at_lower;
  // After nth_element everything right of `lower` is >= it; the next order
  // statistic is the smallest of them.
  const double at_upper = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lower) + 1, values.end());
  return at_lower + fraction * (at_upper - at_lower);
}

double Median(std::vector<double> values) { return Quantile(std::move(values), 0.5); }

double MedianAbsoluteDeviation(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  const double median = Median(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - median));
  return Median(std::move(deviations));
}

double RobustZ(const std::vector<double>& values, double value) {
  if (values.empty()) return kNaN;
  constexpr double kMadToSigma = 1.482602218505602;
  const double median = Median(values);
  double sigma = kMadToSigma * MedianAbsoluteDeviation(values);
  if (sigma == 0) sigma = 0.01 * std::fabs(median);
  if (sigma == 0) return value == median ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), value - median);
  return (value - median) / sigma;
}

double RobustCoefficientOfVariation(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  constexpr double kMadToSigma = 1.482602218505602;  // 1 / Phi^-1(3/4)
  const double mad = MedianAbsoluteDeviation(values);
  if (mad == 0) return CoefficientOfVariation(values);
  const double median = Median(values);
  if (median == 0) return std::numeric_limits<double>::infinity();
  return kMadToSigma * mad / std::fabs(median);
}

}  // namespace perfgate::stats
