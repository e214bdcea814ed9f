#include "stats/welch_t_test.h"

#include <cmath>
#include <limits>

#include "stats/descriptive.h"

namespace perfgate::stats {
namespace {

// Continued fraction of the incomplete beta function, evaluated by the
// modified Lentz method; converges fast for x < (a + 1) / (a + b + 2).
double BetaContinuedFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEpsilon = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double result = d;
  for (int m = 1; m <= 500; ++m) {
    for (int odd = 0; odd < 2; ++odd) {
      double numerator = odd == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                                  : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
      d = 1 + numerator * d;
      if (std::fabs(d) < kTiny) d = kTiny;
      c = 1 + numerator / c;
      if (std::fabs(c) < kTiny) c = kTiny;
      d = 1 / d;
      result *= d * c;
      if (odd == 1 && std::fabs(d * c - 1) < kEpsilon) return result;
    }
  }
  return result;
}

// I_x(a, b), the regularized incomplete beta function.
double RegularizedBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double log_front = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  double front = std::exp(log_front);
  if (x < (a + 1) / (a + b + 2)) return front * BetaContinuedFraction(a, b, x) / a;
  return 1 - front * BetaContinuedFraction(b, a, 1 - x) / b;
}

}  // namespace

double StudentTCdf(double t, double dof) {
  if (std::isnan(t)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  // P(|T| > |t|) = I_{dof / (dof + t^2)}(dof / 2, 1 / 2).
  double tail = 0.5 * RegularizedBeta(dof / 2, 0.5, dof / (dof + t * t));
  return t > 0 ? 1 - tail : tail;
}

WelchResult WelchTTest(const std::vector<double>& a, const std::vector<double>& b) {
  WelchResult r;
  if (a.size() < 2 || b.size() < 2) return r;
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  double va = std::pow(StdDev(a), 2) / na, vb = std::pow(StdDev(b), 2) / nb;
  double diff = Mean(b) - Mean(a);
  if (va + vb == 0) {
    r.p_value = diff == 0 ? 1 : 0;
    r.t = diff == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), diff);
    return r;
  }
  r.t = diff / std::sqrt(va + vb);
  r.dof = std::pow(va + vb, 2) / (va * va / (na - 1) + vb * vb / (nb - 1));
  r.p_value = 2 * StudentTCdf(-std::fabs(r.t), r.dof);
  return r;
}

}  // namespace perfgate::stats
