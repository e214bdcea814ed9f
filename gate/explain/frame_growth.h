// "Top frames by growth": per function, the share of a profile spent in it
// (inclusive) and in its own code (self), baseline against candidate, and
// whether each change is beyond sampling noise. Pure. A sample taken in
// interrupt context counts for the interrupt's frames only, not for the
// functions it interrupted.
//
// A share of a sampled profile is a proportion of its samples, so the change
// of a function's share between two sides gets the interval of a difference
// of two proportions (Agresti-Caffo: one sample of each kind added to each
// side, which keeps the interval honest at a handful of samples), its
// samples counted as fewer where the shares spread between the evidence
// repetitions more than sampling would (Dispersion: on a shared host a
// neighbour slows one function more than another, for a while). The
// confidence is corrected for the number of functions compared (Bonferroni,
// one-sided at 5 %, over the functions that have samples enough to be
// named at all: Tarone's count, at least 10): with a few hundred functions
// on either side, some share moves by chance on every run, and the reports
// must not name it. A change is named only when it is also at least
// kMinGrowthPp: interrupts and other host activity land on the workload in
// bursts, clustered samples whose spread the binomial interval does not
// cover, and such a burst is worth a fraction of a point. The samples of
// the workload's processes starting (exec) and being torn down (exit) are
// left out of both sides' shares: each happens once per process, so they
// come in clusters too, and an A/A pair moved them by 2.6 points. Blocked-time
// profiles weigh nanoseconds, not samples: their changes get no interval.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/evidence.h"
#include "metrics/profile_growth.h"
#include "metrics/results.h"

namespace perfgate {

// How many times the binomial variance the shares of the two profiles
// spread by: their repetitions' chi-squares pooled over their degrees of
// freedom (quasi-binomial dispersion), at least 1; 1 when neither profile
// says (a single repetition, or results written before profiles had it).
// The intervals count each side's samples divided by it.
double Dispersion(const FoldedProfile& baseline, const FoldedProfile& candidate);

// The one-sided normal quantile of the intervals, given for every function
// compared the largest z its samples could reach (all of them on the
// candidate side): Bonferroni at 5 % over the K functions whose largest z
// reaches the quantile for K (Tarone), K at least 10.
double GrowthZ(std::vector<double> max_z);

// Half-width, in percentage points, of the interval of the change from
// `x1` of `n1` samples to `x2` of `n2` (Agresti-Caffo) at quantile `z`.
double ShareChangeMarginPp(double x1, double n1, double x2, double n2, double z);

// Whether `x2` of `n2` is a larger share than `x1` of `n1` beyond the
// interval: the adjusted difference, and the plain one, both above the
// margin, and the plain one at least kMinGrowthPp.
bool ShareGrew(double x1, double n1, double x2, double n2, double z);

// The n functions whose share grew most, candidate against baseline, each
// side normalised by its own total (as FlameGraph's difffolded), so a
// candidate that ran longer or sampled more does not grow everything.
//
// Self growth beyond sampling noise ranks first (by its size); then, as for
// profiles without intervals, by growth of self share: the extra time is spent in some
// function's own code, and that function is the one to name (with inclusive
// shares alone, main and every caller on the way grow by as much as the leaf
// and would tie with it). Ties, and functions whose own share did not move,
// go by growth of inclusive share, so a caller whose extra time spreads over
// many small callees still ranks above unchanged frames. Then by name, for a
// stable order. Functions that shrank come last, the most shrunk at the end.
std::vector<FrameGrowth> TopFrameGrowth(const FoldedProfile& baseline, const FoldedProfile& candidate, size_t n);

// The functions whose self or inclusive share grew beyond sampling noise,
// at most n: those whose own code grew first, by self growth, then those
// where only the inclusive share grew, by inclusive growth. Empty when
// nothing grew beyond noise, or when the profiles count no samples. Work in
// interrupt context (timer and device interrupts, the softirqs run on their
// exit) is never named: it is the host's, charged to whichever thread was on
// the CPU, and comes in bursts; nor is a frame that could not be symbolized
// ("[unknown]", "libc.so.6+0x27249"), which names no function.
std::vector<FrameGrowth> GrownFrames(const FoldedProfile& baseline, const FoldedProfile& candidate, size_t n);

// When the on-CPU growth is in user code: the function whose own code grew
// most beyond noise is user code and no kernel function's own share grew
// beyond noise; else nullopt.
std::optional<UserCodeGrowth> UserCodeGrowthOf(const FoldedProfile& baseline, const FoldedProfile& candidate);

// Blocked-time profiles are ranked by stack, not by function: every stack's
// own (self) time is the kernel's schedule(), and every function on the way
// to the wait has the same inclusive growth, so neither names the place the
// code blocked; the user stack that waited does. The n user stacks whose
// share grew most, each side normalised by its own total (stacks that differ
// only in their kernel frames are one); without a baseline (nullptr), the
// candidate's n heaviest. Ties go by the stack's text, for a stable order.
std::vector<StackGrowth> TopStackGrowth(const FoldedProfile* baseline, const FoldedProfile& candidate, size_t n);

// Without a baseline: the candidate's n functions with the largest self
// share (then inclusive share, then name); baseline shares are 0.
std::vector<FrameGrowth> TopFramesBySelf(const FoldedProfile& candidate, size_t n);

// The growth of `shown` (the candidate's profile, else the only side's)
// against `baseline` (nullptr, or a profile without stacks: none), its
// lists cut to kProfileGrowthRows.
ProfileGrowth ProfileGrowthOf(const FoldedProfile* baseline, const FoldedProfile& shown);

// Every profile of the scenario's shown evidence (the candidate side's, else
// the first) against the baseline side's of its kind, into
// scenario.profile_growth; empty without evidence.
void ExplainEvidenceGrowth(ScenarioResult& scenario);

}  // namespace perfgate
