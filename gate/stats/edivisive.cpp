#include "stats/edivisive.h"

#include <algorithm>
#include <cmath>

#include "stats/descriptive.h"
#include "stats/welch_t_test.h"

namespace perfgate::stats {
namespace {

// (n m / (n + m)) (2 between / (n m) - within_x / C(n, 2) - within_y / C(m, 2)),
// from sums of |a - b| over the pairs between the sides and within each.
double EnergyFromSums(double n, double m, double between, double within_x, double within_y) {
  if (n < 2 || m < 2) return 0;
  return n * m / (n + m) * (2 * between / (n * m) - 2 * within_x / (n * (n - 1)) - 2 * within_y / (m * (m - 1)));
}

double DistanceSum(const std::vector<double>& values, size_t i, size_t from, size_t to) {
  double sum = 0;
  for (size_t j = from; j < to; ++j) sum += std::fabs(values[i] - values[j]);
  return sum;
}

// Every split of [lo, hi) in one pass: moving values[tau] from the right
// side to the left changes the three sums by its distances to either side,
// so the scan is O(n^2) time and O(1) memory.
size_t BestSplitOf(const std::vector<double>& values, size_t lo, size_t hi, size_t min_segment) {
  double within_x = 0, between = 0, within_y = 0;
  for (size_t i = lo; i < hi; ++i) within_y += DistanceSum(values, i, i + 1, hi);
  size_t best = hi;
  double best_energy = 0;
  for (size_t tau = lo + 1; tau + min_segment <= hi; ++tau) {
    size_t moved = tau - 1;
    double to_left = DistanceSum(values, moved, lo, moved);
    double to_right = DistanceSum(values, moved, tau, hi);
    within_x += to_left;
    within_y -= to_right;
    between += to_right - to_left;
    if (tau < lo + min_segment) continue;
    double e =
        EnergyFromSums(static_cast<double>(tau - lo), static_cast<double>(hi - tau), between, within_x, within_y);
    if (e > best_energy) {
      best_energy = e;
      best = tau;
    }
  }
  return best;
}

std::vector<double> Slice(const std::vector<double>& values, size_t lo, size_t hi) {
  return std::vector<double>(values.begin() + static_cast<std::ptrdiff_t>(lo),
                             values.begin() + static_cast<std::ptrdiff_t>(hi));
}

void Divide(const std::vector<double>& values, size_t lo, size_t hi, const ChangePointOptions& options,
            std::vector<ChangePoint>& found) {
  size_t tau = BestSplitOf(values, lo, hi, options.min_segment);
  if (tau >= hi) return;
  WelchResult test = WelchTTest(Slice(values, lo, tau), Slice(values, tau, hi));
  if (!(test.p_value < options.max_p_value)) return;
  found.push_back({.index = tau, .p_value = test.p_value});
  Divide(values, lo, tau, options, found);
  Divide(values, tau, hi, options, found);
}

}  // namespace

double EnergyStatistic(const std::vector<double>& values, size_t lo, size_t tau, size_t hi) {
  double between = 0, within_x = 0, within_y = 0;
  for (size_t i = lo; i < tau; ++i) {
    within_x += DistanceSum(values, i, i + 1, tau);
    between += DistanceSum(values, i, tau, hi);
  }
  for (size_t j = tau; j < hi; ++j) within_y += DistanceSum(values, j, j + 1, hi);
  return EnergyFromSums(static_cast<double>(tau - lo), static_cast<double>(hi - tau), between, within_x, within_y);
}

size_t BestSplit(const std::vector<double>& values, size_t lo, size_t hi, size_t min_segment) {
  return BestSplitOf(values, lo, hi, std::max<size_t>(min_segment, 2));
}

std::vector<ChangePoint> FindChangePoints(const std::vector<double>& values, const ChangePointOptions& options) {
  ChangePointOptions o = options;
  o.min_segment = std::max<size_t>(o.min_segment, 2);  // the t-test needs two values a side
  std::vector<ChangePoint> found;
  if (values.size() < 2 * o.min_segment) return found;
  Divide(values, 0, values.size(), o, found);
  std::sort(found.begin(), found.end(), [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  for (size_t k = 0; k < found.size(); ++k) {
    size_t begin = k == 0 ? 0 : found[k - 1].index;
    size_t end = k + 1 < found.size() ? found[k + 1].index : values.size();
    found[k].mean_before = Mean(Slice(values, begin, found[k].index));
    found[k].mean_after = Mean(Slice(values, found[k].index, end));
  }
  return found;
}

}  // namespace perfgate::stats
