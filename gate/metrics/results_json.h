// JSON form of the results model: results.json, baseline files and merged
// shards all use it. Readers validate and name the file and JSON path of the
// first problem (InputError).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

// Readers and writers of results also parse JSON text and write files whole.
#include "base/atomic_file.h"
#include "base/json_text.h"
#include "metrics/results.h"

namespace perfgate {

inline constexpr int kResultsSchemaVersion = 1;

nlohmann::json ToJson(const Metric& metric);
nlohmann::json ToJson(const ScenarioResult& scenario);
nlohmann::json ToJson(const Environment& env);
nlohmann::json ToJson(const RunResults& results);

// `file` is only used in error messages.
Metric MetricFromJson(const nlohmann::json& j, const std::string& file, const std::string& path);
ScenarioResult ScenarioFromJson(const nlohmann::json& j, const std::string& file, const std::string& path);
Environment EnvironmentFromJson(const nlohmann::json& j, const std::string& file, const std::string& path);
RunResults ResultsFromJson(const nlohmann::json& j, const std::string& file);

RunResults ReadResultsFile(const std::string& file);

}  // namespace perfgate
