// Two-sample Kolmogorov–Smirnov test: the largest distance between the two
// samples' empirical distribution functions. The rank test asks whether one
// side tends to be larger; KS also sees a change of shape — a tail that grew
// in some repetitions only, a second mode — which is what tail statistics
// (p99 per repetition) do when a regression hits some runs and not others.
#pragma once

#include <vector>

#include "stats/mann_whitney.h"

namespace perfgate::stats {

struct KolmogorovSmirnovResult {
  double d = 0;  // the statistic in the direction tested, in [0, 1]
  double p_value = 1;
  bool exact = false;
};

// Exact p-value (lattice-path count, Hodges 1958) while m * n <= kKsExactMaxCells,
// otherwise the asymptotic distribution with Stephens' small-sample
// correction. kCandidateGreater tests D+ = max(F_baseline - F_candidate): the
// candidate's values are larger somewhere in the distribution. Ties across
// the samples make the test conservative. Empty samples give p = 1.
KolmogorovSmirnovResult KolmogorovSmirnov(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                          Alternative alternative);

inline constexpr long kKsExactMaxCells = 10000;

}  // namespace perfgate::stats
