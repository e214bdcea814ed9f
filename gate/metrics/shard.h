// A shard of a split run: "K/N", the K-th of N CI runners' share of a
// suite's scenarios (config/shard.h picks them; results.json records it).
#pragma once

#include <optional>
#include <string>

namespace perfgate {

struct Shard {
  int index = 1;  // 1-based, 1..count
  int count = 1;
};

// "K/N" with 1 <= K <= N, else nullopt.
std::optional<Shard> ShardOfText(const std::string& text);

}  // namespace perfgate
