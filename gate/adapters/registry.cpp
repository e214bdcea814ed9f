#include <memory>

#include "adapters/adapter.h"
#include "adapters/camera_startup.h"
#include "adapters/command.h"
#include "adapters/fio.h"
#include "adapters/gbench.h"
#include "adapters/unixbench.h"

namespace perfgate {

namespace {

// The one table of workload kinds.
const std::vector<std::unique_ptr<WorkloadAdapter>>& Adapters() {
  static const auto* table = [] {
    auto* t = new std::vector<std::unique_ptr<WorkloadAdapter>>();
    t->push_back(std::make_unique<CommandAdapter>());
    t->push_back(std::make_unique<CameraStartupAdapter>());
    t->push_back(std::make_unique<FioAdapter>());
    t->push_back(std::make_unique<UnixBenchAdapter>());
    t->push_back(std::make_unique<GbenchAdapter>());
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

}  // namespace perfgate
