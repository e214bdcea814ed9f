#include "metrics/evidence.h"

namespace perfgate {

const FoldedProfile* FindProfile(const Evidence& evidence, const std::string& kind) {
  for (const auto& profile : evidence.profiles)
    if (profile.kind == kind) return &profile;
  return nullptr;
}

const Evidence* FindEvidence(const std::vector<Evidence>& evidence, const std::string& side) {
  for (const Evidence& e : evidence)
    if (e.side == side) return &e;
  return nullptr;
}

std::string FormatCount(uint64_t count) {
  const std::string digits = std::to_string(count);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace perfgate
