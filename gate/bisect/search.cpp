#include "bisect/search.h"

#include <cstdlib>

namespace perfgate {

BisectSearch::BisectSearch(size_t count) : states_(count, CommitState::kUntested), bad_(count - 1) {
  states_[bad_] = CommitState::kBad;
}

std::optional<size_t> BisectSearch::Next() const {
  // Midpoint of the open range (good_, bad_); nearest untested commit, the
  // older one on a tie.
  const long lo = good_, hi = static_cast<long>(bad_);
  const long middle = lo + (hi - lo) / 2;
  std::optional<size_t> best;
  long best_distance = 0;
  for (long i = lo + 1; i < hi; ++i) {
    if (states_[static_cast<size_t>(i)] != CommitState::kUntested) continue;
    const long distance = std::labs(i - middle);
    if (!best || distance < best_distance) {
      best = static_cast<size_t>(i);
      best_distance = distance;
    }
  }
  return best;
}

void BisectSearch::Record(size_t index, CommitState state) {
  states_[index] = state;
  if (state == CommitState::kGood && static_cast<long>(index) > good_) good_ = static_cast<long>(index);
  if (state == CommitState::kBad && index < bad_) bad_ = index;
}

std::vector<size_t> BisectSearch::Suspects() const {
  std::vector<size_t> out;
  for (long i = good_ + 1; i < static_cast<long>(bad_); ++i) {
    if (states_[static_cast<size_t>(i)] != CommitState::kGood) out.push_back(static_cast<size_t>(i));
  }
  out.push_back(bad_);
  return out;
}

int ExpectedSteps(size_t count) {
  int steps = 0;
  while ((size_t{1} << steps) < count) ++steps;
  return steps;
}

}  // namespace perfgate
