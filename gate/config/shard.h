// --shard K/N: which scenarios of a suite one of N CI runners runs. The split
// is by position: the scenarios left after --scenario, in suite-file order,
// go round-robin to shards 1..N (scenario i to shard i mod N + 1). Every
// runner reads the same suite file, so every runner computes the same split,
// and N consecutive scenarios land on N different runners.
#pragma once

#include <string>
#include <vector>

#include "config/suite.h"
#include "metrics/shard.h"

namespace perfgate {

// Parses "K/N" with 1 <= K <= N; InputError naming --shard otherwise.
Shard ParseShard(const std::string& text);

// Keeps in `suite` only the scenarios of `shard`, among those named in
// `only` (all when empty). InputError naming the suite file for a name in
// `only` that the suite does not have.
void SelectShard(Suite& suite, const std::vector<std::string>& only, const Shard& shard);

}  // namespace perfgate
