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

// Deepest nesting of arrays and objects any reader accepts. perfgate's own
// files nest about eight levels; the bound keeps nlohmann's recursive
// functions (dump, copy, compare) within the stack on hostile input.
inline constexpr size_t kMaxJsonDepth = 256;

// The 1-based line where JSON `text` (comments allowed) first nests deeper
// than kMaxJsonDepth; 0 when it never does. Strings and comments are skipped.
size_t LineTooDeep(const std::string& text);

// nlohmann's message `what` without its "[json.exception...]" tag, led by the
// line of `text` holding the token it quotes (its out-of-range errors carry no position).
std::string JsonErrorWithLine(const std::string& what, const std::string& text);

// Parses JSON text (comments allowed); InputError naming `file`, line and
// column on syntax errors, numbers out of range and nesting deeper than kMaxJsonDepth.
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
