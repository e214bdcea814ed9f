#include "explain/frame_growth.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

#include "stats/distributions.h"

namespace perfgate {
namespace {

struct Shares {
  double inclusive = 0;
  double self = 0;
  double self_in_interrupts = 0;    // the part of `self` taken in interrupt context
  bool outside_interrupts = false;  // on some stack outside interrupt context
};

// Where an interrupt (timer, device) or the softirqs run on its exit start
// on a stack: what runs from there on is the host's, charged to whichever
// thread was on the CPU.
bool IsInterruptEntry(std::string_view frame) {
  if (FrameKindOf(frame) != FrameKind::kKernel) return false;
  for (std::string_view entry :
       {"asm_sysvec_", "asm_common_interrupt", "asm_spurious_interrupt", "handle_softirqs", "__do_softirq"}) {
    if (frame.substr(0, entry.size()) == entry) return true;
  }
  return false;
}

// Where a process starts (exec) or has its address space torn down (at exit,
// or the old one at exec): once per process, and as long as one teardown of
// its mappings takes, so their samples come in clusters that sampling noise
// does not cover. An A/A pair of the evidence tests moved them by 2.6
// points of the profile (and, through the denominator, every frame of the
// workload's own code the other way), beyond an interval of 2.4.
bool IsProcessLifecycleEntry(std::string_view frame) {
  if (FrameKindOf(frame) != FrameKind::kKernel) return false;
  for (std::string_view entry : {"bprm_execve", "do_exit", "exit_mmap"}) {
    if (frame.substr(0, entry.size()) == entry) return true;
  }
  return false;
}

// `profile` without the samples of its processes' start and teardown
// (IsProcessLifecycleEntry): what the workload's code did while it ran.
FoldedProfile WithoutProcessLifecycle(const FoldedProfile& profile) {
  FoldedProfile out = profile;
  uint64_t removed = 0;
  for (auto it = out.stacks.begin(); it != out.stacks.end();) {
    const std::vector<std::string_view> frames = SplitStack(it->first);
    if (std::any_of(frames.begin(), frames.end(), IsProcessLifecycleEntry)) {
      removed += it->second;
      it = out.stacks.erase(it);
    } else {
      ++it;
    }
  }
  out.total = out.total > removed ? out.total - removed : 0;
  out.samples = out.samples > removed ? out.samples - removed : 0;
  return out;
}

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
    // A sample taken in an interrupt counts for the interrupt's frames, not
    // for the functions it interrupted: their time did not grow by it.
    const bool interrupted = std::any_of(frames.begin(), frames.end(), IsInterruptEntry);
    bool in_interrupt = false;
    for (std::string_view frame : frames) {
      in_interrupt = in_interrupt || IsInterruptEntry(frame);
      auto it = shares.find(frame);
      if (it == shares.end()) it = shares.emplace(std::string(frame), Shares{}).first;
      it->second.outside_interrupts = it->second.outside_interrupts || !in_interrupt;
      if ((interrupted && !in_interrupt) || !seen.insert(frame).second) continue;
      it->second.inclusive += share;
    }
    Shares& leaf = shares.find(frames.back())->second;
    leaf.self += share;
    if (interrupted) leaf.self_in_interrupts += share;
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

// Samples of a profile that counts samples (on-CPU), else 0. A counted
// profile (instructions, Valgrind) is exact: its shares have no interval.
uint64_t SampleCount(const FoldedProfile& profile) {
  return IsBlockedTimeProfile(profile) || IsCountedProfile(profile) ? 0 : ProfileDenominator(profile);
}

}  // namespace

double Dispersion(const FoldedProfile& baseline, const FoldedProfile& candidate) {
  const double df = static_cast<double>(baseline.spread_df) + static_cast<double>(candidate.spread_df);
  if (df <= 0) return 1;
  return std::max(1.0, (baseline.spread_chi_square + candidate.spread_chi_square) / df);
}

double GrowthZ(std::vector<double> max_z) {
  constexpr double kAlpha = 0.05;
  constexpr size_t kMinFamily = 10;
  std::sort(max_z.begin(), max_z.end(), std::greater<>());
  auto quantile = [](size_t k) { return stats::NormalQuantile(1 - kAlpha / static_cast<double>(k)); };
  for (size_t k = kMinFamily; k < max_z.size(); ++k) {
    // Functions that could reach significance at family size k: none more than k, so k is the family.
    if (max_z[k] < quantile(k)) return quantile(k);
  }
  return quantile(std::max(kMinFamily, max_z.size()));
}

namespace {

struct Adjusted {
  double difference = 0;
  double se = 0;
};

Adjusted AgrestiCaffo(double x1, double n1, double x2, double n2) {
  const double p1 = (x1 + 1) / (n1 + 2), p2 = (x2 + 1) / (n2 + 2);
  return {p2 - p1, std::sqrt(p1 * (1 - p1) / (n1 + 2) + p2 * (1 - p2) / (n2 + 2))};
}

}  // namespace

double ShareChangeMarginPp(double x1, double n1, double x2, double n2, double z) {
  return 100 * z * AgrestiCaffo(x1, n1, x2, n2).se;
}

bool ShareGrew(double x1, double n1, double x2, double n2, double z) {
  if (n1 <= 0 || n2 <= 0) return false;
  const Adjusted a = AgrestiCaffo(x1, n1, x2, n2);
  const double margin = z * a.se;
  const double plain = x2 / n2 - x1 / n1;
  return a.difference > margin && plain > margin && 100 * plain >= kMinGrowthPp - 1e-9;
}

std::vector<StackGrowth> TopStackGrowth(const FoldedProfile* baseline, const FoldedProfile& candidate, size_t n) {
  std::map<std::string, StackGrowth> rows;
  if (baseline != nullptr) {
    for (const auto& [stack, share] : UserStackShares(*baseline)) rows[stack].baseline_share = share;
  }
  for (const auto& [stack, share] : UserStackShares(candidate)) rows[stack].candidate_share = share;
  std::vector<std::pair<std::string, StackGrowth>> ranked(rows.begin(), rows.end());
  // rows is ordered by text, and the sort is stable: ties keep that order.
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second.DeltaPp() > b.second.DeltaPp() + kSameStackPp; });
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

