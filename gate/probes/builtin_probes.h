// The probes the catalog knows, each defined (its description, metrics,
// parameters and constructor) in its own gate/probes/<name>.cpp.
#pragma once

#include <memory>

#include "probes/probe.h"

namespace perfgate {

ProbeDefinition DefineRunQueueLatencyProbe();
ProbeDefinition DefineSyscallsProbe();
ProbeDefinition DefineKernelMemoryProbe();
ProbeDefinition DefineOffCpuProbe();
ProbeDefinition DefineSchedulerEventsProbe();
ProbeDefinition DefineLifecycleProbe();
ProbeDefinition DefineReclaimProbe();
ProbeDefinition DefinePageFaultProbe();
ProbeDefinition DefineBlockLatencyProbe();
ProbeDefinition DefineIrqProbe();
ProbeDefinition DefineUfuncProbe();
ProbeDefinition DefineFutexProbe();
ProbeDefinition DefineMmapLockProbe();
ProbeDefinition DefineTcpProbe();
ProbeDefinition DefineProfileProbe();
ProbeDefinition DefineCpuCountersProbe();

}  // namespace perfgate
