// Log-linear histogram (layout in bpf/histogram.h), the user-side twin of the
// per-CPU arrays the probes fill. Sparse: only non-empty buckets are stored,
// as (index, count) pairs sorted by index — a flat vector, because quantiles
// of thousands of histograms are on the compare hot path.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace perfgate {

class LogLinearHistogram {
 public:
  static constexpr unsigned kBucketCount = (64 - 5 + 1) * 32;  // PG_HIST_BUCKETS
  static unsigned BucketIndex(uint64_t value);
  static uint64_t BucketLower(unsigned index);
  // One past the largest value that lands in the bucket.
  static uint64_t BucketUpper(unsigned index);

  void Record(uint64_t value, uint64_t count = 1);
  void AddBucket(unsigned index, uint64_t count);
  void Merge(const LogLinearHistogram& other);

  uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Quantile q in [0,1], interpolated linearly inside the bucket.
  double Quantile(double q) const;
  // Mean from bucket midpoints.
  double Mean() const;
  double Max() const;
  using Bucket = std::pair<unsigned, uint64_t>;
  const std::vector<Bucket>& buckets() const { return buckets_; }
  // Count of one bucket (0 when empty).
  uint64_t CountAt(unsigned index) const;

 private:
  std::vector<Bucket> buckets_;
  uint64_t count_ = 0;
};

}  // namespace perfgate
