// The executable mappings of a process, from /proc/PID/maps or from the
// kernel's mmap and exec records (perf side-band events): where the ufunc
// probe finds a process's mapped objects, and what the stack symbolizer
// (symbolize/) turns user addresses into files, offsets and build IDs with.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace perfgate {

struct MappedRange {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0;  // file offset of `start`
  std::string path;     // file, or "[vdso]"-style pseudo path
  // The mapped file's GNU build ID in lower-case hex, as the kernel read it
  // when the file was mapped; empty when unknown (read from /proc).
  std::string build_id;
};

// The executable mappings of one process, sorted by address.
struct ProcessMaps {
  std::vector<MappedRange> ranges;
  const MappedRange* Find(uint64_t ip) const;
  // Maps `range`, replacing whatever it overlaps (a later mmap over an
  // earlier one, as the kernel does).
  void Map(MappedRange range);
};

// Executable file mappings of a /proc/PID/maps listing.
ProcessMaps ParseProcessMaps(std::istream& maps);
// /proc/PID/maps; nullopt once the process is gone (or a zombie: no mappings left).
std::optional<ProcessMaps> ReadProcessMaps(pid_t pid);

// ---- the kernel's side-band records -----------------------------------------

// One record of a perf ring buffer that tells where a process maps code.
struct MapRecord {
  enum class Kind { kMap, kExec, kFork, kLost };
  Kind kind = Kind::kMap;
  uint32_t pid = 0;     // the process (tgid)
  uint32_t parent = 0;  // kFork: the process whose maps the new one starts with
  uint64_t time = 0;    // perf clock, ns: records of all CPUs are applied in this order
  MappedRange range;    // kMap
  uint64_t lost = 0;    // kLost: records the kernel dropped
};

// Parses one record (PERF_RECORD_MMAP2 of executable memory, PERF_RECORD_COMM
// of an exec, PERF_RECORD_FORK of a new process, PERF_RECORD_LOST) of `size` bytes, header included, read with
// sample_id_all and PERF_SAMPLE_TID | PERF_SAMPLE_TIME; nullopt for any other
// record, data mappings and malformed ones.
std::optional<MapRecord> ParseMapRecord(const uint8_t* record, size_t size);

// Applies `records` (any order; sorted by time here): a fork starts the new
// process with a copy of its parent's map (fork maps nothing anew), an exec
// empties its process's map, a mapping adds to it. Returns the records lost.
uint64_t ApplyMapRecords(std::vector<MapRecord> records, std::map<uint32_t, ProcessMaps>& maps);

// A hexadecimal number without "0x", as /proc files print addresses; false
// unless all of `text` is one.
bool ParseHex(const std::string& text, uint64_t& out);

}  // namespace perfgate
