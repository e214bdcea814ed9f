// The host's speed night by night, from the host canary each repetition
// recorded (host.canary.*, run/canary.h), and what the trends make of it: a
// night on which only the host was slower (a capped or throttled runner, a
// neighbour on its CPU) must not become a change point, while a step of the
// code, measured on a host of the usual speed, still does.
//
// Per series (one scenario's metric statistic over the nights):
//   1. The night's host factor: its median canary over the median of the
//      series' nights, for host.canary.cpu and .memory (the direct reads
//      spread too much to decide anything), and the
//      workload's own wall time over that time less its run-queue waits
//      behind other processes (host.runq_wait_behind_others, with the
//      runqlat probe: a neighbour sharing the CPU by the scheduler's fair
//      share leaves the short canary, which runs right after a wait, almost
//      untouched, docs/ci.md); the part that moved most is the night's factor. A night is off when that
//      factor is beyond kMinHostShift and beyond kOffSpreads robust
//      standard deviations of the canary's own night-to-night spread.
//   2. How the series moves with the host (its elasticity, ln value per ln
//      factor) is fitted on its off nights, each against the level of the
//      normal nights around it: a wall time follows the host almost one to
//      one, a CPU time hardly, a run-queue latency more than one to one, a
//      count per operation not at all. With fewer than kMinFittedNights off
//      nights the unit's nominal elasticity stands: 1 for a time, -1 for a
//      rate per second, 0 for anything else.
//   3. Each off night's value is divided by factor^elasticity (deflated). An
//      off night that this does not line up with the normal nights around it
//      (beyond kAlignedSpreads of the series' own noise) is left out of the
//      change points: the host explains its direction, not its size. A
//      series the host does not move (elasticity below kMinElasticity: a
//      count, a size) keeps its off nights as measured.
// Host series themselves (host.*) describe the host, not the code: they get
// no change points at all. The trend page still draws every night as measured.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "history/history_db.h"

namespace perfgate {

// The parts a night's host factor is looked for in: the canary's and the
// workload's waits behind other processes (named by that metric).
const std::vector<std::string>& HostSpeedParts();
// The metrics those are read from (statistic "value").
const std::vector<std::string>& HostSpeedMetrics();

// Whether the series measures the host rather than the code (host.*).
bool IsHostSeries(const HistorySeries& series);

// The night's median canary of each part, and the factor of the waits
// behind other processes, per (suite, scenario, run).
class HostSpeeds {
 public:
  // From the series of the history (statistic "value" of the metrics
  // HostSpeedMetrics() names); other series are ignored.
  static HostSpeeds FromSeries(const std::vector<HistorySeries>& canaries);
  // The night's value of that part in that scenario; nullopt when the run
  // recorded none (a perfgate older than the canary, a suite without the
  // runqlat probe).
  std::optional<double> Of(const std::string& metric, const std::string& suite, const std::string& scenario,
                           int64_t run_id) const;
  bool empty() const { return values_.empty(); }

 private:
  std::map<std::tuple<std::string, std::string, std::string, int64_t>, double> values_;
};

enum class HostNight {
  kNormal,    // the host ran at its usual speed (or recorded no canary)
  kDeflated,  // the host was off; the value was deflated by its factor
  kLeftOut,   // the host was off and deflating did not line the night up: no evidence either way
};

struct HostAdjustment {
  static constexpr double kMinHostShift = 0.05;  // a night's factor off 1 by at least 5 %
  static constexpr double kOffSpreads = 4;       // and by 4 robust SDs of the canary's nights
  static constexpr double kAlignedSpreads = 2;   // a deflated night within 2 robust SDs of the series' noise
  static constexpr double kMinAlignment = 0.01;  // (or 1 %) lines up
  static constexpr size_t kMinFittedNights = 3;
  static constexpr size_t kNeighbours = 3;  // normal nights on each side that make an off night's local level
  static constexpr double kMaxElasticity = 8;
  static constexpr double kMinElasticity = 0.05;  // below: the host does not move the series

  std::vector<double> factor;    // per point: the night's host factor (1 without a canary)
  std::vector<std::string> part;  // per point: the canary part the factor is of ("" when normal)
  std::vector<HostNight> night;  // per point
  std::vector<double> compared;  // per point: what the change points see (NaN when left out)
  double elasticity = 0;
  bool fitted = false;  // the elasticity was fitted (else nominal)
  size_t off_nights() const;
};

// The unit's nominal elasticity: 1 for a time (s, ms, us, ns, also per
// operation), -1 for a rate per second of anything but a time, else 0.
double NominalElasticity(const std::string& unit);

// The adjustment of one series whose nightly medians are `medians` (one per
// point). Without canaries every night is normal and compared as measured.
HostAdjustment AdjustForHost(const HistorySeries& series, const std::vector<double>& medians,
                             const HostSpeeds& speeds);

}  // namespace perfgate