std::vector<FrameGrowth> TopFrameGrowth(const FoldedProfile& baseline_profile, const FoldedProfile& candidate_profile,
                                        size_t n) {
  // The workload's running code: its processes' start and teardown are left
  // out of both sides (a counted profile has no kernel frames to leave out).
  const FoldedProfile baseline = WithoutProcessLifecycle(baseline_profile);
  const FoldedProfile candidate = WithoutProcessLifecycle(candidate_profile);
  std::map<std::string, FrameGrowth> rows;
  // Self shares outside interrupt context, baseline and candidate: what a
  // function's own code grew by. A kernel function that also runs on the way
  // out of interrupts (irqentry_exit_to_user_mode, after a timer tick or a
  // reschedule IPI) grows with the host's load there, and that is not named.
  std::map<std::string, std::pair<double, double>> own_self;
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
    r.interrupt = !s.outside_interrupts;
    own_self[frame].first = s.self - s.self_in_interrupts;
  }
  for (const auto& [frame, s] : SharesOf(candidate)) {
    FrameGrowth& r = row(frame);
    const bool seen_in_baseline = r.baseline_inclusive > 0;
    r.candidate_inclusive = s.inclusive;
    r.candidate_self = s.self;
    r.interrupt = (r.interrupt || !seen_in_baseline) && !s.outside_interrupts;
    own_self[frame].second = s.self - s.self_in_interrupts;
  }
  std::vector<FrameGrowth> out;
  out.reserve(rows.size());
  const uint64_t n1 = SampleCount(baseline), n2 = SampleCount(candidate);
  const bool counted = IsCountedProfile(baseline) && IsCountedProfile(candidate);
  // The intervals count samples as if each were drawn alone; shares that
  // spread from one repetition to the next beyond that count as fewer.
  const double dispersion = Dispersion(baseline, candidate);
  double z = 0;
  if (n1 > 0 && n2 > 0) {
    const double b = static_cast<double>(n1) / dispersion, c = static_cast<double>(n2) / dispersion;
    std::vector<double> max_z;
    for (const auto& [frame, r] : rows) {
      // The most a frame's samples could say: all of them on the candidate's side.
      const double samples = std::round(r.baseline_inclusive * b + r.candidate_inclusive * c);
      const Adjusted a = AgrestiCaffo(0, b, std::min(samples, c), c);
      max_z.push_back(a.se > 0 ? a.difference / a.se : 0);
    }
    z = GrowthZ(std::move(max_z));
  }
  for (auto& [frame, r] : rows) {
    if (n1 > 0 && n2 > 0) {
      // Shares of sampled profiles are sample counts over the total.
      const double b = static_cast<double>(n1) / dispersion, c = static_cast<double>(n2) / dispersion;
      r.baseline_samples = n1;
      r.candidate_samples = n2;
      r.self_margin_pp = ShareChangeMarginPp(r.baseline_self * b, b, r.candidate_self * c, c, z);
      r.inclusive_margin_pp = ShareChangeMarginPp(r.baseline_inclusive * b, b, r.candidate_inclusive * c, c, z);
      // A frame also seen outside interrupts grows by its share there; an
      // interrupt's own frames (never named) by all of theirs.
      const auto [own_b, own_c] = r.interrupt ? std::pair(r.baseline_self, r.candidate_self) : own_self[frame];
      r.self_grew = ShareGrew(own_b * b, b, own_c * c, c, z);
      r.inclusive_grew = ShareGrew(r.baseline_inclusive * b, b, r.candidate_inclusive * c, c, z);
    } else if (counted) {
      // Exact counts: a share grew when it grew by more than their repeats vary.
      r.self_grew = 100 * (r.candidate_self - r.baseline_self) >= kMinCountedGrowthPp;
      r.inclusive_grew = 100 * (r.candidate_inclusive - r.baseline_inclusive) >= kMinCountedGrowthPp;
    }
    out.push_back(std::move(r));
  }
  // Shares are sums of doubles: differences below this are rounding, not growth.
  constexpr double kSame = 1e-9;
  std::stable_sort(out.begin(), out.end(), [](const FrameGrowth& a, const FrameGrowth& b) {
    if (a.self_grew != b.self_grew) return a.self_grew;
    double self_a = a.SelfDeltaPp(), self_b = b.SelfDeltaPp();
    if (std::abs(self_a - self_b) > kSame) return self_a > self_b;
    return a.InclusiveDeltaPp() > b.InclusiveDeltaPp() + kSame;
  });
  if (out.size() > n) out.resize(n);
  return out;
}

