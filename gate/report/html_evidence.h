// The HTML report's "Evidence: which code" of one scenario: what the
// evidence repetitions sampled, the growth table, the differential and
// plain flame graphs, and what limited them.
#pragma once

#include <string>

#include "metrics/results.h"

namespace perfgate {

// "" when the scenario has no evidence.
std::string EvidenceSection(const ScenarioResult& scenario);

}  // namespace perfgate
