#include "probes/process_maps.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace perfgate {

bool ParseHex(const std::string& text, uint64_t& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtoull(text.c_str(), &end, 16);
  return end != nullptr && *end == '\0';
}

const MappedRange* ProcessMaps::Find(uint64_t ip) const {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), ip,
                             [](uint64_t value, const MappedRange& r) { return value < r.start; });
  if (it == ranges.begin()) return nullptr;
  --it;
  return ip < it->end ? &*it : nullptr;
}

ProcessMaps ParseProcessMaps(std::istream& in) {
  ProcessMaps maps;
  std::string line;
  while (std::getline(in, line)) {
    // "start-end perms offset dev inode   path"
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode;
    if (!(fields >> range >> perms >> offset >> dev >> inode)) continue;
    std::string path;
    std::getline(fields, path);
    const size_t first = path.find_first_not_of(' ');
    path = first == std::string::npos ? "" : path.substr(first);
    if (perms.find('x') == std::string::npos || path.empty()) continue;
    const size_t dash = range.find('-');
    MappedRange r;
    if (dash == std::string::npos || !ParseHex(range.substr(0, dash), r.start) ||
        !ParseHex(range.substr(dash + 1), r.end) || !ParseHex(offset, r.offset))
      continue;
    r.path = path;
    maps.ranges.push_back(std::move(r));
  }
  std::sort(maps.ranges.begin(), maps.ranges.end(),
            [](const MappedRange& a, const MappedRange& b) { return a.start < b.start; });
  return maps;
}

std::optional<ProcessMaps> ReadProcessMaps(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  if (!in) return std::nullopt;
  ProcessMaps maps = ParseProcessMaps(in);
  if (maps.ranges.empty()) return std::nullopt;
  return maps;
}

}  // namespace perfgate
