// The host line's figures of a scenario (metrics/host_summary.h), from its
// repetitions.
#pragma once

#include "metrics/host_summary.h"
#include "metrics/results.h"

namespace perfgate {

HostSummary SummarizeHost(const ScenarioResult& scenario);

}  // namespace perfgate
