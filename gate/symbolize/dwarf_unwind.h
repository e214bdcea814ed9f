// Unwinding user stacks of code built without frame pointers (the
// distributions' default flags), as `perf record --call-graph dwarf` does:
// from a copy of the thread's registers and the top of its stack taken at the
// sample (UserStackCopy, the profile probe's user_stack_bytes) and the unwind
// tables (.eh_frame, .debug_frame) of the files the process had mapped, read
// after the run with elfutils libdwfl. Stack memory comes from the copy;
// memory of file-backed code mappings from the files.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "probes/process_maps.h"
#include "probes/profile_stacks.h"

struct Dwfl;
struct Dwfl_Thread;

namespace perfgate {

class UserStackUnwinder {
 public:
  // The unwinder of one process whose executable mappings were `maps`. A
  // mapped file whose build ID differs from the one recorded at mmap time
  // (rebuilt since) is read from the debug file of that build ID under
  // `debug_root` (".build-id/ab/cdef....debug"), else left out: frames in it
  // end the unwinding.
  explicit UserStackUnwinder(const ProcessMaps& maps, const std::string& debug_root = "/usr/lib/debug");
  ~UserStackUnwinder();
  UserStackUnwinder(const UserStackUnwinder&) = delete;
  UserStackUnwinder& operator=(const UserStackUnwinder&) = delete;

  // The stack of `copy`, innermost first as a stack map holds it: the
  // sampled instruction pointer, then return addresses. Stops where the
  // unwind tables or the copied bytes end; empty when no file of the process
  // could be read.
  std::vector<uint64_t> Unwind(const UserStackCopy& copy);

  // Files that could not be reported to the unwinder, with why.
  const std::vector<std::string>& unreadable() const { return unreadable_; }

 private:
  static bool SetInitialRegisters(Dwfl_Thread* thread, void* self);
  static bool ReadMemory(Dwfl* dwfl, uint64_t address, uint64_t* result, void* self);
  bool ReadFileMemory(uint64_t address, uint64_t* result);

  ProcessMaps maps_;
  Dwfl* dwfl_ = nullptr;
  bool attached_ = false;
  const UserStackCopy* current_ = nullptr;  // the copy being unwound
  std::map<std::string, int> fds_;          // files read for file-backed memory
  std::vector<std::string> unreadable_;
};

}  // namespace perfgate
