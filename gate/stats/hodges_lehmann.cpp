#include "stats/hodges_lehmann.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "stats/distributions.h"
#include "stats/mann_whitney.h"

namespace perfgate::stats {

namespace {

struct CriticalRank {
  int64_t k = 1;          // the interval is [D(k), D(mn + 1 - k)], 1-based order statistics
  double confidence = 0;  // 1 - 2 P(U <= k - 1)
};

// Largest k with P(U <= k - 1) <= (1 - confidence) / 2: the true shift lies
// below D(k) only if U(shift) >= mn - k + 1, which has that probability.
CriticalRank ExactCriticalRank(int m, int n, double confidence) {
  const std::vector<uint64_t> counts = MannWhitneyUCounts(m, n);
  double total = 0;
  for (uint64_t c : counts) total += static_cast<double>(c);
  const double tail = (1 - confidence) / 2;
  CriticalRank rank{1, 1 - 2 * static_cast<double>(counts[0]) / total};
  uint64_t below = 0;  // orderings with U <= k - 1
  for (size_t k = 1; k < counts.size(); ++k) {
    below += counts[k - 1];
    if (static_cast<double>(below) / total > tail) break;
    rank = {static_cast<int64_t>(k), 1 - 2 * static_cast<double>(below) / total};
  }
  return rank;
}

CriticalRank NormalCriticalRank(int m, int n, double confidence) {
  const double mn = static_cast<double>(m) * n;
  const double sd = std::sqrt(mn * (m + n + 1.0) / 12);
  const double z = NormalQuantile(1 - (1 - confidence) / 2);
  // P(U <= k - 1) ~ Phi((k - 1 + 0.5 - mn/2) / sd) <= tail  <=>  k <= mn/2 + 0.5 - z sd.
  const auto k = static_cast<int64_t>(std::floor(mn / 2 + 0.5 - z * sd));
  if (k < 1) return {1, 1 - 2 * NormalCdf((0.5 - mn / 2) / sd)};
  return {k, confidence};
}

double OrderStatistic(std::vector<double>& values, int64_t k) {  // 1-based
  auto nth = values.begin() + (k - 1);
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}

}  // namespace

ShiftEstimate HodgesLehmannShift(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                 double confidence) {
  const int m = static_cast<int>(baseline.size());
  const int n = static_cast<int>(candidate.size());
  if (m == 0 || n == 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan, nan, 0};
  }
  std::vector<double> differences;
  differences.reserve(static_cast<size_t>(m) * n);
  for (double c : candidate) {
    for (double b : baseline) differences.push_back(c - b);
  }
  const auto count = static_cast<int64_t>(differences.size());
  const CriticalRank rank = m <= kExactMaxSampleSize && n <= kExactMaxSampleSize ? ExactCriticalRank(m, n, confidence)
                                                                                 : NormalCriticalRank(m, n, confidence);
  ShiftEstimate shift;
  shift.confidence = rank.confidence;
  shift.low = OrderStatistic(differences, rank.k);
  shift.high = OrderStatistic(differences, count + 1 - rank.k);
  // Median of the differences (mean of the two middle ones for an even count).
  const double upper_middle = OrderStatistic(differences, count / 2 + 1);
  shift.estimate = count % 2 == 1
                       ? upper_middle
                       : (upper_middle + *std::max_element(differences.begin(), differences.begin() + count / 2)) / 2;
  return shift;
}

}  // namespace perfgate::stats
