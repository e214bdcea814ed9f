#include "stats/sequential.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "stats/distributions.h"

namespace perfgate::stats {

namespace {

// Integration grid for Z on the continuation region (kLow, b), Simpson's rule:
// the boundaries match published tables to 1e-3 (tests/unit/sequential_test.cpp).
constexpr double kLow = -8;
constexpr double kStep = 0.05;

double Phi(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi); }

// Sub-density of Z on a uniform grid over (kLow, upper), with Simpson weights.
struct Density {
  double upper = 0;
  std::vector<double> z;
  std::vector<double> weighted;  // density * Simpson weight * step
};

Density Grid(double upper) {
  Density d;
  d.upper = upper;
  // An odd number of points for Simpson's rule; at least 3.
  int points = std::max(3, static_cast<int>(std::ceil((upper - kLow) / kStep)) + 1);
  if (points % 2 == 0) ++points;
  const double h = (upper - kLow) / (points - 1);
  d.z.resize(points);
  d.weighted.resize(points);
  for (int i = 0; i < points; ++i) {
    d.z[i] = kLow + i * h;
    const double simpson = i == 0 || i == points - 1 ? 1 : (i % 2 == 1 ? 4 : 2);
    d.weighted[i] = simpson * h / 3;
  }
  return d;
}

// P(first crossing at this look | continued so far) from the previous look's
// density: the chance that Z at t moves above `b` from each grid point.
double CrossingProbability(const Density& previous, double t_previous, double t, double b) {
  const double sd = std::sqrt(t - t_previous);
  double p = 0;
  for (size_t i = 0; i < previous.z.size(); ++i) {
    p += previous.weighted[i] * NormalSurvival((b * std::sqrt(t) - previous.z[i] * std::sqrt(t_previous)) / sd);
  }
  return p;
}

// The density of Z at t on (kLow, b), carried from the previous look.
Density Propagate(const Density& previous, double t_previous, double t, double b) {
  Density next = Grid(b);
  const double sd = std::sqrt(t - t_previous);
  const double scale = std::sqrt(t) / sd;
  for (size_t j = 0; j < next.z.size(); ++j) {
    double f = 0;
    for (size_t i = 0; i < previous.z.size(); ++i) {
      f += previous.weighted[i] * Phi((next.z[j] * std::sqrt(t) - previous.z[i] * std::sqrt(t_previous)) / sd);
    }
    next.weighted[j] *= f * scale;
  }
  return next;
}

// Boundary b with CrossingProbability(...) == target, by bisection (the
// crossing probability falls as b rises).
double SolveBoundary(const Density& previous, double t_previous, double t, double target) {
  double lo = -5, hi = 40;
  for (int i = 0; i < 100 && hi - lo > 1e-7; ++i) {
    const double mid = 0.5 * (lo + hi);
    (CrossingProbability(previous, t_previous, t, mid) > target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

double ObrienFlemingSpending(double t, double alpha) {
  if (t <= 0) return 0;
  if (t >= 1) return alpha;
  return 2 * NormalSurvival(NormalQuantile(1 - alpha / 2) / std::sqrt(t));
}

std::vector<double> SequentialBoundaries(const std::vector<double>& t, double alpha) {
  std::vector<double> bounds;
  if (t.empty()) return bounds;
  double spent = ObrienFlemingSpending(t[0], alpha);
  bounds.push_back(spent > 0 ? NormalQuantile(1 - spent) : HUGE_VAL);
  if (t.size() == 1) return bounds;
  // The first look's density on its continuation region: the standard normal.
  Density density = Grid(std::min(bounds[0], 40.0));
  for (size_t i = 0; i < density.z.size(); ++i) density.weighted[i] *= Phi(density.z[i]);
  for (size_t k = 1; k < t.size(); ++k) {
    const double cumulative = ObrienFlemingSpending(t[k], alpha);
    const double target = cumulative - spent;
    spent = cumulative;
    const double b = target > 0 ? SolveBoundary(density, t[k - 1], t[k], target) : HUGE_VAL;
    bounds.push_back(b);
    if (k + 1 < t.size()) density = Propagate(density, t[k - 1], t[k], std::min(b, 40.0));
  }
  return bounds;
}

std::vector<double> SequentialLevels(const std::vector<double>& t, double alpha) {
  std::vector<double> levels;
  for (double b : SequentialBoundaries(t, alpha)) levels.push_back(NormalSurvival(b));
  return levels;
}

double TwoSampleInformation(double n1, double n2) {
  if (n1 <= 0 || n2 <= 0) return 0;
  return 1 / (1 / n1 + 1 / n2);
}

}  // namespace perfgate::stats
