#include "metrics/shard.h"

#include <charconv>
#include <string_view>

namespace perfgate {
namespace {

bool ParseInt(std::string_view text, int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::optional<Shard> ShardOfText(const std::string& text) {
  Shard shard;
  const size_t slash = text.find('/');
  const bool ok = slash != std::string::npos && ParseInt(std::string_view(text).substr(0, slash), shard.index) &&
                  ParseInt(std::string_view(text).substr(slash + 1), shard.count);
  if (!ok || shard.count < 1 || shard.index < 1 || shard.index > shard.count) return std::nullopt;
  return shard;
}

}  // namespace perfgate
