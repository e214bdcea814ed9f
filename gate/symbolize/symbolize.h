// Turning the instruction pointers of captured stacks into folded stacks
// ("main;parse;memcpy 42", outermost first) for the evidence reports: user
// frames through the process's memory map and the ELF symbol tables of the
// mapped files, kernel frames through /proc/kallsyms, C++ names demangled.
//
// A process's map is gone once the repetition ends, so the evidence
// repetition records the kernel's mmap records as it runs
// (ProcessMapsRecorder), each mapping with its file's build ID, and
// symbolizes afterwards: from the file when its build ID still matches, else
// from the debug file of that build ID (/usr/lib/debug/.build-id/). Frames are functions;
// where an object has a DWARF line table, each frame's source line is kept
// beside the stacks (FoldedProfile::sources).
#pragma once

#include <atomic>
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

// Records where the workload's processes map code while they run, from the
// kernel's own records rather than by reading /proc/PID/maps: a side-band
// perf event per CPU (no samples, just PERF_RECORD_MMAP2 with the file's
// build ID, PERF_RECORD_FORK of each new process and PERF_RECORD_COMM of each
// exec) whose ring buffers a thread drains. Every mapping is recorded as the process makes it, so a process
// that lives 30 ms and is gone by the end of the repetition is symbolized as
// well as a long one. At Finish(), a tracked process that has no records
// (it mapped its code before recording began) is read from /proc.
class ProcessMapsRecorder {
 public:
  // Throws InfraError when the side-band events cannot be opened.
  explicit ProcessMapsRecorder(int tracked_map_fd);
  ~ProcessMapsRecorder();
  ProcessMapsRecorder(const ProcessMapsRecorder&) = delete;
  ProcessMapsRecorder& operator=(const ProcessMapsRecorder&) = delete;
  // Drains the ring buffers, stops and returns every process's map as the
  // records left it.
  std::map<uint32_t, ProcessMaps> Finish();
  // Records the kernel dropped (a ring buffer full): their mappings are missing.
  uint64_t lost() const { return lost_; }

 private:
  struct Ring;
  void Drain();

  int map_fd_;
  std::vector<std::unique_ptr<Ring>> rings_;
  std::vector<MapRecord> records_;  // guarded by mutex_
  std::mutex mutex_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  uint64_t lost_ = 0;
};

// The GNU build ID of the ELF file at `path` in lower-case hex; empty when it
// has none or cannot be read.
std::string ReadBuildId(const std::string& path);

// Where Debian's -dbgsym packages put the debug file of `build_id`:
// "/usr/lib/debug/.build-id/ab/cdef....debug".
std::string DebugFileOfBuildId(const std::string& build_id);

// ---- stacks -------------------------------------------------------------

// One captured stack pair of one process with its weight.
struct RawStack {
  uint32_t tgid = 0;
  uint64_t weight = 0;               // samples, or ns off-CPU
  uint64_t count = 0;                // samples or waits behind `weight`
  std::vector<uint64_t> kernel_ips;  // innermost first
  std::vector<uint64_t> user_ips;    // innermost first
  // The same samples' user stack unwound from a copy of the stack with the
  // files' unwind tables (dwarf_unwind.h), innermost first; empty when none
  // was copied. Folded in place of user_ips where the frame-pointer walk
  // stopped short of the thread's root (IsTruncatedUserStack).
  std::vector<uint64_t> unwound_user_ips = {};
};

class StackSymbolizer {
 public:
  StackSymbolizer(KernelSymbols kernel, std::map<uint32_t, ProcessMaps> maps);
  // Symbolizes other processes from now on, keeping the objects read so far;
  // processes_without_maps() counts afresh.
  void ReplaceMaps(std::map<uint32_t, ProcessMaps> maps) {
    maps_ = std::move(maps);
    missing_.clear();
  }
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
  // Directory holding ".build-id/ab/cdef....debug"; "/usr/lib/debug" unless set (tests).
  void set_debug_root(std::string root) { debug_root_ = std::move(root); }
  // Processes sampled without a recorded map.
  size_t processes_without_maps() const { return missing_.size(); }

 private:
  struct Object {
    std::string path;  // the file symbols and lines are read from
    bool readable = false;
    std::vector<ElfFunction> functions;  // by file offset
    bool lines_read = false;
    std::unique_ptr<DwarfLines> lines;  // nullptr: no line table
  };
  // The object mapped as `range`: its file when that is still the one the
  // process mapped (same build ID), or the debug file of the build ID.
  Object& ObjectAt(const MappedRange& range);
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
  std::string debug_root_ = "/usr/lib/debug";
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
// "off-cpu") in `unit`, counting truncated user stacks by `count` (of the
// frame-pointer walk, or of the unwound stack where that is used). Kernel
// frames up to a tracepoint's BPF glue (__traceiter_*, bpf_trace_run*,
// perf_trace_*) are dropped.
FoldedProfile FoldProfile(const std::string& kind, const std::string& unit, const std::vector<RawStack>& stacks,
                          StackSymbolizer& symbolizer);

// Sets `pooled`'s spread (FoldedProfile::spread_chi_square, spread_df) from
// the same profile folded per repetition: Pearson's chi-square of the
// repetitions' weights per leaf frame (each frame with 1 % of the pooled
// weight or more, the rest as one) against their pooled shares. Nothing to
// tell (df 0) with fewer than two repetitions or frames.
void SetRepetitionSpread(FoldedProfile& pooled, const std::vector<FoldedProfile>& repetitions);

// The evidence note of the profiles with truncated user stacks, one for all
// of them (the advice said once); empty when none has any.
std::string TruncationNote(const std::vector<FoldedProfile>& profiles);

}  // namespace perfgate
