#include "stats/multiple_testing.h"

#include <algorithm>
#include <numeric>

namespace perfgate::stats {

namespace {

std::vector<size_t> AscendingOrder(const std::vector<double>& p_values) {
  std::vector<size_t> order(p_values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p_values[a] < p_values[b]; });
  return order;
}

}  // namespace

std::vector<double> HolmAdjust(const std::vector<double>& p_values) {
  const size_t m = p_values.size();
  const std::vector<size_t> order = AscendingOrder(p_values);
  std::vector<double> adjusted(m);
  double running_max = 0;  // step-down: an adjusted p never drops below an earlier one
  for (size_t rank = 0; rank < m; ++rank) {
    const size_t i = order[rank];
    running_max = std::max(running_max, std::min(1.0, static_cast<double>(m - rank) * p_values[i]));
    adjusted[i] = running_max;
  }
  return adjusted;
}

std::vector<double> BenjaminiHochbergAdjust(const std::vector<double>& p_values) {
  const size_t m = p_values.size();
  const std::vector<size_t> order = AscendingOrder(p_values);
  std::vector<double> adjusted(m);
  double running_min = 1;  // step-up: walk from the largest p down
  for (size_t rank = m; rank-- > 0;) {
    const size_t i = order[rank];
    running_min = std::min(running_min, static_cast<double>(m) / static_cast<double>(rank + 1) * p_values[i]);
    adjusted[i] = running_min;
  }
  return adjusted;
}

}  // namespace perfgate::stats
