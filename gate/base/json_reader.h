// One JSON object of an input file read through typed getters whose errors
// name the file and the JSON path, e.g. "suite.json: $.scenarios[0].warmup:
// expected an integer, got string" (InputError, exit 2). Suites, baselines
// and results all read their objects this way.
//
// Files people write (suites) are read closed: the object lists its keys, an
// unknown key is an error with a "did you mean" hint, and null is a value of
// the wrong type. Files perfgate writes (results, baselines) are read open:
// other keys are ignored and null is "no value" (nlohmann writes NaN as null),
// so a getter returns its fallback, or zero for a required key.
//
// Getters that take a fallback return it when the key is absent; the others
// require the key.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace perfgate {

// Keeps references to `j` and `file`: both must outlive the reader.
class JsonObjectReader {
 public:
  // Closed: only `keys` may appear.
  JsonObjectReader(const nlohmann::json& j, const std::string& file, std::string path, std::vector<std::string> keys);
  // Open: any key may appear; null reads as absent.
  JsonObjectReader(const nlohmann::json& j, const std::string& file, std::string path);

  [[noreturn]] void Fail(const std::string& path, const std::string& what) const;
  // The path of a key, "$.a.key", and of an element of the array at a key, "$.a.key[3]".
  std::string At(const std::string& key) const;
  std::string At(const std::string& key, size_t index) const;
  bool Has(const std::string& key) const;
  // The value of a required key, of any type.
  const nlohmann::json& Get(const std::string& key) const;

  std::string String(const std::string& key) const;
  std::string String(const std::string& key, const std::string& fallback) const;
  // Finite numbers.
  double Number(const std::string& key) const;
  double Number(const std::string& key, double fallback) const;
  std::optional<double> OptionalNumber(const std::string& key) const;
  // Required and within [lo, hi]: "value 1 out of range [2, 10000]".
  double Number(const std::string& key, double lo, double hi) const;
  int64_t Integer(const std::string& key) const;
  int64_t Integer(const std::string& key, int64_t fallback) const;
  int Integer(const std::string& key, int lo, int hi) const;
  // An integer that must fit an int (counts, indexes, exit codes): a larger
  // one is an error, not silently narrowed.
  int Int(const std::string& key, int fallback) const;
  bool Bool(const std::string& key) const;
  bool Bool(const std::string& key, bool fallback) const;
  const nlohmann::json& Array(const std::string& key) const;
  // An empty array when the key is absent.
  const nlohmann::json& ArrayOrEmpty(const std::string& key) const;

  const nlohmann::json& raw() const { return j_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

 private:
  // The key's value; nullptr when it is absent (or null in an open object).
  // A required key that is missing fails.
  const nlohmann::json* Find(const std::string& key, bool required) const;
  std::string StringValue(const std::string& key, const nlohmann::json* v, const std::string& fallback) const;
  void ExpectType(const std::string& key, const nlohmann::json& v, bool ok, const char* expected) const;
  int64_t CheckedInteger(const std::string& key, const nlohmann::json& v) const;
  double FiniteNumber(const std::string& key, const nlohmann::json& v) const;

  const nlohmann::json& j_;
  const std::string& file_;
  std::string path_;
  bool null_is_absent_;
};

}  // namespace perfgate
