// What the reports' host line says of a scenario besides its verdicts: who
// held the workload's CPUs and the host canary's medians. Part of the
// results model, derived from the repetitions by the explain stage
// (explain/host_summary.h) each time the reports are written, not stored in
// results.json: the reporters only render it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "metrics/cpu_holders.h"

namespace perfgate {

// The least median wait for CPUs running other tasks, as a share of the
// median wall time, that the reports name.
inline constexpr double kShownBehindOthersShareOfWall = 0.01;

struct HostSummary {
  // The median wait per measured repetition for CPUs running other tasks,
  // when it reached kShownBehindOthersShareOfWall of the median wall time;
  // its median share of the run-queue wait (0..1), when measured; and who
  // held those CPUs, at most kTopCpuHolders, largest first.
  std::optional<double> waited_behind_others_s;
  std::optional<double> behind_others_share;
  std::vector<CpuHolder> holders;
  // Each host canary's median over the repetitions (metric, seconds per
  // unit), in the order of the canary's parts, and the most repetitions
  // any of them had.
  std::vector<std::pair<std::string, double>> canary_medians;
  size_t canary_count = 0;
};

}  // namespace perfgate
