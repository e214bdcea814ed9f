// The standard normal distribution, for the large-sample approximations of
// the rank test and the power calculation.
#pragma once

namespace perfgate::stats {

// P(Z <= z).
double NormalCdf(double z);
// P(Z > z), computed directly so that tiny upper tails keep their precision.
double NormalSurvival(double z);
// z with P(Z <= z) = p, for p in (0, 1); -inf / +inf at 0 / 1.
double NormalQuantile(double p);

}  // namespace perfgate::stats
