#include "probes/process_maps.h"

#include <linux/perf_event.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
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

void ProcessMaps::Map(MappedRange range) {
  if (range.end <= range.start) return;
  std::vector<MappedRange> kept;
  kept.reserve(ranges.size() + 2);
  for (MappedRange& r : ranges) {
    if (r.end <= range.start || r.start >= range.end) {
      kept.push_back(std::move(r));
      continue;
    }
    // The parts of `r` left on either side of the new mapping.
    if (r.start < range.start) {
      MappedRange left = r;
      left.end = range.start;
      kept.push_back(std::move(left));
    }
    if (r.end > range.end) {
      MappedRange right = r;
      right.offset += range.end - r.start;
      right.start = range.end;
      kept.push_back(std::move(right));
    }
  }
  kept.push_back(std::move(range));
  std::sort(kept.begin(), kept.end(), [](const MappedRange& a, const MappedRange& b) { return a.start < b.start; });
  ranges = std::move(kept);
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

namespace {

// Reads a T at `at` of `record` when it fits in `size`.
template <typename T>
bool Read(const uint8_t* record, size_t size, size_t at, T& out) {
  if (at + sizeof(T) > size) return false;
  std::memcpy(&out, record + at, sizeof(T));
  return true;
}

// sample_id_all with PERF_SAMPLE_TID | PERF_SAMPLE_TIME appends {u32 pid,
// tid; u64 time} to every record but samples.
constexpr size_t kSampleIdSize = 16;

std::string HexBytes(const uint8_t* bytes, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out;
}

}  // namespace

std::optional<MapRecord> ParseMapRecord(const uint8_t* record, size_t size) {
  perf_event_header header{};
  if (!Read(record, size, 0, header) || header.size != size || size < sizeof(header) + kSampleIdSize)
    return std::nullopt;
  MapRecord out;
  if (!Read(record, size, size - 8, out.time)) return std::nullopt;
  const size_t body = sizeof(header);
  switch (header.type) {
    case PERF_RECORD_MMAP2: {
      // {u32 pid, tid; u64 addr, len, pgoff; 24 bytes of device and inode or
      // build ID; u32 prot, flags; char filename[]}
      uint64_t addr = 0, len = 0, pgoff = 0;
      uint32_t prot = 0;
      if (!Read(record, size, body, out.pid) || !Read(record, size, body + 8, addr) ||
          !Read(record, size, body + 16, len) || !Read(record, size, body + 24, pgoff) ||
          !Read(record, size, body + 56, prot))
        return std::nullopt;
      if ((prot & PROT_EXEC) == 0 || len == 0) return std::nullopt;
      const size_t name = body + 64;
      if (name >= size - kSampleIdSize) return std::nullopt;
      const char* text = reinterpret_cast<const char*>(record + name);
      out.range.path.assign(text, strnlen(text, size - kSampleIdSize - name));
      if (out.range.path.empty()) return std::nullopt;
      out.range.start = addr;
      out.range.end = addr + len;
      out.range.offset = pgoff;
      uint8_t build_id_size = 0;
      if ((header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) != 0 && Read(record, size, body + 32, build_id_size) &&
          build_id_size > 0 && build_id_size <= 20)
        out.range.build_id = HexBytes(record + body + 36, build_id_size);
      return out;
    }
    case PERF_RECORD_COMM:
      if ((header.misc & PERF_RECORD_MISC_COMM_EXEC) == 0 || !Read(record, size, body, out.pid)) return std::nullopt;
      out.kind = MapRecord::Kind::kExec;
      return out;
    case PERF_RECORD_FORK: {
      // {u32 pid, ppid, tid, ptid; u64 time}: a thread's fork has pid == ppid.
      if (!Read(record, size, body, out.pid) || !Read(record, size, body + 4, out.parent) || out.pid == out.parent)
        return std::nullopt;
      out.kind = MapRecord::Kind::kFork;
      return out;
    }
    case PERF_RECORD_LOST:
      if (!Read(record, size, body + 8, out.lost)) return std::nullopt;
      out.kind = MapRecord::Kind::kLost;
      return out;
    default:
      return std::nullopt;
  }
}

uint64_t ApplyMapRecords(std::vector<MapRecord> records, std::map<uint32_t, ProcessMaps>& maps) {
  std::stable_sort(records.begin(), records.end(),
                   [](const MapRecord& a, const MapRecord& b) { return a.time < b.time; });
  uint64_t lost = 0;
  for (MapRecord& r : records) {
    switch (r.kind) {
      case MapRecord::Kind::kMap:
        maps[r.pid].Map(std::move(r.range));
        break;
      case MapRecord::Kind::kExec:
        maps[r.pid].ranges.clear();
        break;
      case MapRecord::Kind::kFork: {
        auto parent = maps.find(r.parent);
        maps[r.pid] = parent == maps.end() ? ProcessMaps{} : parent->second;
        break;
      }
      case MapRecord::Kind::kLost:
        lost += r.lost;
        break;
    }
  }
  return lost;
}

}  // namespace perfgate
