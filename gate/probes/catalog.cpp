#include <functional>
#include <map>

#include "base/error.h"
#include "base/json_reader.h"
#include "base/json_text.h"
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

ProbeInfo DeclaredProbe(const std::string& name) {
  static const std::map<std::string, ProbeParameterType> kTypes = {{"string", ProbeParameterType::kString},
                                                                   {"strings", ProbeParameterType::kStrings},
                                                                   {"integer", ProbeParameterType::kInteger},
                                                                   {"boolean", ProbeParameterType::kBoolean}};
  const std::string file = "gate/probes/" + name + ".json";
  const std::string_view text = EmbeddedProbeJson(name);
  if (text.empty()) throw InputError(file + ": no such probe declaration in this build");
  const nlohmann::json j = ParseJsonText(std::string(text), file);
  const JsonObjectReader r(j, file, "$", {"name", "description", "attach", "metrics", "parameters"});
  ProbeInfo info;
  info.name = r.String("name");
  if (info.name != name) r.Fail(r.At("name"), "\"" + info.name + "\" in the file of probe " + name);
  info.description = r.String("description");
  info.attach = r.String("attach");
  const nlohmann::json& metrics = r.Array("metrics");
  for (size_t i = 0; i < metrics.size(); ++i)
    info.metrics.push_back(DeclarationFromJson(metrics[i], file, r.At("metrics", i)));
  const nlohmann::json& parameters = r.ArrayOrEmpty("parameters");
  for (size_t i = 0; i < parameters.size(); ++i) {
    const JsonObjectReader p(parameters[i], file, r.At("parameters", i), {"name", "type", "description"});
    auto type = kTypes.find(p.String("type"));
    if (type == kTypes.end()) p.Fail(p.At("type"), "expected \"string\", \"strings\", \"integer\" or \"boolean\"");
    info.parameters.push_back({p.String("name"), type->second, p.String("description")});
  }
  return info;
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
