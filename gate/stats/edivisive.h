// Change points of a series (one value per commit, oldest first) by
// E-divisive means with a t-test for significance, as Apache Otava (formerly
// Hunter) does it: find the split that maximizes the energy statistic
// between the two sides, keep it when Welch's t-test says the sides' means
// differ at the p threshold, and recurse into both sides.
#pragma once

#include <cstddef>
#include <vector>

namespace perfgate::stats {

// Defaults measured by tests/unit/edivisive_test.cpp (ChangePointRates):
// synthetic series with 1 % noise, fixed seeds, 2,000 series per cell,
// segments of at least 5:
//   p threshold                           1e-3    1e-4    1e-5
//   spurious, 60-value series             2.3 %   0.50 %  0.10 %
//   spurious, 150-value series            2.9 %   0.55 %  0.25 %
//   spurious, 60 values, heavy tails      1.0 %   0.25 %  0.10 %
//   5 % step, 7 values after, exact index 97.6 %  94.7 %  76.5 %
//   5 % step, 5 values after              85.8 %  52.6 %  27.8 %
//   10 % step, 5 values after             98.5 %  92.5 %  64.5 %
// 1e-4 finds a recent step a few nights after it and keeps spurious change
// points rare. The best split's p is biased low by the selection, so the
// usual 1e-3 is too lenient for a dashboard of many series.
struct ChangePointOptions {
  double max_p_value = 1e-4;  // a split is a change point when Welch's p is below this
  size_t min_segment = 5;     // values on each side of a split, at least
};

struct ChangePoint {
  size_t index = 0;        // first value after the change
  double mean_before = 0;  // of the segment before, up to the previous change point
  double mean_after = 0;   // of the segment after, up to the next change point
  double p_value = 1;      // Welch's two-sided p of the split when it was found
  // Values just before `index` that the search did not see (the trend leaves
  // out nights whose host was off, history/host_speed.h): the change lies
  // between before() and index.
  size_t left_out = 0;
  size_t before() const { return index - 1 - left_out; }
  double change_pct() const { return mean_before != 0 ? 100 * (mean_after / mean_before - 1) : 0; }
};

// Energy statistic of splitting values[lo, hi) at tau, with lo < tau < hi:
// (n m / (n + m)) (2 E|X - Y| - E|X - X'| - E|Y - Y'|) for X the n values
// before tau and Y the m values from tau on. 0 when either side has fewer
// than two values.
double EnergyStatistic(const std::vector<double>& values, size_t lo, size_t tau, size_t hi);

// The tau in [lo + min_segment, hi - min_segment] maximizing the energy
// statistic, or hi when the range is too short to split.
size_t BestSplit(const std::vector<double>& values, size_t lo, size_t hi, size_t min_segment);

// The significant change points of `values`, by index, with the means of the
// segments they separate in the final segmentation.
std::vector<ChangePoint> FindChangePoints(const std::vector<double>& values, const ChangePointOptions& options = {});

}  // namespace perfgate::stats
