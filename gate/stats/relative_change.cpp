#include "stats/relative_change.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "stats/descriptive.h"
#include "stats/hodges_lehmann.h"

namespace perfgate::stats {

namespace {

// SplitMix64 (Steele, Lea & Flood 2014): tiny, fast and statistically sound
// for resampling; the standard library's engines are slower and their
// distributions are not reproducible across library implementations.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

uint64_t SeedFrom(const std::vector<double>& baseline, const std::vector<double>& candidate) {
  SplitMix64 mixer(0x7065726667617465ULL);  // "perfgate"
  uint64_t seed = mixer.Next();
  for (const auto* sample : {&baseline, &candidate}) {
    for (double v : *sample) seed = SplitMix64(seed ^ std::bit_cast<uint64_t>(v)).Next();
    seed = SplitMix64(seed + sample->size()).Next();
  }
  return seed;
}

// Draws resamples of one sorted sample and returns their medians. Only the
// multiplicity of each order statistic matters, so a resample is a count per
// index and its median is found by walking the counts: O(n) with no sort.
class MedianResampler {
 public:
  explicit MedianResampler(std::vector<double> sorted) : sorted_(std::move(sorted)), counts_(sorted_.size()) {}

  double Draw(SplitMix64& rng) {
    std::fill(counts_.begin(), counts_.end(), 0);
    const auto n = static_cast<uint32_t>(sorted_.size());
    for (uint32_t drawn = 0; drawn < n; drawn += 2) {
      const uint64_t bits = rng.Next();  // two 32-bit draws; bias n / 2^32 is negligible
      ++counts_[(static_cast<uint64_t>(static_cast<uint32_t>(bits)) * n) >> 32];
      if (drawn + 1 < n) ++counts_[((bits >> 32) * n) >> 32];
    }
    // Order statistics (n - 1) / 2 and n / 2 (0-based) of the resample.
    const uint32_t lower_rank = (n - 1) / 2, upper_rank = n / 2;
    double lower = 0;
    uint32_t seen = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t next = seen + counts_[i];
      if (seen <= lower_rank && lower_rank < next) lower = sorted_[i];
      if (seen <= upper_rank && upper_rank < next) return (lower + sorted_[i]) / 2;
      seen = next;
    }
    return lower;  // unreachable: the counts sum to n
  }

 private:
  std::vector<double> sorted_;
  std::vector<uint32_t> counts_;
};

std::vector<double> Sorted(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values;
}

std::optional<std::vector<double>> Logs(const std::vector<double>& values) {
  std::vector<double> logs;
  logs.reserve(values.size());
  for (double v : values) {
    if (!(v > 0)) return std::nullopt;
    logs.push_back(std::log(v));
  }
  return logs;
}

}  // namespace

RelativeChange RelativeShiftOfLogs(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                   double confidence) {
  const auto log_baseline = Logs(baseline), log_candidate = Logs(candidate);
  if (!log_baseline || !log_candidate || baseline.empty() || candidate.empty()) {
    return {std::numeric_limits<double>::quiet_NaN(), std::nullopt, std::nullopt};
  }
  const ShiftEstimate shift = HodgesLehmannShift(*log_baseline, *log_candidate, confidence);
  return {std::expm1(shift.estimate), std::expm1(shift.low), std::expm1(shift.high)};
}

RelativeChange RelativeChangeOfMedians(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                       double confidence, int resamples) {
  RelativeChange result;
  const double baseline_median = Median(baseline);
  if (candidate.empty() || !(baseline_median > 0)) {
    result.change = std::numeric_limits<double>::quiet_NaN();
    return result;
  }
  result.change = Median(candidate) / baseline_median - 1;
  if (resamples < 1) return result;

  MedianResampler baseline_resampler(Sorted(baseline));
  MedianResampler candidate_resampler(Sorted(candidate));
  SplitMix64 rng(SeedFrom(baseline, candidate));
  std::vector<double> changes;
  changes.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double b = baseline_resampler.Draw(rng);
    const double c = candidate_resampler.Draw(rng);
    if (!(b > 0)) return result;  // the ratio is undefined for this data
    changes.push_back(c / b - 1);
  }
  const double tail = (1 - confidence) / 2;
  result.low = Quantile(changes, tail);
  result.high = Quantile(std::move(changes), 1 - tail);
  return result;
}

}  // namespace perfgate::stats
