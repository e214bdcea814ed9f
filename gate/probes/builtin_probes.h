// Constructors of the probes the catalog knows (one per gate/probes/<name>.cpp).
#pragma once

#include <memory>

#include "probes/probe.h"

namespace perfgate {

std::unique_ptr<Probe> MakeRunQueueLatencyProbe();
std::unique_ptr<Probe> MakeSyscallsProbe();
std::unique_ptr<Probe> MakeKernelMemoryProbe();

}  // namespace perfgate
