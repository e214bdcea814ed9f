#include "stats/edivisive.h"

#include <algorithm>
#include <cmath>

#include "stats/descriptive.h"
#include "stats/welch_t_test.h"

namespace perfgate::stats {
namespace {

// Sums of |values[i] - values[j]| over rectangles of (i, j), each in O(1)
// after an O(n^2) table of prefix sums.
class DistanceSums {
 public:
  explicit DistanceSums(const std::vector<double>& values) : n_(values.size()), prefix_((n_ + 1) * (n_ + 1), 0) {
    for (size_t i = 0; i < n_; ++i) {
      for (size_t j = 0; j < n_; ++j) {
        At(i + 1, j + 1) = std::fabs(values[i] - values[j]) + At(i, j + 1) + At(i + 1, j) - At(i, j);
      }
    }
  }
  // Sum over i in [i0, i1), j in [j0, j1).
  double Sum(size_t i0, size_t i1, size_t j0, size_t j1) const {
    return Get(i1, j1) - Get(i0, j1) - Get(i1, j0) + Get(i0, j0);
  }

 private:
  double& At(size_t i, size_t j) { return prefix_[i * (n_ + 1) + j]; }
  double Get(size_t i, size_t j) const { return prefix_[i * (n_ + 1) + j]; }
  size_t n_;
  std::vector<double> prefix_;
};

double Energy(const DistanceSums& d, size_t lo, size_t tau, size_t hi) {
  double n = static_cast<double>(tau - lo), m = static_cast<double>(hi - tau);
  if (n < 2 || m < 2) return 0;
  double between = d.Sum(lo, tau, tau, hi) / (n * m);
  // Ordered pairs count each unordered pair twice; the diagonal is zero.
  double within_x = d.Sum(lo, tau, lo, tau) / (n * (n - 1));
  double within_y = d.Sum(tau, hi, tau, hi) / (m * (m - 1));
  return n * m / (n + m) * (2 * between - within_x - within_y);
}

size_t BestSplitOf(const DistanceSums& d, size_t lo, size_t hi, size_t min_segment) {
  size_t best = hi;
  double best_energy = 0;
  for (size_t tau = lo + min_segment; tau + min_segment <= hi; ++tau) {
    double e = Energy(d, lo, tau, hi);
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

void Divide(const std::vector<double>& values, const DistanceSums& d, size_t lo, size_t hi,
            const ChangePointOptions& options, std::vector<ChangePoint>& found) {
  size_t tau = BestSplitOf(d, lo, hi, options.min_segment);
  if (tau >= hi) return;
  WelchResult test = WelchTTest(Slice(values, lo, tau), Slice(values, tau, hi));
  if (!(test.p_value < options.max_p_value)) return;
  found.push_back({.index = tau, .p_value = test.p_value});
  Divide(values, d, lo, tau, options, found);
  Divide(values, d, tau, hi, options, found);
}

}  // namespace

double EnergyStatistic(const std::vector<double>& values, size_t lo, size_t tau, size_t hi) {
  return Energy(DistanceSums(values), lo, tau, hi);
}

size_t BestSplit(const std::vector<double>& values, size_t lo, size_t hi, size_t min_segment) {
  return BestSplitOf(DistanceSums(values), lo, hi, std::max<size_t>(min_segment, 2));
}

std::vector<ChangePoint> FindChangePoints(const std::vector<double>& values, const ChangePointOptions& options) {
  ChangePointOptions o = options;
  o.min_segment = std::max<size_t>(o.min_segment, 2);  // the t-test needs two values a side
  std::vector<ChangePoint> found;
  if (values.size() < 2 * o.min_segment) return found;
  DistanceSums d(values);
  Divide(values, d, 0, values.size(), o, found);
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
