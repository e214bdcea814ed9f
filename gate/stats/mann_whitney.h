// Mann–Whitney U (Wilcoxon rank-sum) test of a candidate sample against a
// baseline sample. Rank-based, so it needs no normality and one slow outlier
// repetition moves it by one rank, not by its size.
#pragma once

#include <cstdint>
#include <vector>

namespace perfgate::stats {

enum class Alternative {
  kTwoSided,
  kCandidateGreater,  // candidate values tend to be larger than the baseline's
  kCandidateLess,
};

struct MannWhitneyResult {
  // U of the candidate: pairs (baseline b, candidate c) with c > b, ties counting one half.
  // Ranges over [0, m*n]; m*n/2 is "no difference".
  double u = 0;
  double p_value = 1;
  bool exact = false;  // exact null distribution (else normal approximation)
};

// Both sizes at or below this, and no ties: exact p-value. C(60, 30) < 2^63, so
// the exact counts fit in 64-bit integers with room to spare.
inline constexpr int kExactMaxSampleSize = 30;

// Exact p-value for small samples without ties; otherwise the normal
// approximation with tie-corrected variance and continuity correction (as
// scipy.stats.mannwhitneyu). Empty samples give p = 1.
MannWhitneyResult MannWhitneyU(const std::vector<double>& baseline, const std::vector<double>& candidate,
                               Alternative alternative);

// Null distribution of U without ties: counts[u] = number of the C(m+n, n)
// orderings of m baseline and n candidate values with U = u, u = 0..m*n.
// Requires m + n <= 66 (so every count fits in int64).
std::vector<uint64_t> MannWhitneyUCounts(int m, int n);

// The smallest one-sided p-value any data (without ties) can give: 1 / C(m+n, n).
// The rank test cannot be significant below this, however large the change.
double SmallestOneSidedPValue(int m, int n);

// The actual size of the exact one-sided test at level alpha: the largest
// p-value <= alpha it can produce (0 when none). The test is discrete, so this
// can be well below alpha for small samples. Returns alpha for sizes above
// kExactMaxSampleSize, where the distribution is effectively continuous.
double ExactTestSize(int m, int n, double alpha);

}  // namespace perfgate::stats
