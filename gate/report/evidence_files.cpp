#include "report/evidence_files.h"

#include <set>

#include "base/escape.h"

namespace perfgate {
namespace {

constexpr size_t kMaxStemBytes = 80;

bool SafeByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

}  // namespace

std::string FileStem(const std::string& name) {
  std::string stem;
  for (char c : name) {
    if (stem.size() == kMaxStemBytes) break;
    stem += SafeByte(c) ? c : '_';
  }
  // "." and ".." name directories, and a leading dot hides the file.
  size_t dots = stem.find_first_not_of('.');
  if (dots == std::string::npos) dots = stem.size();
  stem.replace(0, dots, std::string(dots, '_'));
  return stem.empty() ? "scenario" : stem;
}

void AssignFoldedFiles(RunResults& results) {
  std::set<std::string> taken, files;
  for (ScenarioResult& scenario : results.scenarios) {
    if (scenario.evidence.empty()) continue;
    std::string base = FileStem(scenario.name), stem = base;
    for (int n = 2; !taken.insert(stem).second; ++n) stem = base + "-" + std::to_string(n);
    // Unique over the run, whatever the sides and kinds say.
    for (Evidence& evidence : scenario.evidence) {
      for (FoldedProfile& profile : evidence.profiles) {
        std::string file = stem + "." + FileStem(evidence.side) + "." + FileStem(profile.kind);
        std::string unique = file;
        for (int n = 2; !files.insert(unique).second; ++n) unique = file + "-" + std::to_string(n);
        profile.file = std::string(kEvidenceDir) + "/" + unique + ".folded";
      }
    }
  }
}

std::string FoldedText(const FoldedProfile& profile) {
  std::string text;
  for (const auto& [stack, weight] : profile.stacks) {
    for (char c : SanitizeText(stack)) text += (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) ? '?' : c;
    text += " " + std::to_string(weight) + "\n";
  }
  return text;
}

}  // namespace perfgate
