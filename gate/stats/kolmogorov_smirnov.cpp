#include "stats/kolmogorov_smirnov.h"

#include <algorithm>
#include <cmath>

namespace perfgate::stats {

namespace {

// Largest F_baseline - F_candidate (`upper`) and F_candidate - F_baseline
// (`lower`) over every value, in units of 1 / (m n) so they are exact integers.
struct Distances {
  long upper = 0;
  long lower = 0;
};

Distances Distance(std::vector<double> baseline, std::vector<double> candidate) {
  std::sort(baseline.begin(), baseline.end());
  std::sort(candidate.begin(), candidate.end());
  const long m = static_cast<long>(baseline.size()), n = static_cast<long>(candidate.size());
  Distances d;
  size_t i = 0, j = 0;
  while (i < baseline.size() || j < candidate.size()) {
    // Step past every value equal to the next smallest one, on both sides.
    const double x = j == candidate.size() || (i < baseline.size() && baseline[i] <= candidate[j]) ? baseline[i]
                                                                                                   : candidate[j];
    while (i < baseline.size() && baseline[i] == x) ++i;
    while (j < candidate.size() && candidate[j] == x) ++j;
    const long diff = static_cast<long>(i) * n - static_cast<long>(j) * m;
    d.upper = std::max(d.upper, diff);
    d.lower = std::max(d.lower, -diff);
  }
  return d;
}

// P(statistic >= d) under the null by counting the orderings of m baseline
// and n candidate values whose path stays below d: cell (i, j) holds the
// share of orderings with i baseline and j candidate values first that never
// reached d. `two_sided`: |i n - j m| < d, else i n - j m < d.
double ExactTail(long m, long n, long d, bool two_sided) {
  std::vector<double> row(static_cast<size_t>(n) + 1, 0.0);
  auto inside = [&](long i, long j) {
    const long diff = i * n - j * m;
    return diff < d && (!two_sided || -diff < d);
  };
  // Probabilities, not counts: each step from (i, j) goes to the baseline
  // with chance (m - i) / (m + n - i - j), so nothing overflows.
  row[0] = 1;
  for (long j = 1; j <= n; ++j) row[j] = inside(0, j) ? row[j - 1] * (n - j + 1) / static_cast<double>(m + n - j + 1) : 0;
  for (long i = 1; i <= m; ++i) {
    std::vector<double> next(static_cast<size_t>(n) + 1, 0.0);
    for (long j = 0; j <= n; ++j) {
      if (!inside(i, j)) continue;
      const double remaining = static_cast<double>(m + n - (i - 1) - j);
      double p = row[j] * (m - i + 1) / (remaining + 0.0);  // from (i-1, j), a baseline value
      if (j > 0) p += next[j - 1] * (n - j + 1) / static_cast<double>(m + n - i - (j - 1));  // a candidate value
      next[j] = p;
    }
    row.swap(next);
  }
  return std::clamp(1 - row[n], 0.0, 1.0);
}

// Asymptotic tails with Stephens' correction of the effective size.
double AsymptoticTail(double d, double m, double n, bool two_sided) {
  const double en = std::sqrt(m * n / (m + n));
  const double lambda = (en + 0.12 + 0.11 / en) * d;
  if (!two_sided) return std::clamp(std::exp(-2 * lambda * lambda), 0.0, 1.0);
  double sum = 0;
  for (int k = 1; k <= 100; ++k) {
    const double term = std::exp(-2.0 * k * k * lambda * lambda);
    sum += (k % 2 == 1 ? 2 : -2) * term;
    if (term < 1e-12) break;
  }
  return std::clamp(sum, 0.0, 1.0);
}

}  // namespace

KolmogorovSmirnovResult KolmogorovSmirnov(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                          Alternative alternative) {
  KolmogorovSmirnovResult r;
  if (baseline.empty() || candidate.empty()) return r;
  const long m = static_cast<long>(baseline.size()), n = static_cast<long>(candidate.size());
  const Distances d = Distance(baseline, candidate);
  const bool two_sided = alternative == Alternative::kTwoSided;
  const long cells = alternative == Alternative::kCandidateGreater ? d.upper
                     : alternative == Alternative::kCandidateLess  ? d.lower
                                                                   : std::max(d.upper, d.lower);
  r.d = static_cast<double>(cells) / static_cast<double>(m * n);
  if (cells == 0) return r;
  if (m * n <= kKsExactMaxCells) {
    r.exact = true;
    if (alternative == Alternative::kCandidateLess) {
      // D- of (baseline, candidate) is D+ with the roles swapped.
      r.p_value = ExactTail(n, m, cells, false);
    } else {
      r.p_value = ExactTail(m, n, cells, two_sided);
    }
  } else {
    r.p_value = AsymptoticTail(r.d, static_cast<double>(m), static_cast<double>(n), two_sided);
  }
  return r;
}

}  // namespace perfgate::stats
