// "Did you mean" suggestions for misspelt names (suite keys, probes, metrics).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace perfgate {

// Levenshtein distance.
size_t EditDistance(const std::string& a, const std::string& b);
// Candidates close enough to `word` to be plausible typos, closest first, at most `limit`.
std::vector<std::string> ClosestMatches(const std::string& word, const std::vector<std::string>& candidates,
                                        size_t limit);
// The closest plausible candidate, if any.
std::optional<std::string> ClosestMatch(const std::string& word, const std::vector<std::string>& candidates);
// " (did you mean \"x\"?)" for the closest plausible candidate, or "".
std::string DidYouMeanHint(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace perfgate
