// Numbers as reports print them: quantities with a readable unit
// (base/quantity.h, shared with the check messages), signed percentages,
// intervals and thresholds. Output is plain text; callers escape it like any
// other text.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/quantity.h"  // FormatQuantity, FormatNumber, FormatPercent, FormatPValue, Plural
#include "metrics/results.h"

namespace perfgate {

// The limit the check enforces: "+5.0%" (larger is worse), "-5.0%", "<= 80.0k count/s".
std::string FormatThreshold(const CheckResult& check);
// Medians of the baseline and the candidate; "" when that side has no
// values (budget checks usually have no baseline).
std::string FormatBaseline(const CheckResult& check);
std::string FormatCandidate(const CheckResult& check);
// Change with its interval, "+30.0% [+25.1%, +35.2%]"; "" without a baseline.
std::string FormatChange(const CheckResult& check);

// One line on a scenario's trace (`perfgate run --trace`): the file, why this
// scenario, and the records lost: "trace.perfetto-trace: one extra traced
// repetition (workload.wall_time: regression (+12.0 %)); 81,234 records, 0 dropped".
std::string FormatTrace(const TraceSummary& trace);

// What the host's load did to a scenario, or nothing when it left every
// repetition clean, one part each: repetitions measured again, repetitions
// counted although the host was busy ("2 repetitions measured again while
// the host was busy (first: other work kept 1.47 of 2 CPUs busy, ...)"), the
// host's speed against the stored baseline's and the canary's medians (the
// host section), and pairs a busy host extended. A report that limits a cell's length gives
// each part a cell of its own, so a long reason never cuts off the next.
std::vector<std::string> HostLoadParts(const ScenarioResult& scenario);
// The parts in one line, "; " between them ("" when there are none).
std::string FormatHostLoad(const ScenarioResult& scenario);

// Who held the workload's CPUs, when its waits for them took at least
// kShownBehindOthersShareOfWall of its wall time (the scenario's
// host_summary), else "": "the workload waited 120 ms per repetition for
// CPUs running other tasks (61 % of its run-queue wait), held by: stress
// 2.40 s, cc1plus 300 ms". Reports show it beside FormatHostLoad. Comms not
// escaped.
std::string FormatCpuHolders(const ScenarioResult& scenario);

}  // namespace perfgate
