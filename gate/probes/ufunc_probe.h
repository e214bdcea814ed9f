// The ufunc probe with options beyond the suite's parameters (tests and
// benchmarks choose its attach mechanism).
#pragma once

#include <memory>

#include "probes/probe.h"

namespace perfgate {

struct UfuncProbeOptions {
  // Try one uprobe_multi link per object first (Linux 6.6+); false attaches
  // one perf_event uprobe per function and direction straight away.
  bool uprobe_multi = true;
};

std::unique_ptr<Probe> MakeUfuncProbe(const UfuncProbeOptions& options);

}  // namespace perfgate
