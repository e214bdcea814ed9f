// How large a change the rank test can detect with the repetitions at hand.
#pragma once

namespace perfgate::stats {

// Smallest relative change (a fraction: 0.12 = 12 %) that a one-sided
// Mann–Whitney test at level `alpha` detects with probability `power`, for
// samples of n1 and n2 values with coefficient of variation `cv`.
//
// Approximation: on the log scale a relative change is a shift and the CV is
// the standard deviation (for CV up to ~20 %). A two-sample z-test would need
// a shift of (z_{1-alpha} + z_{power}) cv sqrt(1/n1 + 1/n2); the rank test
// needs sqrt(pi/3) (1/ARE, ARE = 0.955 under normality) times that.
// The test is discrete, though: with no ties its smallest p-value is
// 1/C(n1+n2, n1). When that exceeds alpha, no change is detectable and the
// result is +inf.
double MinimumDetectableRelativeEffect(int n1, int n2, double cv, double alpha, double power = 0.8);

}  // namespace perfgate::stats
