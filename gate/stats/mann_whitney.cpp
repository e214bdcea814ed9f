#include "stats/mann_whitney.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>
#include <utility>

#include "stats/distributions.h"

namespace perfgate::stats {

namespace {

struct RankSum {
  double candidate_rank_sum = 0;  // midranks for ties
  double tie_term = 0;            // sum over tie groups of t^3 - t
};

RankSum RankCandidate(const std::vector<double>& baseline, const std::vector<double>& candidate) {
  std::vector<std::pair<double, bool>> pooled;  // (value, is_candidate)
  pooled.reserve(baseline.size() + candidate.size());
  for (double v : baseline) pooled.emplace_back(v, false);
  for (double v : candidate) pooled.emplace_back(v, true);
  std::sort(pooled.begin(), pooled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  RankSum result;
  for (size_t begin = 0; begin < pooled.size();) {
    size_t end = begin + 1;
    while (end < pooled.size() && pooled[end].first == pooled[begin].first) ++end;
    const double midrank = (static_cast<double>(begin + 1) + static_cast<double>(end)) / 2;
    const double ties = static_cast<double>(end - begin);
    result.tie_term += ties * ties * ties - ties;
    for (size_t i = begin; i < end; ++i) {
      if (pooled[i].second) result.candidate_rank_sum += midrank;
    }
    begin = end;
  }
  return result;
}

// P(U >= u) and P(U <= u) under the exact null distribution (integer u).
std::pair<double, double> ExactTails(int m, int n, double u) {
  const std::vector<uint64_t> counts = MannWhitneyUCounts(m, n);
  const auto k = static_cast<size_t>(std::llround(u));
  uint64_t total = 0, at_least = 0, at_most = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    total += counts[i];
    if (i >= k) at_least += counts[i];
    if (i <= k) at_most += counts[i];
  }
  const auto t = static_cast<double>(total);
  return {static_cast<double>(at_least) / t, static_cast<double>(at_most) / t};
}

double ExactPValue(int m, int n, double u, Alternative alternative) {
  const auto [greater, less] = ExactTails(m, n, u);
  switch (alternative) {
    case Alternative::kCandidateGreater:
      return greater;
    case Alternative::kCandidateLess:
      return less;
    case Alternative::kTwoSided:
      return std::min(1.0, 2 * std::min(greater, less));
  }
  return 1;
}

double NormalPValue(int m, int n, double u, double tie_term, Alternative alternative) {
  const double mn = static_cast<double>(m) * n;
  const double N = static_cast<double>(m) + n;
  const double mean = mn / 2;
  const double variance = mn / 12 * ((N + 1) - tie_term / (N * (N - 1)));
  if (!(variance > 0)) return 1;  // every value tied: no evidence either way
  const double sd = std::sqrt(variance);
  // Continuity correction: U moves in steps of 1/2 (ties) or 1; half a step
  // towards the mean keeps small-sample p-values from being optimistic.
  switch (alternative) {
    case Alternative::kCandidateGreater:
      return NormalSurvival((u - mean - 0.5) / sd);
    case Alternative::kCandidateLess:
      return NormalCdf((u - mean + 0.5) / sd);
    case Alternative::kTwoSided:
      return std::min(1.0, 2 * NormalSurvival((std::fabs(u - mean) - 0.5) / sd));
  }
  return 1;
}

}  // namespace

std::vector<uint64_t> MannWhitneyUCounts(int m, int n) {
  assert(m >= 0 && n >= 0 && m + n <= 66);
  if (n > m) std::swap(m, n);  // same distribution; fewer passes with the smaller n
  // The generating function of U is the Gaussian binomial coefficient
  //   [m+n choose n]_q = prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i)
  // (Harding 1984). After step i the polynomial is [m+i choose i]_q, whose
  // coefficients are non-negative and sum to C(m+i, i); the intermediate after
  // the multiplication is bounded by the previous step's coefficients. So
  // int64 never overflows while C(m+n, n) < 2^63, and the counts are exact.
  std::vector<int64_t> poly(static_cast<size_t>(m) * n + 1, 0);
  poly[0] = 1;
  for (int i = 1; i <= n; ++i) {
    const size_t degree = static_cast<size_t>(m) * i;  // degree after this step
    const size_t up = static_cast<size_t>(m) + i;
    for (size_t k = degree; k >= up; --k) poly[k] -= poly[k - up];  // * (1 - q^(m+i))
    const auto down = static_cast<size_t>(i);
    for (size_t k = down; k <= degree; ++k) poly[k] += poly[k - down];  // / (1 - q^i)
  }
  return {poly.begin(), poly.end()};
}

double SmallestOneSidedPValue(int m, int n) {
  const double log_choose = std::lgamma(m + n + 1.0) - std::lgamma(m + 1.0) - std::lgamma(n + 1.0);
  return std::exp(-log_choose);
}

double ExactTestSize(int m, int n, double alpha) {
  if (m > kExactMaxSampleSize || n > kExactMaxSampleSize) return alpha;
  const std::vector<uint64_t> counts = MannWhitneyUCounts(m, n);
  const auto total = static_cast<double>(std::accumulate(counts.begin(), counts.end(), uint64_t{0}));
  double size = 0;
  uint64_t upper_tail = 0;  // orderings with U >= u
  for (size_t u = counts.size(); u-- > 0;) {
    upper_tail += counts[u];
    const double p = static_cast<double>(upper_tail) / total;
    if (p > alpha) break;
    size = p;
  }
  return size;
}

MannWhitneyResult MannWhitneyU(const std::vector<double>& baseline, const std::vector<double>& candidate,
                               Alternative alternative) {
  const int m = static_cast<int>(baseline.size());
  const int n = static_cast<int>(candidate.size());
  MannWhitneyResult result;
  if (m == 0 || n == 0) return result;
  const RankSum ranks = RankCandidate(baseline, candidate);
  result.u = ranks.candidate_rank_sum - static_cast<double>(n) * (n + 1) / 2;
  result.exact = ranks.tie_term == 0 && m <= kExactMaxSampleSize && n <= kExactMaxSampleSize;
  result.p_value = result.exact ? ExactPValue(m, n, result.u, alternative)
                                : NormalPValue(m, n, result.u, ranks.tie_term, alternative);
  return result;
}

}  // namespace perfgate::stats
