// Log-linear histogram (layout in bpf/histogram.h), the user-side twin of the
// per-CPU arrays the probes fill. Sparse: only non-empty buckets are stored.
#pragma once

#include <cstdint>
#include <map>
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
  // Mean from bucket midpoints (or the exact sum when values were recorded one by one).
  double Mean() const;
  double Max() const;
  const std::map<unsigned, uint64_t>& buckets() const { return buckets_; }

 private:
  std::map<unsigned, uint64_t> buckets_;
  uint64_t count_ = 0;
};

}  // namespace perfgate
