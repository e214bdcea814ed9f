#include "stats/signed_rank.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>

#include "stats/distributions.h"

namespace perfgate::stats {

namespace {

struct SignedRanks {
  double w_plus = 0;
  double tie_term = 0;  // sum over tie groups of |d| of t^3 - t
  int n = 0;
};

SignedRanks Rank(const std::vector<double>& differences) {
  std::vector<double> nonzero;
  for (double d : differences) {
    if (d != 0 && std::isfinite(d)) nonzero.push_back(d);
  }
  std::sort(nonzero.begin(), nonzero.end(), [](double a, double b) { return std::fabs(a) < std::fabs(b); });
  SignedRanks ranks;
  ranks.n = static_cast<int>(nonzero.size());
  for (size_t begin = 0; begin < nonzero.size();) {
    size_t end = begin + 1;
    while (end < nonzero.size() && std::fabs(nonzero[end]) == std::fabs(nonzero[begin])) ++end;
    const double midrank = (static_cast<double>(begin + 1) + static_cast<double>(end)) / 2;
    const double ties = static_cast<double>(end - begin);
    ranks.tie_term += ties * ties * ties - ties;
    for (size_t i = begin; i < end; ++i) {
      if (nonzero[i] > 0) ranks.w_plus += midrank;
    }
    begin = end;
  }
  return ranks;
}

// P(W+ >= w) and P(W+ <= w) under the exact null distribution (integer w).
std::pair<double, double> ExactTails(int n, double w) {
  const std::vector<uint64_t> counts = SignedRankCounts(n);
  const auto k = static_cast<size_t>(std::llround(w));
  double at_least = 0, at_most = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (i >= k) at_least += static_cast<double>(counts[i]);
    if (i <= k) at_most += static_cast<double>(counts[i]);
  }
  const double total = std::ldexp(1.0, n);
  return {at_least / total, at_most / total};
}

double NormalPValue(const SignedRanks& ranks, Alternative alternative) {
  const double n = ranks.n;
  const double mean = n * (n + 1) / 4;
  const double variance = n * (n + 1) * (2 * n + 1) / 24 - ranks.tie_term / 48;
  if (!(variance > 0)) return 1;
  const double sd = std::sqrt(variance);
  switch (alternative) {
    case Alternative::kCandidateGreater:
      return NormalSurvival((ranks.w_plus - mean - 0.5) / sd);
    case Alternative::kCandidateLess:
      return NormalCdf((ranks.w_plus - mean + 0.5) / sd);
    case Alternative::kTwoSided:
      return std::min(1.0, 2 * NormalSurvival((std::fabs(ranks.w_plus - mean) - 0.5) / sd));
  }
  return 1;
}

// Largest k with P(W+ <= k - 1) <= (1 - confidence) / 2, and the coverage
// 1 - 2 P(W+ <= k - 1) it achieves: the interval is [A(k), A(M + 1 - k)] of
// the M sorted Walsh averages.
std::pair<int64_t, double> CriticalRank(int n, double confidence) {
  const double tail = (1 - confidence) / 2;
  if (n <= kExactMaxPairs) {
    const std::vector<uint64_t> counts = SignedRankCounts(n);
    const double total = std::ldexp(1.0, n);
    std::pair<int64_t, double> rank{1, 1 - 2 * static_cast<double>(counts[0]) / total};
    double below = 0;  // sign assignments with W+ <= k - 1
    for (size_t k = 1; k < counts.size(); ++k) {
      below += static_cast<double>(counts[k - 1]);
      if (below / total > tail) break;
      rank = {static_cast<int64_t>(k), 1 - 2 * below / total};
    }
    return rank;
  }
  const double mean = n * (n + 1.0) / 4;
  const double sd = std::sqrt(n * (n + 1.0) * (2.0 * n + 1) / 24);
  const auto k = static_cast<int64_t>(std::floor(mean + 0.5 - NormalQuantile(1 - tail) * sd));
  if (k < 1) return {1, 1 - 2 * NormalCdf((0.5 - mean) / sd)};
  return {k, confidence};
}

}  // namespace

