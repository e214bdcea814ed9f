#include "stats/power.h"

#include <cmath>
#include <limits>
#include <numbers>

#include "stats/mann_whitney.h"
#include "stats/normal.h"

namespace perfgate::stats {

double MinimumDetectableRelativeEffect(int n1, int n2, double cv, double alpha, double power) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  if (n1 < 1 || n2 < 1 || SmallestOneSidedPValue(n1, n2) >= alpha) return kInfinity;
  const double asymptotic_relative_efficiency = 3 / std::numbers::pi;
  const double z = NormalQuantile(1 - alpha) + NormalQuantile(power);
  const double log_shift = z * cv * std::sqrt(1.0 / n1 + 1.0 / n2) / std::sqrt(asymptotic_relative_efficiency);
  return std::expm1(log_shift);
}

}  // namespace perfgate::stats
