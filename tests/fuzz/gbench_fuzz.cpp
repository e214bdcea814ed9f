// Google Benchmark's JSON output: GbenchAdapter::ParseOutput calls ParseGbenchJson.
#include <cstddef>
#include <cstdint>
#include <string>

#include "adapters/gbench.h"
#include "base/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    perfgate::ParseGbenchJson(std::string(reinterpret_cast<const char*>(data), size), "gbench output");
  } catch (const perfgate::Error&) {
  }
  return 0;
}
