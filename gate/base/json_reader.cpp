#include "base/json_reader.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "base/did_you_mean.h"
#include "base/error.h"

namespace perfgate {

using nlohmann::json;

JsonObjectReader::JsonObjectReader(const json& j, const std::string& file, std::string path,
                                   std::vector<std::string> keys)
    : j_(j), file_(file), path_(std::move(path)), null_is_absent_(false) {
  if (!j_.is_object()) Fail(path_, "expected an object, got " + std::string(j_.type_name()));
  for (const auto& [key, value] : j_.items()) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    Fail(At(key), "unknown key \"" + key + "\"" + DidYouMeanHint(key, keys));
  }
}

JsonObjectReader::JsonObjectReader(const json& j, const std::string& file, std::string path)
    : j_(j), file_(file), path_(std::move(path)), null_is_absent_(true) {
  if (!j_.is_object()) Fail(path_, "expected an object, got " + std::string(j_.type_name()));
}

void JsonObjectReader::Fail(const std::string& path, const std::string& what) const {
  throw InputError(file_ + ": " + path + ": " + what);
}

std::string JsonObjectReader::At(const std::string& key) const { return path_ + "." + key; }

std::string JsonObjectReader::At(const std::string& key, size_t index) const {
  return At(key) + "[" + std::to_string(index) + "]";
}

bool JsonObjectReader::Has(const std::string& key) const {
  return j_.contains(key) && !(null_is_absent_ && j_.at(key).is_null());
}

const json& JsonObjectReader::Get(const std::string& key) const {
  if (!j_.contains(key)) Fail(path_, "missing required key \"" + key + "\"");
  return j_.at(key);
}

const json* JsonObjectReader::Find(const std::string& key, bool required) const {
  if (required) Get(key);
  return Has(key) ? &j_.at(key) : nullptr;
}

void JsonObjectReader::ExpectType(const std::string& key, const json& v, bool ok, const char* expected) const {
  if (!ok) Fail(At(key), std::string("expected ") + expected + ", got " + v.type_name());
}

double JsonObjectReader::FiniteNumber(const std::string& key, const json& v) const {
  ExpectType(key, v, v.is_number(), "a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) Fail(At(key), "number is not finite");
  return d;
}

int64_t JsonObjectReader::CheckedInteger(const std::string& key, const json& v) const {
  ExpectType(key, v, v.is_number_integer(), "an integer");
  // Unsigned values beyond int64 would wrap to negative ones.
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    Fail(At(key), "integer " + std::to_string(v.get<uint64_t>()) + " out of range");
  }
  return v.get<int64_t>();
}

std::string JsonObjectReader::String(const std::string& key) const { return StringValue(key, Find(key, true), {}); }

std::string JsonObjectReader::String(const std::string& key, const std::string& fallback) const {
  return StringValue(key, Find(key, false), fallback);
}

std::string JsonObjectReader::StringValue(const std::string& key, const json* v, const std::string& fallback) const {
  if (v == nullptr) return fallback;
  ExpectType(key, *v, v->is_string(), "a string");
  return v->get<std::string>();
}

double JsonObjectReader::Number(const std::string& key) const {
  const json* v = Find(key, true);
  return v ? FiniteNumber(key, *v) : 0;
}

double JsonObjectReader::Number(const std::string& key, double fallback) const {
  const json* v = Find(key, false);
  return v ? FiniteNumber(key, *v) : fallback;
}

std::optional<double> JsonObjectReader::OptionalNumber(const std::string& key) const {
  const json* v = Find(key, false);
  if (v == nullptr) return std::nullopt;
  return FiniteNumber(key, *v);
}

double JsonObjectReader::Number(const std::string& key, double lo, double hi) const {
  const json* v = Find(key, true);
  double d = 0;
  if (v != nullptr) {
    ExpectType(key, *v, v->is_number(), "a number");
    d = v->get<double>();
  }
  if (!std::isfinite(d) || d < lo || d > hi) {
    std::ostringstream os;
    os << "value " << d << " out of range [" << lo << ", " << hi << "]";
    Fail(At(key), os.str());
  }
  return d;
}

int64_t JsonObjectReader::Integer(const std::string& key) const {
  const json* v = Find(key, true);
  return v ? CheckedInteger(key, *v) : 0;
}

int64_t JsonObjectReader::Integer(const std::string& key, int64_t fallback) const {
  const json* v = Find(key, false);
  return v ? CheckedInteger(key, *v) : fallback;
}

int JsonObjectReader::Integer(const std::string& key, int lo, int hi) const {
  const json* v = Find(key, true);
  int64_t i = 0;
  if (v != nullptr) {
    ExpectType(key, *v, v->is_number_integer(), "an integer");
    // Unsigned values beyond int64 would wrap to negative ones in the message.
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi)) {
      Fail(At(key), "value " + std::to_string(v->get<uint64_t>()) + " out of range [" + std::to_string(lo) + ", " +
                        std::to_string(hi) + "]");
    }
    i = v->get<int64_t>();
  }
  if (i < lo || i > hi) {
    Fail(At(key),
         "value " + std::to_string(i) + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return static_cast<int>(i);
}

int JsonObjectReader::Int(const std::string& key, int fallback) const {
  const int64_t v = Integer(key, static_cast<int64_t>(fallback));
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    Fail(At(key), "integer " + std::to_string(v) + " out of range");
  }
  return static_cast<int>(v);
}

bool JsonObjectReader::Bool(const std::string& key) const {
  const json* v = Find(key, true);
  if (v == nullptr) return false;
  ExpectType(key, *v, v->is_boolean(), "true or false");
  return v->get<bool>();
}

bool JsonObjectReader::Bool(const std::string& key, bool fallback) const {
  const json* v = Find(key, false);
  if (v == nullptr) return fallback;
  ExpectType(key, *v, v->is_boolean(), "true or false");
  return v->get<bool>();
}

const json& JsonObjectReader::Array(const std::string& key) const {
  static const json kEmpty = json::array();
  const json* v = Find(key, true);
  if (v == nullptr) return kEmpty;
  ExpectType(key, *v, v->is_array(), "an array");
  return *v;
}

const json& JsonObjectReader::ArrayOrEmpty(const std::string& key) const {
  static const json kEmpty = json::array();
  const json* v = Find(key, false);
  if (v == nullptr) return kEmpty;
  ExpectType(key, *v, v->is_array(), "an array");
  return *v;
}

}  // namespace perfgate
