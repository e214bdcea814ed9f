#include "baseline/store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/json_reader.h"
#include "base/json_text.h"
#include "metrics/results_json.h"

namespace perfgate {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool SafeComponent(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 128) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  }
  return name.find("..") == std::string::npos;
}

}  // namespace

std::string BaselinePath(const std::string& dir, const std::string& suite, const std::string& scenario) {
  if (!SafeComponent(suite)) throw InputError("suite name \"" + suite + "\" cannot name a baseline directory");
  if (!SafeComponent(scenario)) throw InputError("scenario name \"" + scenario + "\" cannot name a baseline file");
  return (fs::path(dir) / suite / (scenario + ".json")).string();
}

Baseline ParseBaseline(const std::string& text, const std::string& file) {
  return BaselineFromJson(ParseJsonText(text, file), file);
}

Baseline BaselineFromJson(const json& j, const std::string& file) {
  JsonObjectReader r(j, file, "$");
  // Compared before narrowing: 2^32 + 1 must not read as version 1.
  const int64_t schema_version = r.Integer("schema_version");
  if (schema_version != kBaselineSchemaVersion) {
    r.Fail(r.At("schema_version"), "unsupported baseline schema version " + std::to_string(schema_version) +
                                       " (this perfgate reads " + std::to_string(kBaselineSchemaVersion) + ")");
  }
  Baseline b;
  b.suite = r.String("suite");
  b.scenario = ScenarioFromJson(r.Get("scenario"), file, r.At("scenario"));
  if (r.Has("environment")) b.environment = EnvironmentFromJson(r.Get("environment"), file, r.At("environment"));
  if (b.scenario.repetitions.empty()) r.Fail(r.At("scenario") + ".repetitions", "a baseline needs repetitions");
  for (size_t i = 0; i < b.scenario.repetitions.size(); ++i) {
    if (!b.scenario.repetitions[i].failure.empty()) {
      r.Fail(r.At("scenario") + ".repetitions[" + std::to_string(i) + "]",
             "a baseline holds only successful repetitions");
    }
  }
  return b;
}

std::optional<Baseline> LoadBaseline(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::nullopt;
    throw InputError(file + ": cannot read baseline: " + std::strerror(errno));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseBaseline(buffer.str(), file);
}

std::string SerializeBaseline(const Baseline& b) {
  ScenarioResult stored = b.scenario;
  stored.checks.clear();  // verdicts belong to a comparison, not to the baseline
  stored.baseline_repetitions.clear();
  stored.retaken.clear();
  stored.adaptive.reset();  // how many repetitions the run chose is not part of the baseline
  json j = {{"schema_version", kBaselineSchemaVersion},
            {"suite", b.suite},
            {"environment", ToJson(b.environment)},
            {"scenario", ToJson(stored)}};
  // nlohmann::json objects are std::map-backed: keys come out sorted. Bytes
  // that are not UTF-8 (a tool's output quoted in a message) become U+FFFD
  // rather than failing the write.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

void SaveBaseline(const std::string& file, const Baseline& b) { SaveBaselines({{file, b}}); }

void SaveBaselines(const std::vector<std::pair<std::string, Baseline>>& files) {
  std::vector<std::pair<std::string, std::string>> staged;  // temporary, target
  try {
    for (const auto& [file, b] : files) {
      if (b.scenario.repetitions.empty()) throw InfraError(file + ": refusing to store a baseline without repetitions");
      std::error_code ec;
      fs::create_directories(fs::path(file).parent_path(), ec);
      if (ec) throw InfraError(fs::path(file).parent_path().string() + ": cannot create directory: " + ec.message());
      staged.emplace_back(StageFile(file, SerializeBaseline(b)), file);
    }
  } catch (...) {
    for (const auto& [temporary, file] : staged) unlink(temporary.c_str());
    throw;
  }
  for (const auto& [temporary, file] : staged) CommitStagedFile(temporary, file);
}

}  // namespace perfgate
