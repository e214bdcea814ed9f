// A command workload's JSON-lines metrics: CommandAdapter::ParseOutput calls ParseCommandJsonLines.
#include <cstddef>
#include <cstdint>
#include <string>

#include "adapters/command.h"
#include "base/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    perfgate::ParseCommandJsonLines(std::string(reinterpret_cast<const char*>(data), size), "command output");
  } catch (const perfgate::Error&) {
  }
  return 0;
}