namespace {

// GrownFrames of `all`, every function ranked (TopFrameGrowth's order).
std::vector<FrameGrowth> GrownOf(std::vector<FrameGrowth> all, size_t n) {
  std::vector<FrameGrowth> self, inclusive_only;
  for (FrameGrowth& r : all) {
    // Neither interrupt work (the host's) nor a frame that could not be
    // symbolized ("[unknown]", "libc.so.6+0x27249") names a function of the workload.
    if (r.interrupt || r.kind == FrameKind::kUnknown) continue;
    if (r.self_grew) {
      self.push_back(std::move(r));
    } else if (r.inclusive_grew) {
      inclusive_only.push_back(std::move(r));
    }
  }
  // `all` is in TopFrameGrowth's order: self growth beyond noise first, by size.
  std::stable_sort(inclusive_only.begin(), inclusive_only.end(), [](const FrameGrowth& a, const FrameGrowth& b) {
    return a.InclusiveDeltaPp() > b.InclusiveDeltaPp() + 1e-9;
  });
  for (FrameGrowth& r : inclusive_only) self.push_back(std::move(r));
  if (self.size() > n) self.resize(n);
  return self;
}

// UserCodeGrowthOf from every grown function (GrownOf, uncut).
std::optional<UserCodeGrowth> UserCodeOf(const std::vector<FrameGrowth>& grown, bool counted) {
  if (grown.empty() || !grown.front().self_grew || grown.front().kind != FrameKind::kUser) return std::nullopt;
  for (const FrameGrowth& r : grown) {
    if (r.self_grew && r.kind == FrameKind::kKernel) return std::nullopt;
  }
  const FrameGrowth& top = grown.front();
  return UserCodeGrowth{FrameLabel(top.frame), top.SelfDeltaPp(), top.candidate_samples, top.self_margin_pp, counted};
}

constexpr size_t kAll = static_cast<size_t>(-1);

}  // namespace

std::vector<FrameGrowth> GrownFrames(const FoldedProfile& baseline, const FoldedProfile& candidate, size_t n) {
  return GrownOf(TopFrameGrowth(baseline, candidate, kAll), n);
}

std::optional<UserCodeGrowth> UserCodeGrowthOf(const FoldedProfile& baseline, const FoldedProfile& candidate) {
  return UserCodeOf(GrownFrames(baseline, candidate, kAll), IsCountedProfile(baseline) && IsCountedProfile(candidate));
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

ProfileGrowth ProfileGrowthOf(const FoldedProfile* baseline, const FoldedProfile& shown) {
  if (baseline != nullptr && baseline->stacks.empty()) baseline = nullptr;
  ProfileGrowth growth;
  growth.kind = shown.kind;
  growth.against_baseline = baseline != nullptr;
  if (IsBlockedTimeProfile(shown)) {
    growth.stacks = TopStackGrowth(baseline, shown, kProfileGrowthRows);
    return growth;
  }
  if (baseline == nullptr) {
    growth.frames = TopFramesBySelf(shown, kProfileGrowthRows);
    return growth;
  }
  // Every function ranked once: the table's rows, what grew beyond noise
  // and the user code that leads are all cut from it.
  std::vector<FrameGrowth> ranked = TopFrameGrowth(*baseline, shown, kAll);
  const std::vector<FrameGrowth> grown = GrownOf(ranked, kAll);
  growth.user_code = UserCodeOf(grown, IsCountedProfile(*baseline) && IsCountedProfile(shown));
  growth.grown.assign(grown.begin(),
                      grown.begin() + static_cast<std::ptrdiff_t>(std::min(grown.size(), kProfileGrowthRows)));
  if (ranked.size() > kProfileGrowthRows) ranked.resize(kProfileGrowthRows);
  growth.frames = std::move(ranked);
  return growth;
}

void ExplainEvidenceGrowth(ScenarioResult& scenario) {
  scenario.profile_growth.clear();
  if (scenario.evidence.empty()) return;
  const Evidence* shown = FindEvidence(scenario.evidence, "candidate");
  if (shown == nullptr) shown = &scenario.evidence.front();
  const Evidence* baseline = FindEvidence(scenario.evidence, "baseline");
  if (baseline == shown) baseline = nullptr;
  for (const FoldedProfile& profile : shown->profiles) {
    scenario.profile_growth.push_back(
        ProfileGrowthOf(baseline != nullptr ? FindProfile(*baseline, profile.kind) : nullptr, profile));
  }
}

}  // namespace perfgate
