// Constructors of the probes the catalog knows (one per gate/probes/<name>.cpp).
#pragma once

#include <memory>

#include "probes/probe.h"

namespace perfgate {

std::unique_ptr<Probe> MakeRunQueueLatencyProbe();
std::unique_ptr<Probe> MakeSyscallsProbe();
std::unique_ptr<Probe> MakeKernelMemoryProbe();
std::unique_ptr<Probe> MakeOffCpuProbe();
std::unique_ptr<Probe> MakeSchedulerEventsProbe();
std::unique_ptr<Probe> MakeLifecycleProbe();
std::unique_ptr<Probe> MakeReclaimProbe();
std::unique_ptr<Probe> MakePageFaultProbe();
std::unique_ptr<Probe> MakeBlockLatencyProbe();
std::unique_ptr<Probe> MakeIrqProbe();
std::unique_ptr<Probe> MakeUfuncProbe();
std::unique_ptr<Probe> MakeFutexProbe();
std::unique_ptr<Probe> MakeMmapLockProbe();
std::unique_ptr<Probe> MakeTcpProbe();
std::unique_ptr<Probe> MakeProfileProbe();
std::unique_ptr<Probe> MakeCpuCountersProbe();

}  // namespace perfgate
