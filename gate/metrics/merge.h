// Merging the results of one suite's shards, run on several CI runners, into
// one run: scenarios in the order of the files given, the first file's
// environment, partial when any shard was.
#pragma once

#include <string>
#include <vector>

#include "metrics/results.h"

namespace perfgate {

struct ShardResults {
  std::string file;  // named in errors
  RunResults results;
};

// InputError naming both files when the shards are of different suites or a
// scenario appears in two of them (or twice in one), or when there is none.
// Check verdicts are kept as each shard computed them; the overall verdict
// and exit code are recomputed (`strict`: inconclusive fails).
//
// Shards that say which they were (RunResults::shard, "K/N") must be all N
// of one split: a shard of another split or given twice is an InputError,
// and one missing is an InfraError (exit 3) naming it, since a shard that
// did not run must fail the gate rather than pass it with fewer checks.
// `expected_count` (perfgate merge --shards N), when not 0, says N: then
// every file must be a shard of N.
RunResults MergeShards(const std::vector<ShardResults>& shards, bool strict, int expected_count = 0);

}  // namespace perfgate
