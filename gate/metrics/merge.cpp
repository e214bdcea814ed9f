#include "metrics/merge.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "base/error.h"
#include "metrics/shard.h"

namespace perfgate {

namespace {

// Every shard of the split once, or why not.
void RequireEveryShard(const std::vector<ShardResults>& shards, int expected_count) {
  int count = expected_count;
  std::string count_from = expected_count > 0 ? "--shards" : "";
  std::map<int, std::string> seen;  // shard index -> file
  for (const ShardResults& shard : shards) {
    if (shard.results.shard.empty()) {
      if (expected_count > 0)
        throw InputError(shard.file + ": not a shard (no \"shard\": it ran the whole suite); --shards " +
                         std::to_string(expected_count) + " merges the results of `--shard K/" +
                         std::to_string(expected_count) + "` runs");
      continue;
    }
    const std::optional<Shard> parsed = ShardOfText(shard.results.shard);
    if (!parsed) throw InputError(shard.file + ": $.shard: \"" + shard.results.shard + "\" is not K/N");
    const auto [index, of] = *parsed;
    if (count == 0) {
      count = of;
      count_from = shard.file;
    } else if (of != count) {
      throw InputError(shard.file + ": shard " + shard.results.shard + " is of a split into " + std::to_string(of) +
                       ", " + count_from + " says " + std::to_string(count));
    }
    auto [it, inserted] = seen.emplace(index, shard.file);
    if (!inserted) throw InputError(shard.file + ": shard " + shard.results.shard + " is also " + it->second);
  }
  if (count == 0) return;  // none says: the caller gave whole runs
  std::string missing;
  for (int k = 1; k <= count; ++k) {
    if (!seen.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k) + "/" + std::to_string(count);
  }
  if (!missing.empty())
    throw InfraError("merge: no results of shard " + missing + ": a shard that did not run fails the whole gate");
}

}  // namespace

RunResults MergeShards(const std::vector<ShardResults>& shards, bool strict, int expected_count) {
  if (shards.empty()) throw InputError("merge: no results files given");
  RequireEveryShard(shards, expected_count);
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
  // Paired within a host, the shards may each have had their own.
  for (const ShardResults& shard : shards) {
    merged.shard_hosts.emplace_back(shard.results.shard.empty() ? shard.file : shard.results.shard,
                                    shard.results.environment.hostname);
  }
  const auto other_host = [&](const auto& shard_host) { return shard_host.second != merged.environment.hostname; };
  if (std::none_of(merged.shard_hosts.begin(), merged.shard_hosts.end(), other_host)) merged.shard_hosts.clear();
  merged.verdict = OverallVerdict(merged);
  merged.strict = strict;
  merged.exit_code = ExitCodeFor(merged, strict);
  return merged;
}

}  // namespace perfgate
