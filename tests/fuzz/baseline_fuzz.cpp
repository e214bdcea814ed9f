// Baseline files: LoadBaseline reads the file and calls ParseBaseline.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "baseline/store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    perfgate::Baseline b = perfgate::ParseBaseline(std::string(reinterpret_cast<const char*>(data), size), "base.json");
    perfgate::SerializeBaseline(b);  // what was accepted must also be writable
  } catch (const perfgate::Error&) {
  }
  return 0;
}
