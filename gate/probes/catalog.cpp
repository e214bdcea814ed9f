#include <functional>
#include <map>

#include "probes/builtin_probes.h"
#include "probes/probe.h"

namespace perfgate {
namespace {

struct CatalogEntry {
  ProbeInfo info;
  std::unique_ptr<Probe> (*make)();
};

const std::vector<CatalogEntry>& Entries() {
  static const std::vector<CatalogEntry> entries = {
      {{"runqlat", "run-queue latency: wakeup or preemption to running, per thread", {"sched.runq_latency"}},
       MakeRunQueueLatencyProbe},
      {{"syscalls",
        "syscall count (exact) and latency (sampled, about 1 in 16 syscalls; histogram counts are of "
        "sampled calls) (raw_syscalls sys_enter/sys_exit)",
        {"syscalls.count", "syscalls.latency"}},
       MakeSyscallsProbe},
      {{"kmem",
        "pages allocated (kmem:mm_page_alloc) and slab allocations (kmem:kmalloc, kmem:kmem_cache_alloc)",
        {"mm.page_alloc", "mm.kmalloc"}},
       MakeKernelMemoryProbe},
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
