#include "metrics/frames.h"

#include <algorithm>
#include <cctype>

namespace perfgate {
namespace {

constexpr std::string_view kKernelSuffix = "_[k]";

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// "module+0x1a2b": an address inside a module that had no symbol for it.
bool IsModuleOffset(std::string_view frame) {
  size_t plus = frame.rfind("+0x");
  if (plus == std::string_view::npos || plus + 3 == frame.size()) return false;
  for (char c : frame.substr(plus + 3)) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

FrameKind FrameKindOf(std::string_view frame) {
  if (EndsWith(frame, kKernelSuffix)) return FrameKind::kKernel;
  if (frame.empty() || frame == "[unknown]" || IsModuleOffset(frame)) return FrameKind::kUnknown;
  return FrameKind::kUser;
}

std::string ToString(FrameKind kind) {
  switch (kind) {
    case FrameKind::kUser:
      return "user";
    case FrameKind::kKernel:
      return "kernel";
    case FrameKind::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string FrameLabel(std::string_view frame) {
  if (frame.empty()) return "[empty]";
  if (EndsWith(frame, kKernelSuffix) && frame.size() > kKernelSuffix.size()) frame.remove_suffix(kKernelSuffix.size());
  return std::string(frame);
}

std::string ShortSource(std::string_view source) {
  const size_t slash = source.rfind('/');
  return std::string(slash == std::string_view::npos ? source : source.substr(slash + 1));
}

std::vector<std::string_view> SplitStack(std::string_view stack) {
  std::vector<std::string_view> frames;
  size_t start = 0;
  while (true) {
    size_t end = stack.find(';', start);
    frames.push_back(stack.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return frames;
}

uint64_t ProfileDenominator(const FoldedProfile& profile) {
  uint64_t sum = 0;
  for (const auto& [stack, weight] : profile.stacks) sum += weight;
  return std::max(sum, profile.total);
}

bool IsBlockedTimeProfile(const FoldedProfile& profile) { return profile.unit == "ns"; }

bool IsCountedProfile(const FoldedProfile& profile) { return profile.kind == "counted"; }

}  // namespace perfgate
