#include "metrics/evidence.h"

namespace perfgate {

const FoldedProfile* FindProfile(const Evidence& evidence, const std::string& kind) {
  for (const auto& profile : evidence.profiles)
    if (profile.kind == kind) return &profile;
  return nullptr;
}

}  // namespace perfgate
