#include "base/did_you_mean.h"

#include <algorithm>
#include <utility>

namespace perfgate {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

std::vector<std::string> ClosestMatches(const std::string& word, const std::vector<std::string>& candidates,
                                        size_t limit) {
  // A third of the word's length (at least 2 edits) still reads as a typo.
  const size_t tolerance = std::max<size_t>(2, word.size() / 3);
  std::vector<std::pair<size_t, std::string>> close;
  for (const std::string& c : candidates) {
    if (size_t d = EditDistance(word, c); d <= tolerance) close.emplace_back(d, c);
  }
  std::stable_sort(close.begin(), close.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < close.size() && i < limit; ++i) out.push_back(close[i].second);
  return out;
}

std::optional<std::string> ClosestMatch(const std::string& word, const std::vector<std::string>& candidates) {
  std::vector<std::string> best = ClosestMatches(word, candidates, 1);
  if (best.empty()) return std::nullopt;
  return best.front();
}

std::string DidYouMeanHint(const std::string& word, const std::vector<std::string>& candidates) {
  auto near = ClosestMatch(word, candidates);
  return near ? " (did you mean \"" + *near + "\"?)" : "";
}

}  // namespace perfgate
