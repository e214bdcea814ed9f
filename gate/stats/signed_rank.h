// Paired comparison: the Wilcoxon signed-rank test and the one-sample
// Hodges–Lehmann estimate of the within-pair change, with the
// distribution-free interval that inverts the same test (Hollander & Wolfe,
// ch. 3). perfgate ab runs the baseline and the candidate in interleaved
// pairs that share the host's state of the moment; the difference within a
// pair cancels what the two shared (drift, a neighbour's burst), which a
// two-sample test of the pooled values has to count as noise.
#pragma once

#include <cstdint>
#include <vector>

#include "stats/hodges_lehmann.h"
#include "stats/mann_whitney.h"

namespace perfgate::stats {

struct SignedRankResult {
  // W+: the sum of the ranks of |d| over the positive differences (zeros
  // dropped, ties of |d| at midranks). Ranges over [0, n(n+1)/2].
  double w_plus = 0;
  int n = 0;  // non-zero differences
  double p_value = 1;
  bool exact = false;  // exact null distribution (else normal approximation)
};

// At or below this many non-zero differences, and no tied |d|: exact p-value.
// 2^n orderings of signs, counted in 64-bit integers.
inline constexpr int kExactMaxPairs = 50;

// Test of "the differences (candidate - baseline) are centred on 0".
// kCandidateGreater: they tend to be positive. Normal approximation with the
// tie-corrected variance and a continuity correction above kExactMaxPairs or
// with tied |d|. No non-zero difference: p = 1.
SignedRankResult WilcoxonSignedRank(const std::vector<double>& differences, Alternative alternative);

// Null distribution of W+ for n differences without ties: counts[w] = number
// of the 2^n sign assignments with W+ = w, w = 0..n(n+1)/2. n <= 62.
std::vector<uint64_t> SignedRankCounts(int n);

// The smallest one-sided p-value n pairs can give: 2^-n.
double SmallestSignedRankPValue(int n);

// The actual size of the exact one-sided test at level alpha (the largest
// p <= alpha it can produce; 0 when none); alpha above kExactMaxPairs.
double ExactSignedRankSize(int n, double alpha);

// Centre of the differences: the median of the n(n+1)/2 Walsh averages
// (d_i + d_j) / 2, i <= j, and the interval between the order statistics that
// the signed-rank test's critical values select, at the requested two-sided
// confidence. Too few pairs for it: the full range, and `confidence` says
// what that achieves. Apply to differences of logs for a ratio.
ShiftEstimate PairedShift(const std::vector<double>& differences, double confidence);

// Smallest relative change (a fraction) the one-sided signed-rank test at
// level `alpha` detects with probability `power` from n pairs whose log
// differences have standard deviation `sd_log`: (t_{1-a} + t_power) sd_log /
// sqrt(n) on the log scale, t with n - 1 degrees of freedom, a = the exact
// test's size, times sqrt(pi/3) for the rank test's efficiency, as
// MinimumDetectableRelativeEffect does for two samples. +inf when n pairs
// cannot reach alpha.
double MinimumDetectablePairedEffect(int n, double sd_log, double alpha, double power = 0.8);

}  // namespace perfgate::stats
