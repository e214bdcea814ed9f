// What the explain stage (gate/explain/frame_growth.h) found in a
// scenario's evidence profiles, one side against the other: per function,
// its share of each side and whether the change is beyond sampling noise;
// per blocking stack, its share of each side; and the user function whose
// own code grew. Part of the results model, derived from the evidence each
// time the reports are written (not stored in results.json): the reporters
// only render it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/frames.h"

namespace perfgate {

struct FrameGrowth {
  std::string frame;  // as in the folded stacks, "_[k]" suffix included
  FrameKind kind = FrameKind::kUser;
  // Shares of each side's total, 0..1. A function on a stack twice
  // (recursion) counts once for inclusive.
  double baseline_inclusive = 0;
  double baseline_self = 0;
  double candidate_inclusive = 0;
  double candidate_self = 0;
  // Samples behind each side's shares (the profiles' denominators); 0 for
  // profiles that weigh time rather than count samples.
  uint64_t baseline_samples = 0;
  uint64_t candidate_samples = 0;
  // Half-widths of the intervals of the two changes, in percentage points;
  // 0 when the profiles do not count samples (no interval).
  double self_margin_pp = 0;
  double inclusive_margin_pp = 0;
  // Whether the share grew beyond its interval (false without one).
  bool self_grew = false;
  bool inclusive_grew = false;
  // Only ever seen in interrupt context (at or inside an interrupt or
  // softirq entry on every stack it is on, on both sides).
  bool interrupt = false;
  // Changes in percentage points (candidate share - baseline share) * 100.
  double SelfDeltaPp() const { return 100 * (candidate_self - baseline_self); }
  double InclusiveDeltaPp() const { return 100 * (candidate_inclusive - baseline_inclusive); }
  bool HasInterval() const { return baseline_samples > 0 && candidate_samples > 0; }
};

inline constexpr double kMinGrowthPp = 1.0;

// The least growth of a share of a counted profile (instructions per
// function, exact) that is named: counts repeat within a hundredth of a
// percent, so a share moves by less than this between identical runs.
inline constexpr double kMinCountedGrowthPp = 0.01;

// One stack of a blocked-time profile (off-CPU, futex waits) with its
// share of each side's total, 0..1.
struct StackGrowth {
  // User frames, outermost first: where the workload's code waited. Kernel
  // frames are left out: every wait ends in the scheduler, and the flame
  // graph shows how. Empty: a wait with no user stack (a kernel thread).
  std::vector<std::string> frames;
  double baseline_share = 0;
  double candidate_share = 0;
  double DeltaPp() const { return 100 * (candidate_share - baseline_share); }
};

// The function whose own on-CPU share grew most beyond sampling noise, when
// it is user code and no kernel function's own share grew (the evidence's
// sampled profiles, both sides).
struct UserCodeGrowth {
  std::string function;
  double self_delta_pp = 0;  // percentage points of the profile
  uint64_t samples = 0;      // the candidate's samples
  double margin_pp = 0;      // half-width of the change's interval
  // Of a counted profile (instructions per function, exact): no samples, no interval.
  bool counted = false;
};

// The growth of one profile kind of a scenario's evidence: the shown side's
// profile (the candidate's, else the only side's) against the baseline
// side's of the same kind, when that has stacks.
struct ProfileGrowth {
  std::string kind;               // the profile's kind ("on-cpu", "off-cpu", "futex", "preempted", "counted")
  bool against_baseline = false;  // false: the shown side alone, ranked by its own shares
  // Sampled and counted profiles: with a baseline, the functions most grown
  // (TopFrameGrowth); without, the largest self shares (TopFramesBySelf).
  std::vector<FrameGrowth> frames;
  // With a baseline: the functions whose share grew beyond sampling noise
  // (GrownFrames), and the user function whose own code grew, if it leads.
  std::vector<FrameGrowth> grown;
  std::optional<UserCodeGrowth> user_code;
  // Blocked-time profiles: the user stacks most grown, or heaviest without a baseline.
  std::vector<StackGrowth> stacks;
};

// How many functions and stacks a ProfileGrowth keeps of each list: the
// longest table a report shows.
inline constexpr size_t kProfileGrowthRows = 15;

// The growth of the profile of `kind`, or nullptr.
inline const ProfileGrowth* FindProfileGrowth(const std::vector<ProfileGrowth>& growth, const std::string& kind) {
  for (const ProfileGrowth& g : growth)
    if (g.kind == kind) return &g;
  return nullptr;
}

}  // namespace perfgate
