#include "stats/power.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "stats/distributions.h"
#include "stats/mann_whitney.h"

namespace perfgate::stats {

double MinimumDetectableRelativeEffect(int n1, int n2, double cv, double alpha, double power) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  if (n1 < 1 || n2 < 1 || SmallestOneSidedPValue(n1, n2) > alpha) return kInfinity;
  const double size = ExactTestSize(n1, n2, alpha);
  const double dof = std::max(1.0, n1 + n2 - 2.0);
  const double t = StudentTQuantile(1 - size, dof) + StudentTQuantile(power, dof);
  const double asymptotic_relative_efficiency = 3 / std::numbers::pi;
  const double log_shift = t * cv * std::sqrt(1.0 / n1 + 1.0 / n2) / std::sqrt(asymptotic_relative_efficiency);
  return std::expm1(log_shift);
}

}  // namespace perfgate::stats
