// UnixBench's results text: UnixBenchAdapter::ParseOutput calls ParseUnixBenchText.
#include <cstddef>
#include <cstdint>
#include <string>

#include "adapters/unixbench.h"
#include "base/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    perfgate::ParseUnixBenchText(std::string(reinterpret_cast<const char*>(data), size), "UnixBench output");
  } catch (const perfgate::Error&) {
  }
  return 0;
}
