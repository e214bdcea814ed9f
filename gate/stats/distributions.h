// The standard normal and Student t distributions, for the large-sample
// approximation of the rank test and for the power calculation.
#pragma once

namespace perfgate::stats {

// P(Z <= z).
double NormalCdf(double z);
// P(Z > z), computed directly so that tiny upper tails keep their precision.
double NormalSurvival(double z);
// z with P(Z <= z) = p, for p in (0, 1); -inf / +inf at 0 / 1.
double NormalQuantile(double p);
// Quantile of Student's t with `dof` degrees of freedom, by the Cornish–Fisher
// expansion around the normal quantile (Abramowitz & Stegun 26.7.5); relative
// error below 1e-3 for dof >= 5 and p in [0.001, 0.999], enough for a power
// calculation.
double StudentTQuantile(double p, double dof);

}  // namespace perfgate::stats
