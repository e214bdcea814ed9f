#include "symbolize/dwarf_unwind.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstring>
#include <set>

#include "stacks.h"
#include "symbolize/symbolize.h"

namespace perfgate {
namespace {

const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = nullptr,
};

// The load bias of the file at `path` mapped at `start` from file offset
// `offset` (an executable mapping): where its virtual address 0 lies. The
// executable PT_LOAD holding `offset` gives the address the file meant for
// it; linkers may place segments at addresses other than their offsets (lld
// does), so start - offset is not enough. Only an executable one: lld's
// read-only segment ends in the page its text starts in, and that page's
// offset lies in both, a page apart in their addresses.
bool LoadBias(const std::string& path, uint64_t start, uint64_t offset, uint64_t& bias, std::string& why) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why = std::strerror(errno);
    return false;
  }
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  bool found = false;
  size_t count = 0;
  if (elf != nullptr && elf_getphdrnum(elf, &count) == 0) {
    for (size_t i = 0; i < count && !found; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD ||
          (phdr.p_flags & PF_X) == 0)
        continue;
      // The mapping starts at the page holding the segment's first byte.
      const uint64_t page_offset = phdr.p_offset & ~uint64_t{0xfff};
      if (offset < page_offset || offset >= phdr.p_offset + phdr.p_filesz) continue;
      bias = start - (phdr.p_vaddr - (phdr.p_offset - offset));
      found = true;
    }
  }
  if (!found) why = elf == nullptr ? elf_errmsg(-1) : "no loadable segment at the mapped offset";
  if (elf != nullptr) elf_end(elf);
  close(fd);
  return found;
}

// The process has one thread: the sampled one, whose unwinder is its argument.
pid_t NextThread(Dwfl* dwfl, void* unwinder, void** thread_arg) {
  if (*thread_arg != nullptr) return 0;
  *thread_arg = unwinder;
  return dwfl_pid(dwfl);
}

int AddFrame(Dwfl_Frame* state, void* arg) {
  auto& ips = *static_cast<std::vector<uint64_t>*>(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0) return DWARF_CB_ABORT;
  ips.push_back(pc);
  return ips.size() < PG_STACK_DEPTH ? DWARF_CB_OK : DWARF_CB_ABORT;
}

}  // namespace

UserStackUnwinder::UserStackUnwinder(const ProcessMaps& maps, const std::string& debug_root) : maps_(maps) {
  dwfl_ = dwfl_begin(&kOfflineCallbacks);
  if (dwfl_ == nullptr) return;
  dwfl_report_begin(dwfl_);
  std::set<std::string> reported;
  for (const MappedRange& range : maps_.ranges) {
    // "[vdso]" has no file; its few functions have no callers of interest.
    if (range.path.empty() || range.path.front() == '[' || !reported.insert(range.path).second) continue;
    std::string file = range.path;
    if (!range.build_id.empty() && ReadBuildId(file) != range.build_id) {
      file = debug_root + "/.build-id/" + range.build_id.substr(0, 2) + "/" + range.build_id.substr(2) + ".debug";
      if (access(file.c_str(), R_OK) != 0) {
        unreadable_.push_back(range.path + ": rebuilt since it was mapped, and no debug file of build ID " +
                              range.build_id);
        continue;
      }
    }
    uint64_t bias = 0;
    std::string why;
    if (!LoadBias(file, range.start, range.offset, bias, why)) {
      unreadable_.push_back(range.path + ": " + why);
      continue;
    }
    if (dwfl_report_elf(dwfl_, range.path.c_str(), file.c_str(), -1, bias, true) == nullptr)
      unreadable_.push_back(range.path + ": " + dwfl_errmsg(-1));
  }
  dwfl_report_end(dwfl_, nullptr, nullptr);
  static const Dwfl_Thread_Callbacks kThreadCallbacks = {
      .next_thread = NextThread,
      .get_thread = nullptr,
      .memory_read = ReadMemory,
      .set_initial_registers = SetInitialRegisters,
      .detach = nullptr,
      .thread_detach = nullptr,
  };
  // The pid only names the one thread; nothing is read from the live process.
  attached_ = dwfl_attach_state(dwfl_, nullptr, 1, &kThreadCallbacks, this);
  if (!attached_ && maps_.ranges.size() > 0 && unreadable_.empty())
    unreadable_.push_back(std::string("unwinder: ") + dwfl_errmsg(-1));
}

UserStackUnwinder::~UserStackUnwinder() {
  if (dwfl_ != nullptr) dwfl_end(dwfl_);
  for (const auto& [path, fd] : fds_) {
    if (fd >= 0) close(fd);
  }
}

std::vector<uint64_t> UserStackUnwinder::Unwind(const UserStackCopy& copy) {
  std::vector<uint64_t> ips;
  if (!attached_) return ips;
  current_ = &copy;
  // Ends with an error where the tables or the copy end: the frames up to there are the stack.
  dwfl_getthread_frames(dwfl_, 1, AddFrame, &ips);
  current_ = nullptr;
  return ips;
}

bool UserStackUnwinder::SetInitialRegisters(Dwfl_Thread* thread, void* self) {
  const UserStackCopy& copy = *static_cast<UserStackUnwinder*>(self)->current_;
  Dwarf_Word regs[UserStackCopy::kRegisters];
  std::copy(copy.regs.begin(), copy.regs.end(), regs);
  if (!dwfl_thread_state_registers(thread, 0, UserStackCopy::kRegisters, regs)) return false;
  dwfl_thread_state_register_pc(thread, copy.regs[UserStackCopy::kInstructionPointer]);
  return true;
}

bool UserStackUnwinder::ReadMemory(Dwfl*, Dwarf_Addr address, Dwarf_Word* result, void* self) {
  auto* unwinder = static_cast<UserStackUnwinder*>(self);
  const UserStackCopy& copy = *unwinder->current_;
  const uint64_t sp = copy.regs[UserStackCopy::kStackPointer];
  if (address >= sp && address - sp + sizeof(*result) <= copy.stack.size()) {
    std::memcpy(result, copy.stack.data() + (address - sp), sizeof(*result));
    return true;
  }
  return unwinder->ReadFileMemory(address, result);
}

bool UserStackUnwinder::ReadFileMemory(uint64_t address, uint64_t* result) {
  const MappedRange* range = maps_.Find(address);
  if (range == nullptr || range->path.empty() || range->path.front() == '[' || address + sizeof(*result) > range->end)
    return false;
  auto [it, added] = fds_.emplace(range->path, -1);
  if (added) it->second = open(range->path.c_str(), O_RDONLY | O_CLOEXEC);
  if (it->second < 0) return false;
  const auto at = static_cast<off_t>(range->offset + (address - range->start));
  return pread(it->second, result, sizeof(*result), at) == static_cast<ssize_t>(sizeof(*result));
}

}  // namespace perfgate
