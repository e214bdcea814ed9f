// Folding the per-CPU log-linear bucket arrays of a probe into one histogram.
#pragma once

#include <cstdint>
#include <vector>

#include "histogram.h"
#include "metrics/log_linear_histogram.h"

namespace perfgate {

// One bucket array (e.g. a field of ReadPerCpuTotal's result) as a histogram.
inline LogLinearHistogram HistogramOfBuckets(const __u64 (&buckets)[PG_HIST_BUCKETS]) {
  LogLinearHistogram hist;
  for (unsigned i = 0; i < PG_HIST_BUCKETS; ++i) hist.AddBucket(i, buckets[i]);
  return hist;
}

// Each element of `per_cpu` has a `hist[PG_HIST_BUCKETS]` member.
template <class Stats>
LogLinearHistogram MergeCpuHistograms(const std::vector<Stats>& per_cpu) {
  LogLinearHistogram merged;
  for (const Stats& cpu : per_cpu) {
    for (unsigned i = 0; i < PG_HIST_BUCKETS; ++i) merged.AddBucket(i, cpu.hist[i]);
  }
  return merged;
}

}  // namespace perfgate
