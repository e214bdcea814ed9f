// The parts of the results model that results.json holds apart from the
// repetitions — the checks and the probes' reports
// (results_json_checks.cpp), the evidence and the why
// (results_json_why.cpp) — and the small readers they share with
// results_json.cpp. Internal to the metrics stage: readers and writers of
// results use results_json.h.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/json_reader.h"
#include "metrics/results.h"

namespace perfgate {

nlohmann::json ToJson(const CheckResult& check);
CheckResult CheckResultFromJson(const nlohmann::json& j, const std::string& file, const std::string& path);
nlohmann::json ToJson(const ProbeReport& probe);
ProbeReport ProbeReportFromJson(const nlohmann::json& j, const std::string& file, const std::string& path);
nlohmann::json ToJson(const Evidence& evidence);
Evidence EvidenceFromJson(const nlohmann::json& j, const std::string& file, const std::string& path);
nlohmann::json ToJson(const Explanation& explanation);
Explanation ExplanationFromJson(const nlohmann::json& j, const std::string& file, const std::string& path);

namespace results_json {

// A non-negative integer at `key` (absent: 0).
inline uint64_t Count(const JsonObjectReader& r, const std::string& key) {
  const int64_t n = r.Integer(key, 0);
  if (n < 0) r.Fail(r.At(key), "expected a non-negative integer");
  return static_cast<uint64_t>(n);
}

// The strings of the array at `key` (absent: none).
inline std::vector<std::string> StringArray(const JsonObjectReader& r, const std::string& key) {
  std::vector<std::string> out;
  const nlohmann::json& a = r.ArrayOrEmpty(key);
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string()) r.Fail(r.At(key, i), "expected a string");
    out.push_back(a[i].get<std::string>());
  }
  return out;
}

// Every element of the array at `key` (absent: none), read by `read`.
template <typename Read>
auto ArrayFromJson(const JsonObjectReader& r, const std::string& key, const std::string& file, Read read) {
  std::vector<decltype(read(nlohmann::json(), file, std::string()))> out;
  const nlohmann::json& items = r.ArrayOrEmpty(key);
  for (size_t i = 0; i < items.size(); ++i) out.push_back(read(items[i], file, r.At(key, i)));
  return out;
}

}  // namespace results_json
}  // namespace perfgate
