// "Top frames by growth": per function, the share of a profile spent in it
// (inclusive) and in its own code (self), baseline against candidate. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "metrics/evidence.h"
#include "report/frames.h"

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
  // Changes in percentage points (candidate share - baseline share) * 100.
  double SelfDeltaPp() const { return 100 * (candidate_self - baseline_self); }
  double InclusiveDeltaPp() const { return 100 * (candidate_inclusive - baseline_inclusive); }
};

// The n functions whose share grew most, candidate against baseline, each
// side normalised by its own total (as FlameGraph's difffolded), so a
// candidate that ran longer or sampled more does not grow everything.
//
// Ranked by growth of self share first: the extra time is spent in some
// function's own code, and that function is the one to name (with inclusive
// shares alone, main and every caller on the way grow by as much as the leaf
// and would tie with it). Ties, and functions whose own share did not move,
// go by growth of inclusive share, so a caller whose extra time spreads over
// many small callees still ranks above unchanged frames. Then by name, for a
// stable order. Functions that shrank come last, the most shrunk at the end.
std::vector<FrameGrowth> TopFrameGrowth(const FoldedProfile& baseline, const FoldedProfile& candidate, size_t n);

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

// Blocked-time profiles are ranked by stack, not by function: every stack's
// own (self) time is the kernel's schedule(), and every function on the way
// to the wait has the same inclusive growth, so neither names the place the
// code blocked; the user stack that waited does. The n user stacks whose
// share grew most, each side normalised by its own total (stacks that differ
// only in their kernel frames are one); without a baseline (nullptr), the
// candidate's n heaviest. Ties go by the stack's text, for a stable order.
std::vector<StackGrowth> TopStackGrowth(const FoldedProfile* baseline, const FoldedProfile& candidate, size_t n);

// Whether `profile` weighs blocked time (off-CPU, futex waits), which the
// report ranks by stack (TopStackGrowth), rather than samples of running code.
bool IsBlockedTimeProfile(const FoldedProfile& profile);

// Without a baseline: the candidate's n functions with the largest self
// share (then inclusive share, then name); baseline shares are 0.
std::vector<FrameGrowth> TopFramesBySelf(const FoldedProfile& candidate, size_t n);

}  // namespace perfgate
