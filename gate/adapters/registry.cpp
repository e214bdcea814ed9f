#include <algorithm>
#include <memory>

#include "adapters/adapter.h"

namespace perfgate {

// The one table of workload kinds, in the order AdapterKinds() lists them:
// one line per adapter, naming the Make<Name>Adapter() its .cpp defines.
#define PERFGATE_WORKLOAD_ADAPTERS(ADAPTER) \
  ADAPTER(Command)                          \
  ADAPTER(CameraStartup)                    \
  ADAPTER(ColdStart)                        \
  ADAPTER(Fio)                              \
  ADAPTER(UnixBench)                        \
  ADAPTER(Gbench)

#define PERFGATE_DECLARE_ADAPTER(name) std::unique_ptr<WorkloadAdapter> Make##name##Adapter();
PERFGATE_WORKLOAD_ADAPTERS(PERFGATE_DECLARE_ADAPTER)
#undef PERFGATE_DECLARE_ADAPTER

namespace {

const std::vector<std::unique_ptr<WorkloadAdapter>>& Adapters() {
  static const auto* table = [] {
    auto* t = new std::vector<std::unique_ptr<WorkloadAdapter>>();
#define PERFGATE_MAKE_ADAPTER(name) t->push_back(Make##name##Adapter());
    PERFGATE_WORKLOAD_ADAPTERS(PERFGATE_MAKE_ADAPTER)
#undef PERFGATE_MAKE_ADAPTER
    return t;
  }();
  return *table;
}

}  // namespace

const WorkloadAdapter* FindAdapter(const std::string& kind) {
  for (const auto& a : Adapters()) {
    if (a->kind() == kind) return a.get();
  }
  return nullptr;
}

std::vector<std::string> AdapterKinds() {
  std::vector<std::string> kinds;
  for (const auto& a : Adapters()) kinds.push_back(a->kind());
  return kinds;
}

std::vector<MetricDeclaration> AdapterMetricDeclarations() {
  std::vector<MetricDeclaration> out;
  for (const auto& a : Adapters()) {
    for (const MetricDeclaration& d : a->metrics()) {
      const bool again =
          std::any_of(out.begin(), out.end(), [&](const MetricDeclaration& o) { return o.name == d.name; });
      if (!again) out.push_back(d);  // a kind built on another declares its metrics too
    }
  }
  return out;
}

std::map<std::string, WorkloadKeys> AdapterKeys() {
  std::map<std::string, WorkloadKeys> keys;
  for (const auto& a : Adapters()) keys[a->kind()] = a->keys();
  return keys;
}

}  // namespace perfgate
