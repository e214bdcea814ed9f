#include "report/frame_growth.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

namespace perfgate {
namespace {

struct Shares {
  double inclusive = 0;
  double self = 0;
};

// Inclusive and self share of every function of `profile`.
std::map<std::string, Shares, std::less<>> SharesOf(const FoldedProfile& profile) {
  std::map<std::string, Shares, std::less<>> shares;
  const double total = static_cast<double>(ProfileDenominator(profile));
  if (total <= 0) return shares;
  std::set<std::string_view> seen;
  for (const auto& [stack, weight] : profile.stacks) {
    if (weight == 0) continue;
    const double share = static_cast<double>(weight) / total;
    std::vector<std::string_view> frames = SplitStack(stack);
    seen.clear();
    for (std::string_view frame : frames) {
      if (!seen.insert(frame).second) continue;
      auto it = shares.find(frame);
      if (it == shares.end()) it = shares.emplace(std::string(frame), Shares{}).first;
      it->second.inclusive += share;
    }
    shares.find(frames.back())->second.self += share;
  }
  return shares;
}

// Growth differences below this (percentage points) are rounding, not growth.
constexpr double kSameStackPp = 1e-9;

// Each user stack's share of `profile` (its kernel frames dropped), keyed by
// the user frames joined with ';'.
std::map<std::string, double> UserStackShares(const FoldedProfile& profile) {
  std::map<std::string, double> shares;
  const double total = static_cast<double>(ProfileDenominator(profile));
  if (total <= 0) return shares;
  for (const auto& [stack, weight] : profile.stacks) {
    std::string user;
    for (std::string_view frame : SplitStack(stack)) {
      if (FrameKindOf(frame) == FrameKind::kKernel) continue;
      if (!user.empty()) user += ';';
      user += frame;
    }
    shares[user] += static_cast<double>(weight) / total;
  }
  return shares;
}

}  // namespace

bool IsBlockedTimeProfile(const FoldedProfile& profile) { return profile.unit == "ns"; }

std::vector<StackGrowth> TopStackGrowth(const FoldedProfile* baseline, const FoldedProfile& candidate, size_t n) {
  std::map<std::string, StackGrowth> rows;
  if (baseline != nullptr) {
    for (const auto& [stack, share] : UserStackShares(*baseline)) rows[stack].baseline_share = share;
  }
  for (const auto& [stack, share] : UserStackShares(candidate)) rows[stack].candidate_share = share;
  std::vector<std::pair<std::string, StackGrowth>> ranked(rows.begin(), rows.end());
  // rows is ordered by text, and the sort is stable: ties keep that order.
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second.DeltaPp() > b.second.DeltaPp() + kSameStackPp;
  });
  if (ranked.size() > n) ranked.resize(n);
  std::vector<StackGrowth> out;
  for (auto& [stack, row] : ranked) {
    if (!stack.empty()) {
      for (std::string_view frame : SplitStack(stack)) row.frames.emplace_back(frame);
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<FrameGrowth> TopFrameGrowth(const FoldedProfile& baseline, const FoldedProfile& candidate, size_t n) {
  std::map<std::string, FrameGrowth> rows;
  auto row = [&](const std::string& frame) -> FrameGrowth& {
    FrameGrowth& r = rows[frame];
    r.frame = frame;
    r.kind = FrameKindOf(frame);
    return r;
  };
  for (const auto& [frame, s] : SharesOf(baseline)) {
    FrameGrowth& r = row(frame);
    r.baseline_inclusive = s.inclusive;
    r.baseline_self = s.self;
  }
  for (const auto& [frame, s] : SharesOf(candidate)) {
    FrameGrowth& r = row(frame);
    r.candidate_inclusive = s.inclusive;
    r.candidate_self = s.self;
  }
  std::vector<FrameGrowth> out;
  out.reserve(rows.size());
  for (auto& [frame, r] : rows) out.push_back(std::move(r));
  // Shares are sums of doubles: differences below this are rounding, not growth.
  constexpr double kSame = 1e-9;
  std::stable_sort(out.begin(), out.end(), [](const FrameGrowth& a, const FrameGrowth& b) {
    double self_a = a.SelfDeltaPp(), self_b = b.SelfDeltaPp();
    if (std::abs(self_a - self_b) > kSame) return self_a > self_b;
    return a.InclusiveDeltaPp() > b.InclusiveDeltaPp() + kSame;
  });
  if (out.size() > n) out.resize(n);
  return out;
}

std::vector<FrameGrowth> TopFramesBySelf(const FoldedProfile& candidate, size_t n) {
  std::vector<FrameGrowth> out;
  for (const auto& [frame, s] : SharesOf(candidate)) {
    FrameGrowth r;
    r.frame = frame;
    r.kind = FrameKindOf(frame);
    r.candidate_inclusive = s.inclusive;
    r.candidate_self = s.self;
    out.push_back(std::move(r));
  }
  constexpr double kSame = 1e-12;
  std::stable_sort(out.begin(), out.end(), [](const FrameGrowth& a, const FrameGrowth& b) {
    if (std::abs(a.candidate_self - b.candidate_self) > kSame) return a.candidate_self > b.candidate_self;
    return a.candidate_inclusive > b.candidate_inclusive + kSame;
  });
  if (out.size() > n) out.resize(n);
  return out;
}

}  // namespace perfgate
