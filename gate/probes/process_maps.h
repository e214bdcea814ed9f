// The executable mappings of a process from /proc/PID/maps: where the ufunc
// probe finds a process's mapped objects, and what the stack symbolizer
// (symbolize/) turns user addresses into files and offsets with.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace perfgate {

struct MappedRange {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0;  // file offset of `start`
  std::string path;     // file, or "[vdso]"-style pseudo path
};

// The executable mappings of one process, sorted by address.
struct ProcessMaps {
  std::vector<MappedRange> ranges;
  const MappedRange* Find(uint64_t ip) const;
};

// Executable file mappings of a /proc/PID/maps listing.
ProcessMaps ParseProcessMaps(std::istream& maps);
// /proc/PID/maps; nullopt once the process is gone (or a zombie: no mappings left).
std::optional<ProcessMaps> ReadProcessMaps(pid_t pid);

// A hexadecimal number without "0x", as /proc files print addresses; false
// unless all of `text` is one.
bool ParseHex(const std::string& text, uint64_t& out);

}  // namespace perfgate
