#include <functional>
#include <map>

#include "probes/builtin_probes.h"
#include "probes/probe.h"

namespace perfgate {
namespace {

const std::vector<ProbeDefinition>& Entries() {
  static const std::vector<ProbeDefinition> entries = {
      DefineRunQueueLatencyProbe(), DefineSyscallsProbe(),  DefineKernelMemoryProbe(), DefineOffCpuProbe(),
      DefineSchedulerEventsProbe(), DefineLifecycleProbe(), DefineReclaimProbe(),      DefinePageFaultProbe(),
      DefineBlockLatencyProbe(),    DefineIrqProbe(),       DefineUfuncProbe(),        DefineFutexProbe(),
      DefineMmapLockProbe(),        DefineTcpProbe(),       DefineProfileProbe(),      DefineCpuCountersProbe(),
  };
  return entries;
}

}  // namespace

const std::vector<ProbeInfo>& ProbeCatalog() {
  static const std::vector<ProbeInfo> catalog = [] {
    std::vector<ProbeInfo> infos;
    for (const auto& entry : Entries()) infos.push_back(entry.info);
    return infos;
  }();
  return catalog;
}

std::vector<MetricDeclaration> ProbeMetricDeclarations() {
  std::vector<MetricDeclaration> out;
  for (const auto& entry : Entries()) out.insert(out.end(), entry.info.metrics.begin(), entry.info.metrics.end());
  return out;
}

std::unique_ptr<Probe> CreateProbe(const std::string& name) {
  for (const auto& entry : Entries()) {
    if (entry.info.name == name) return entry.make();
  }
  return nullptr;
}

std::string ToString(ProbeParameterType type) {
  switch (type) {
    case ProbeParameterType::kString:
      return "string";
    case ProbeParameterType::kStrings:
      return "strings";
    case ProbeParameterType::kInteger:
      return "integer";
    case ProbeParameterType::kBoolean:
      return "boolean";
  }
  return "unknown";
}

ProbeReport UnattachedReport(const std::string& name, ProbeScope scope) {
  ProbeReport report;
  report.name = name;
  report.scope = scope == ProbeScope::kWorkload ? "workload" : "system";
  return report;
}

std::string ToString(AttachType type) {
  switch (type) {
    case AttachType::kFentry:
      return "fentry";
    case AttachType::kTpBtf:
      return "tp_btf";
    case AttachType::kRawTp:
      return "raw_tp";
    case AttachType::kTracepoint:
      return "tracepoint";
    case AttachType::kKprobe:
      return "kprobe";
    case AttachType::kUprobe:
      return "uprobe";
    case AttachType::kPerfEvent:
      return "perf_event";
  }
  return "unknown";
}

}  // namespace perfgate
