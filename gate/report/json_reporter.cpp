#include "report/json_reporter.h"

#include "metrics/results_json.h"

namespace perfgate {
namespace {

// < > & only occur inside JSON strings; as \u escapes they parse to the same
// value, and results.json can no longer be mistaken for markup when a CI
// artifact viewer sniffs its type (what Go's encoding/json does by default).
std::string EscapeMarkupCharacters(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string JsonReporter::Render(const RunResults& results) const {
  // Indented, so that results and baselines diff line by line in review;
  // invalid UTF-8 from workload output is replaced rather than thrown on.
  nlohmann::json j = ToJson(results);
  std::string json = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  return EscapeMarkupCharacters(json) + "\n";
}

}  // namespace perfgate
