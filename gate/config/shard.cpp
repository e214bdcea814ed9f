#include "config/shard.h"

#include <algorithm>
#include <charconv>

#include "metrics/error.h"

namespace perfgate {
namespace {

bool ParseInt(std::string_view text, int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

Shard ParseShard(const std::string& text) {
  Shard shard;
  size_t slash = text.find('/');
  bool ok = slash != std::string::npos && ParseInt(std::string_view(text).substr(0, slash), shard.index) &&
            ParseInt(std::string_view(text).substr(slash + 1), shard.count);
  if (!ok || shard.count < 1 || shard.index < 1 || shard.index > shard.count) {
    throw InputError("--shard: expected K/N with 1 <= K <= N, got \"" + text + "\"");
  }
  return shard;
}

void SelectShard(Suite& suite, const std::vector<std::string>& only, const Shard& shard) {
  auto named = [&](const ScenarioSpec& s) {
    return only.empty() || std::find(only.begin(), only.end(), s.name) != only.end();
  };
  for (const auto& name : only) {
    if (std::none_of(suite.scenarios.begin(), suite.scenarios.end(),
                     [&](const ScenarioSpec& s) { return s.name == name; })) {
      throw InputError(suite.file + ": no scenario named \"" + name + "\"");
    }
  }
  std::vector<ScenarioSpec> kept;
  int position = 0;
  for (auto& s : suite.scenarios) {
    if (!named(s)) continue;
    if (position++ % shard.count == shard.index - 1) kept.push_back(std::move(s));
  }
  suite.scenarios = std::move(kept);
}

}  // namespace perfgate
