// Baselines: baselines/<suite>/<scenario>.json, pretty with sorted keys so
// diffs review well, with a schema version and the environment they were
// recorded on. Written atomically; a failed write leaves the old file intact.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "metrics/results.h"

namespace perfgate {

inline constexpr int kBaselineSchemaVersion = 1;

struct Baseline {
  std::string suite;
  Environment environment;
  ScenarioResult scenario;  // repetitions with their metrics; checks are not stored
};

// Path of a scenario's baseline; InputError when suite or scenario names would escape `dir`.
std::string BaselinePath(const std::string& dir, const std::string& suite, const std::string& scenario);

// The baseline, nullopt when there is no file; InputError naming file and JSON path when it is unreadable.
std::optional<Baseline> LoadBaseline(const std::string& file);
Baseline ParseBaseline(const std::string& text, const std::string& file);
Baseline BaselineFromJson(const nlohmann::json& j, const std::string& file);

// Serializes (pretty, sorted keys, trailing newline).
std::string SerializeBaseline(const Baseline& baseline);
// Writes atomically, creating the directory.
void SaveBaseline(const std::string& file, const Baseline& baseline);
// Writes several baselines all or none: every file is staged (written and
// fsynced next to its target) before any replaces its old version, so a full
// disk or any other write error leaves every old baseline as it was.
void SaveBaselines(const std::vector<std::pair<std::string, Baseline>>& files);

}  // namespace perfgate
