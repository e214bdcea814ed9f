// The bisection's search over the commits between a good and a bad one, as
// `git bisect` does it: test the untested commit nearest the middle of the
// range still in doubt; a commit that cannot be judged (its build failed, its
// A/B stayed ambiguous) is skipped and its neighbours tried instead. Pure: the
// caller builds and measures.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace perfgate {

enum class CommitState { kUntested, kGood, kBad, kSkipped };

class BisectSearch {
 public:
  // `count` commits after the good endpoint, oldest first; the last is the
  // bad endpoint, known bad.
  explicit BisectSearch(size_t count);

  // The next commit to test, or nullopt when the range in doubt has none left.
  std::optional<size_t> Next() const;
  void Record(size_t index, CommitState state);

  // The commits that may be the first bad one: exactly one when the search
  // found it, else the skipped commits of the range in doubt and its bad end.
  std::vector<size_t> Suspects() const;
  CommitState state(size_t index) const { return states_[index]; }

 private:
  std::vector<CommitState> states_;
  long good_ = -1;  // the newest good commit (-1: the good endpoint)
  size_t bad_;      // the oldest bad commit
};

// Builds and comparisons a search of `count` commits needs when none is
// skipped: ceil(log2(count)).
int ExpectedSteps(size_t count);

}  // namespace perfgate
