// Adjusted p-values for a family of tests, returned in the input order.
// A test is rejected at level alpha when its adjusted p-value is < alpha.
#pragma once

#include <vector>

namespace perfgate::stats {

// Holm's step-down procedure: controls the family-wise error rate (the chance
// of any false rejection) under any dependence between the tests, and is
// uniformly more powerful than Bonferroni.
std::vector<double> HolmAdjust(const std::vector<double>& p_values);

// Benjamini–Hochberg step-up procedure: controls the false discovery rate
// (expected fraction of false rejections among rejections) for independent or
// positively dependent tests. More powerful than Holm when many tests are
// expected to change at once.
std::vector<double> BenjaminiHochbergAdjust(const std::vector<double>& p_values);

}  // namespace perfgate::stats
