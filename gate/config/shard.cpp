#include "config/shard.h"

#include <algorithm>

#include "base/error.h"

namespace perfgate {

Shard ParseShard(const std::string& text) {
  const std::optional<Shard> shard = ShardOfText(text);
  if (!shard) throw InputError("--shard: expected K/N with 1 <= K <= N, got \"" + text + "\"");
  return *shard;
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
