// results.json: ReadResultsFile reads the file, ParseJsonText parses it,
// ResultsFromJson validates it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "metrics/results_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const std::string text(reinterpret_cast<const char*>(data), size);
    perfgate::RunResults r = perfgate::ResultsFromJson(perfgate::ParseJsonText(text, "results.json"), "results.json");
    // What was accepted must also be writable (report and merge write it back).
    perfgate::ToJson(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const perfgate::Error&) {
  }
  return 0;
}