std::vector<uint64_t> SignedRankCounts(int n) {
  assert(n >= 0 && n <= 62);
  // Subsets of {1..n} by their sum: each rank is positive or not.
  std::vector<uint64_t> counts(static_cast<size_t>(n) * (n + 1) / 2 + 1, 0);
  counts[0] = 1;
  size_t top = 0;
  for (int rank = 1; rank <= n; ++rank) {
    top += static_cast<size_t>(rank);
    for (size_t w = top; w >= static_cast<size_t>(rank); --w) counts[w] += counts[w - rank];
  }
  return counts;
}

double SmallestSignedRankPValue(int n) { return std::ldexp(1.0, -n); }

double ExactSignedRankSize(int n, double alpha) {
  if (n > kExactMaxPairs) return alpha;
  const std::vector<uint64_t> counts = SignedRankCounts(n);
  const double total = std::ldexp(1.0, n);
  double size = 0, upper_tail = 0;
  for (size_t w = counts.size(); w-- > 0;) {
    upper_tail += static_cast<double>(counts[w]);
    if (upper_tail / total > alpha) break;
    size = upper_tail / total;
  }
  return size;
}

SignedRankResult WilcoxonSignedRank(const std::vector<double>& differences, Alternative alternative) {
  const SignedRanks ranks = Rank(differences);
  SignedRankResult result;
  result.w_plus = ranks.w_plus;
  result.n = ranks.n;
  if (ranks.n == 0) return result;
  result.exact = ranks.tie_term == 0 && ranks.n <= kExactMaxPairs;
  if (!result.exact) {
    result.p_value = NormalPValue(ranks, alternative);
    return result;
  }
  const auto [greater, less] = ExactTails(ranks.n, ranks.w_plus);
  switch (alternative) {
    case Alternative::kCandidateGreater:
      result.p_value = greater;
      break;
    case Alternative::kCandidateLess:
      result.p_value = less;
      break;
    case Alternative::kTwoSided:
      result.p_value = std::min(1.0, 2 * std::min(greater, less));
      break;
  }
  return result;
}

ShiftEstimate PairedShift(const std::vector<double>& differences, double confidence) {
  std::vector<double> d;
  for (double x : differences) {
    if (std::isfinite(x)) d.push_back(x);
  }
  const int n = static_cast<int>(d.size());
  if (n == 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan, nan, 0};
  }
  std::vector<double> walsh;
  walsh.reserve(static_cast<size_t>(n) * (n + 1) / 2);
  for (int i = 0; i < n; ++i) {
    for (int j = i; j < n; ++j) walsh.push_back((d[i] + d[j]) / 2);
  }
  std::sort(walsh.begin(), walsh.end());
  const auto m = static_cast<int64_t>(walsh.size());
  const double estimate =
      m % 2 == 1 ? walsh[static_cast<size_t>(m / 2)] : (walsh[static_cast<size_t>(m / 2 - 1)] + walsh[static_cast<size_t>(m / 2)]) / 2;
  auto [k, achieved] = CriticalRank(n, confidence);
  k = std::clamp<int64_t>(k, 1, (m + 1) / 2);
  return {estimate, walsh[static_cast<size_t>(k - 1)], walsh[static_cast<size_t>(m - k)], achieved};
}

double MinimumDetectablePairedEffect(int n, double sd_log, double alpha, double power) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  if (n < 2 || SmallestSignedRankPValue(n) > alpha) return kInfinity;
  const double size = ExactSignedRankSize(n, alpha);
  const double dof = n - 1.0;
  const double t = StudentTQuantile(1 - size, dof) + StudentTQuantile(power, dof);
  const double asymptotic_relative_efficiency = 3 / std::numbers::pi;
  return std::expm1(t * sd_log / std::sqrt(static_cast<double>(n)) / std::sqrt(asymptotic_relative_efficiency));
}

}  // namespace perfgate::stats
