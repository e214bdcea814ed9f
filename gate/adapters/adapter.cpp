#include "adapters/adapter.h"

#include <charconv>
#include <stdexcept>

#include "base/error.h"

namespace perfgate {

const WorkloadKeys& WorkloadAdapter::keys() const {
  static const WorkloadKeys kCommandLine;
  return kCommandLine;
}

WorkloadOptions::WorkloadOptions(const WorkloadKeys& declared, const WorkloadSpec& spec)
    : declared_(declared), spec_(spec) {
  for (const auto& [key, value] : spec.options) {
    if (declared.Find(key)) continue;
    std::string keys;
    for (const auto& k : declared.keys) keys += (keys.empty() ? "" : ", ") + k.name;
    throw InputError(spec.kind + " workload: \"" + key + "\" does not apply to this kind (it takes " +
                     (keys.empty() ? std::string("none") : keys) + ")");
  }
  if (spec.shell && !declared.shell) {
    throw InputError(spec.kind + " workload: \"shell\" applies to command workloads only");
  }
}

const WorkloadKey& WorkloadOptions::Declared(const std::string& key) const {
  const WorkloadKey* declared = declared_.Find(key);
  // An adapter reading a key it did not declare is a bug in the adapter, not in the suite.
  if (!declared) throw std::logic_error(spec_.kind + " adapter reads undeclared key \"" + key + "\"");
  return *declared;
}

std::optional<std::string> WorkloadOptions::Find(const std::string& key) const {
  const WorkloadKey& declared = Declared(key);
  if (auto it = spec_.options.find(key); it != spec_.options.end()) return it->second;
  if (!declared.default_value.empty()) return declared.default_value;
  return std::nullopt;
}

std::string WorkloadOptions::Required(const std::string& key) const {
  std::optional<std::string> value = Find(key);
  if (!value || value->empty()) throw InputError(spec_.kind + " workload: missing required key \"" + key + "\"");
  return *value;
}

std::optional<int> WorkloadOptions::Integer(const std::string& key) const {
  std::optional<std::string> text = Find(key);
  if (!text) return std::nullopt;
  int value = 0;
  auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size()) {
    throw InputError(spec_.kind + " workload: \"" + key + "\" must be an integer, got \"" + *text + "\"");
  }
  return value;
}

nlohmann::json WorkloadOptions::Object(const std::string& key) const {
  std::optional<std::string> text = Find(key);
  if (!text) return nullptr;
  nlohmann::json value = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) throw InputError(spec_.kind + " workload: \"" + key + "\" is not valid JSON");
  return value;
}

bool WorkloadOptions::Flag(const std::string& key) const { return Find(key) == std::optional<std::string>("true"); }

}  // namespace perfgate
