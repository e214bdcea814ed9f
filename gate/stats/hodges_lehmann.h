// Hodges–Lehmann estimate of the shift between two samples, with the
// distribution-free confidence interval that inverts the Mann–Whitney test
// (Bauer 1972; Hollander & Wolfe, ch. 4).
#pragma once

#include <vector>

namespace perfgate::stats {

struct ShiftEstimate {
  double estimate = 0;  // median of all pairwise differences candidate - baseline
  double low = 0;
  double high = 0;
  double confidence = 0;  // achieved coverage; >= the requested one unless the samples are too small
};

// Shift "candidate - baseline" at the requested two-sided confidence (e.g. 0.95).
// For sizes up to kExactMaxSampleSize the interval ends come from the exact U
// distribution, else from its normal approximation. When the samples are too
// small for the requested confidence, the interval is the full range of the
// pairwise differences and `confidence` says what it achieves.
// Apply to log values to get a ratio: exp(estimate) - 1 is a relative change.
ShiftEstimate HodgesLehmannShift(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                 double confidence);

}  // namespace perfgate::stats
