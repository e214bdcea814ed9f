#include "metrics/log_linear_histogram.h"

#include <algorithm>
#include <cmath>

extern "C" {
#include "histogram.h"
}

namespace perfgate {

unsigned LogLinearHistogram::BucketIndex(uint64_t value) { return pg_hist_index(value); }

uint64_t LogLinearHistogram::BucketLower(unsigned index) {
  if (index < PG_HIST_SUB_COUNT) return index;
  unsigned octave = index >> PG_HIST_SUB_BITS;
  uint64_t sub = index & (PG_HIST_SUB_COUNT - 1);
  return (PG_HIST_SUB_COUNT + sub) << (octave - 1);
}

uint64_t LogLinearHistogram::BucketUpper(unsigned index) {
  if (index < PG_HIST_SUB_COUNT) return index + 1;
  unsigned octave = index >> PG_HIST_SUB_BITS;
  uint64_t width = uint64_t{1} << (octave - 1);
  uint64_t lower = BucketLower(index);
  // The last bucket would overflow; saturate.
  return lower > UINT64_MAX - width ? UINT64_MAX : lower + width;
}

void LogLinearHistogram::Record(uint64_t value, uint64_t count) { AddBucket(BucketIndex(value), count); }

void LogLinearHistogram::AddBucket(unsigned index, uint64_t count) {
  if (count == 0 || index >= PG_HIST_BUCKETS) return;
  count_ += count;
  // Buckets mostly arrive in ascending order (BPF maps are read that way).
  if (buckets_.empty() || buckets_.back().first < index) {
    buckets_.emplace_back(index, count);
    return;
  }
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), index,
                             [](const Bucket& b, unsigned i) { return b.first < i; });
  if (it != buckets_.end() && it->first == index) {
    it->second += count;
  } else {
    buckets_.insert(it, Bucket{index, count});
  }
}

uint64_t LogLinearHistogram::CountAt(unsigned index) const {
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), index,
                             [](const Bucket& b, unsigned i) { return b.first < i; });
  return it != buckets_.end() && it->first == index ? it->second : 0;
}

void LogLinearHistogram::Merge(const LogLinearHistogram& other) {
  std::vector<Bucket> merged;
  merged.reserve(buckets_.size() + other.buckets_.size());
  auto a = buckets_.cbegin();
  auto b = other.buckets_.cbegin();
  while (a != buckets_.cend() || b != other.buckets_.cend()) {
    if (b == other.buckets_.cend() || (a != buckets_.cend() && a->first < b->first)) {
      merged.push_back(*a++);
    } else if (a == buckets_.cend() || b->first < a->first) {
      merged.push_back(*b++);
    } else {
      merged.emplace_back(a->first, a->second + b->second);
      ++a;
      ++b;
    }
  }
  buckets_ = std::move(merged);
  count_ += other.count_;
}

double LogLinearHistogram::Quantile(double q) const {
  if (count_ == 0) return 0.0;
  q = std::clamp(q, 0.0, 1.0);
  // Rank in [0, count): the value below which a fraction q of samples lie.
  double rank = q * static_cast<double>(count_);
  uint64_t seen = 0;
  for (const auto& [index, count] : buckets_) {
    if (static_cast<double>(seen + count) >= rank) {
      double lower = static_cast<double>(BucketLower(index));
      double upper = static_cast<double>(BucketUpper(index));
      double within = (rank - static_cast<double>(seen)) / static_cast<double>(count);
      return lower + std::clamp(within, 0.0, 1.0) * (upper - lower);
    }
    seen += count;
  }
  return static_cast<double>(BucketUpper(buckets_.rbegin()->first));
}

double LogLinearHistogram::Mean() const {
  if (count_ == 0) return 0.0;
  double sum = 0;
  for (const auto& [index, count] : buckets_) {
    double mid = (static_cast<double>(BucketLower(index)) + static_cast<double>(BucketUpper(index))) / 2.0;
    sum += mid * static_cast<double>(count);
  }
  return sum / static_cast<double>(count_);
}

double LogLinearHistogram::Max() const {
  if (count_ == 0) return 0.0;
  // Largest integer that the highest non-empty bucket can hold.
  return static_cast<double>(BucketUpper(buckets_.rbegin()->first) - 1);
}

}  // namespace perfgate

static_assert(perfgate::LogLinearHistogram::kBucketCount == PG_HIST_BUCKETS, "histogram layout out of sync");
