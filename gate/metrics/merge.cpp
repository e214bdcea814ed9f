#include "metrics/merge.h"

#include <algorithm>
#include <map>

#include "metrics/error.h"

namespace perfgate {

RunResults MergeShards(const std::vector<ShardResults>& shards, bool strict) {
  if (shards.empty()) throw InputError("merge: no results files given");
  const ShardResults& first = shards.front();
  RunResults merged;
  merged.suite = first.results.suite;
  merged.suite_file = first.results.suite_file;
  merged.environment = first.results.environment;
  std::map<std::string, std::string> seen;  // scenario -> file it came from
  for (const ShardResults& shard : shards) {
    if (shard.results.suite != merged.suite) {
      throw InputError(shard.file + ": suite \"" + shard.results.suite + "\" differs from suite \"" + merged.suite +
                       "\" of " + first.file + "; only shards of one suite can be merged");
    }
    for (const ScenarioResult& s : shard.results.scenarios) {
      auto [it, inserted] = seen.emplace(s.name, shard.file);
      if (!inserted) {
        throw InputError(shard.file + ": scenario \"" + s.name + "\" is also in " + it->second +
                         "; each scenario must come from one shard");
      }
      merged.scenarios.push_back(s);
    }
    merged.partial |= shard.results.partial;
    if (!merged.baseline_environment) merged.baseline_environment = shard.results.baseline_environment;
    if (merged.baseline_source.empty()) merged.baseline_source = shard.results.baseline_source;
    // Every shard resolved the trailers against the whole suite: each skipped one once.
    AddSkippedTrailers(merged, shard.results.skipped_trailers);
  }
  merged.verdict = OverallVerdict(merged);
  merged.strict = strict;
  merged.exit_code = ExitCodeFor(merged, strict);
  return merged;
}

}  // namespace perfgate
