// fio's --output-format=json output: FioAdapter::ParseOutput calls ParseFioJson.
#include <cstddef>
#include <cstdint>
#include <string>

#include "adapters/fio.h"
#include "base/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    perfgate::ParseFioJson(std::string(reinterpret_cast<const char*>(data), size), "fio output");
  } catch (const perfgate::Error&) {
  }
  return 0;
}
