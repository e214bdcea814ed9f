// What a slower (or faster) host can do to a check measured against stored
// numbers. The host canary (run/canary.h) timed the same fixed work before
// every repetition of the baseline and of the run; when its times moved
// beyond their own noise, the host's speed moved, and no counter of a guest
// need show it (a slower physical machine, a throttled virtual one). A
// timing check's change the host's change can explain is then not the
// workload's (compare.h); a change beyond it still is.
#pragma once

#include <optional>
#include <string>

#include "metrics/results.h"

namespace perfgate {

// A canary's change must lie beyond its floor, its whole interval, for the
// host to count as slower or faster: beyond what the canary's median moves
// by from one A/A run to the next on a busy host (docs/verdicts.md): the
// loop's by about 5 %, the stream's and the faults' by about 10 %.
inline constexpr double kHostSpeedFloorPct = 5;
inline constexpr double kHostStreamFloorPct = 10;
inline constexpr double kHostFaultFloorPct = 10;
// The floor of the canary metric `canary` (one of kHostSpeedCanaries).
double HostSpeedFloorPct(const std::string& canary);
// Canaries a side needs before the host's speed is compared.
inline constexpr int kMinCanaries = 3;

// How a check's value moves with the host's speed: +1 it grows as the host
// slows (times), -1 it shrinks (rates per second, UnixBench's index), 0 not
// at all (counts, per-operation counts, instruction counts, sizes).
int HostSpeedScaling(const std::string& metric, const std::string& unit);

// The host's speed during `candidate` against `baseline`'s, from the
// canaries of their measured repetitions that tell it (kHostSpeedCanaries:
// the loop, the stream and the faults), at `confidence`: slower when some
// canary's interval lies wholly above its floor (HostSpeedFloorPct; the one
// whose low end is highest decides), faster when some lies wholly below
// minus its floor (the one whose high end is lowest), else steady (the cpu
// canary shown). nullopt
// without kMinCanaries on both sides.
std::optional<HostSpeed> CompareHostSpeed(const ScenarioResult& candidate, const ScenarioResult& baseline,
                                          double confidence);

// The largest change in a check's bad direction (a regression's) or good
// direction (an improvement's), in percent as compare measures it, that the
// host's change together with the threshold explains: the threshold's ratio
// times the far end of the canary's interval, widened by the canary's floor
// (1.1 x 2.1 x 1.05 for a time checked at 10 % when the loop's interval
// reaches +110 %). nullopt when the host was steady or its change pushes the
// check the other way.
std::optional<double> ChangeTheHostExplains(const CheckResult& check, const HostSpeed& speed, bool bad_side);

// The smallest timing change a run against stored numbers tells from the
// host's own wandering, in percent, when the canary's robust CV on this
// host is `canary_cv` (a fraction): a change of the host's speed below what
// the canaries of 10 repetitions a side resolve, or below the floor, goes
// unseen, and a timing change that small may be the host's.
double SmallestChangeTheHostLetsDecide(double canary_cv);

// A faster host hides a regression as a slower one fakes it: when the
// host's change pushed a check towards its good side, the check's worst
// bad-side change `worst_pct` with that push taken off at the canary's far
// end (the most it can hide); nullopt otherwise.
std::optional<double> WorstChangeBeneathTheHost(const CheckResult& check, const HostSpeed& speed, double worst_pct);

}  // namespace perfgate
