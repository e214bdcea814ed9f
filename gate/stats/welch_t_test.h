// Welch's two-sample t-test (unequal variances), for deciding whether a
// candidate change point splits a series into two parts of different means.
#pragma once

#include <vector>

namespace perfgate::stats {

// P(T <= t) for Student's t with `dof` > 0 degrees of freedom, through the
// regularized incomplete beta function; accurate to about 1e-12.
double StudentTCdf(double t, double dof);

struct WelchResult {
  double t = 0;        // (mean(b) - mean(a)) / standard error
  double dof = 0;      // Welch–Satterthwaite degrees of freedom
  double p_value = 1;  // two-sided
};

// Two-sided test of equal means. Each sample needs at least two values
// (p = 1 otherwise). When both samples have no spread, p is 0 if the means
// differ and 1 if they do not.
WelchResult WelchTTest(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace perfgate::stats
