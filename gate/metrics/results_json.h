// JSON form of the results model: results.json, baseline files and merged
// shards all use it. Readers validate and name the file and JSON path of the
// first problem (InputError).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

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

// Parses JSON text (comments allowed); InputError naming `file`, line and column on syntax errors.
nlohmann::json ParseJsonText(const std::string& text, const std::string& file);
// Reads and parses a JSON file (comments allowed); InputError on I/O or syntax errors.
nlohmann::json ReadJsonFile(const std::string& file);
RunResults ReadResultsFile(const std::string& file);

// Writes text to `file` atomically: temp file in the same directory, fsync, rename.
// InfraError (naming the file and errno text) when it cannot; the old file survives.
void WriteFileAtomic(const std::string& file, const std::string& text);
// The two halves of WriteFileAtomic, for writing several files all or none:
// StageFile writes and fsyncs a temporary file next to `file` and returns its
// name (nothing is left when it throws); CommitStagedFile renames it over `file`.
std::string StageFile(const std::string& file, const std::string& text);
void CommitStagedFile(const std::string& staged, const std::string& file);

}  // namespace perfgate
