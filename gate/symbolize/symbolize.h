// Turning the instruction pointers of captured stacks into folded stacks
// ("main;parse;memcpy 42", outermost first) for the evidence reports: user
// frames through the process's memory map and the ELF symbol tables of the
// mapped files, kernel frames through /proc/kallsyms, C++ names demangled.
//
// A process's map must be read while it lives (it is gone once the
// repetition ends), so the evidence repetition records maps as it runs
// (ProcessMapsRecorder) and symbolizes afterwards. Frames are functions;
// where an object has a DWARF line table, each frame's source line is kept
// beside the stacks (FoldedProfile::sources).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <istream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "metrics/evidence.h"
#include "probes/elf_symbols.h"
#include "probes/process_maps.h"
#include "symbolize/dwarf_lines.h"

namespace perfgate {

// ---- kernel ---------------------------------------------------------------

struct KernelSymbol {
  uint64_t address = 0;
  std::string name;  // "do_syscall_64"; module symbols without their "[module]"
};

class KernelSymbols {
 public:
  // Text symbols (t, T, w, W) of a /proc/kallsyms listing, sorted. All
  // addresses 0 (kptr_restrict hides them) leaves the table empty.
  static KernelSymbols Parse(std::istream& kallsyms);
  // /proc/kallsyms; empty when unreadable.
  static KernelSymbols Load();
  // The function containing `ip`: the last symbol at or below it; empty
  // when below the first one or the table is empty.
  std::string Name(uint64_t ip) const;
  size_t size() const { return symbols_.size(); }

 private:
  std::vector<KernelSymbol> symbols_;
};

// ---- user -----------------------------------------------------------------

// Reads the maps of the workload's processes while they run: every
// `interval`, the processes in the tracker's thread map (bpf/filter.bpf.h)
// not yet seen or since exec'd, and every tenth time all of them again (a dlopen()ed
// library). Polling rather than hooking exec/exit: the map can only be read
// from user space, and a BPF hook cannot hold a process until it has been;
// what polling misses is a process that lives less than `interval`.
class ProcessMapsRecorder {
 public:
  ProcessMapsRecorder(int tracked_map_fd, std::chrono::milliseconds interval);
  ~ProcessMapsRecorder();
  ProcessMapsRecorder(const ProcessMapsRecorder&) = delete;
  ProcessMapsRecorder& operator=(const ProcessMapsRecorder&) = delete;
  // Reads once more, stops polling and returns every process's last map.
  std::map<uint32_t, ProcessMaps> Finish();

 private:
  void Poll(bool all);

  int map_fd_;
  std::chrono::milliseconds interval_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::map<uint32_t, ProcessMaps> maps_;
  std::map<uint32_t, std::string> exe_;  // the executable each map was read with
  std::thread thread_;
};

// ---- stacks -------------------------------------------------------------

// One captured stack pair of one process with its weight.
struct RawStack {
  uint32_t tgid = 0;
  uint64_t weight = 0;               // samples, or ns off-CPU
  uint64_t count = 0;                // samples or waits behind `weight`
  std::vector<uint64_t> kernel_ips;  // innermost first
  std::vector<uint64_t> user_ips;    // innermost first
};

class StackSymbolizer {
 public:
  StackSymbolizer(KernelSymbols kernel, std::map<uint32_t, ProcessMaps> maps);
  // "do_syscall_64_[k]", "[unknown]_[k]".
  std::string KernelFrame(uint64_t ip);
  // "ns::Parse", "libfoo.so.1+0x1a2b" (no symbol there), "[unknown]" (no map).
  std::string UserFrame(uint32_t tgid, uint64_t ip);
  // "src/parse.cpp:42": the line of `ip` in the DWARF line table of the
  // object mapped there; empty when it has none or no symbol covers `ip`.
  std::string UserSource(uint32_t tgid, uint64_t ip);
  // Both of the above, from one lookup of `ip`.
  struct UserSymbol {
    std::string frame;
    std::string source;
  };
  UserSymbol User(uint32_t tgid, uint64_t ip);
  // Objects whose symbols could not be read, with why ("path: reason").
  const std::vector<std::string>& unreadable() const { return unreadable_; }
  // Processes sampled without a recorded map (lived shorter than a poll).
  size_t processes_without_maps() const { return missing_.size(); }

 private:
  struct Object {
    bool readable = false;
    std::vector<ElfFunction> functions;  // by file offset
    bool lines_read = false;
    std::unique_ptr<DwarfLines> lines;  // nullptr: no line table
  };
  Object& ObjectAt(const std::string& path);
  // The mapping and the function of the object mapped there that contain
  // `ip`; `function` is nullptr when no symbol covers it.
  struct Location {
    const MappedRange* range = nullptr;
    Object* object = nullptr;
    const ElfFunction* function = nullptr;
    uint64_t file_offset = 0;
  };
  Location Locate(uint32_t tgid, uint64_t ip);
  static std::string FrameAt(const Location& at);
  static std::string SourceAt(const Location& at);

  KernelSymbols kernel_;
  std::map<uint32_t, ProcessMaps> maps_;
  std::map<std::string, std::unique_ptr<Object>> objects_;
  std::map<uint32_t, bool> missing_;
  std::vector<std::string> unreadable_;
};

// Whether a symbolized user stack (outermost first) stopped before reaching
// a process or thread root (_start, __libc_start_main,
// __libc_start_call_main, start_thread, clone, clone3; or, where the C
// library's local symbols are stripped, an unnamed frame in it or the frame
// that called main): the sign of code built without frame pointers. Stacks
// of one or two frames count as truncated; an empty stack (a kernel thread)
// does not.
bool IsTruncatedUserStack(const std::vector<std::string>& user_frames);

// "a;b;c": user frames then kernel frames, each outermost first, from
// frames given innermost first (as the stack map holds them).
std::string FoldFrames(const std::vector<std::string>& user_innermost_first,
                       const std::vector<std::string>& kernel_innermost_first);

// Symbolizes and folds `stacks` into a profile of `kind` ("on-cpu" or
// "off-cpu") in `unit`, counting truncated user stacks by `count`. Kernel
// frames up to a tracepoint's BPF glue (__traceiter_*, bpf_trace_run*,
// perf_trace_*) are dropped.
FoldedProfile FoldProfile(const std::string& kind, const std::string& unit, const std::vector<RawStack>& stacks,
                          StackSymbolizer& symbolizer);

// The evidence note of a profile with truncated user stacks; empty when none is.
std::string TruncationNote(const FoldedProfile& profile);

}  // namespace perfgate
