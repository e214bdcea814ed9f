#include "symbolize/symbolize.h"

#include <bpf/bpf.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "metrics/error.h"

namespace perfgate {

namespace {

std::string Hex(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace

// ---- kernel ---------------------------------------------------------------

KernelSymbols KernelSymbols::Parse(std::istream& in) {
  KernelSymbols table;
  std::string line;
  bool any_address = false;
  while (std::getline(in, line)) {
    // "ffffffff81000000 T _stext" or "ffffffffc0a01000 t foo\t[module]"
    std::istringstream fields(line);
    std::string address, type, name;
    if (!(fields >> address >> type >> name) || type.size() != 1) continue;
    const char t = type[0];
    if (t != 't' && t != 'T' && t != 'w' && t != 'W') continue;
    uint64_t value = 0;
    if (!ParseHex(address, value)) continue;
    any_address |= value != 0;
    table.symbols_.push_back({value, name});
  }
  if (!any_address) table.symbols_.clear();
  std::stable_sort(table.symbols_.begin(), table.symbols_.end(),
                   [](const KernelSymbol& a, const KernelSymbol& b) { return a.address < b.address; });
  return table;
}

KernelSymbols KernelSymbols::Load() {
  std::ifstream in("/proc/kallsyms");
  if (!in) return {};
  return Parse(in);
}

std::string KernelSymbols::Name(uint64_t ip) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), ip,
                             [](uint64_t value, const KernelSymbol& s) { return value < s.address; });
  if (it == symbols_.begin()) return "";
  return std::prev(it)->name;
}

// ---- user -----------------------------------------------------------------

ProcessMapsRecorder::ProcessMapsRecorder(int tracked_map_fd, std::chrono::milliseconds interval)
    : map_fd_(tracked_map_fd), interval_(interval) {
  thread_ = std::thread([this] {
    for (int round = 1; !stop_.load(); ++round) {
      Poll(round % 10 == 0);
      std::this_thread::sleep_for(interval_);
    }
  });
}

ProcessMapsRecorder::~ProcessMapsRecorder() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void ProcessMapsRecorder::Poll(bool all) {
  std::set<uint32_t> tgids;
  uint32_t key = 0;
  const void* previous = nullptr;
  uint32_t current = 0;
  while (bpf_map_get_next_key(map_fd_, previous, &key) == 0) {
    current = key;
    previous = &current;
    uint32_t tgid = 0;
    if (bpf_map_lookup_elem(map_fd_, &current, &tgid) == 0 && tgid != 0) tgids.insert(tgid);
  }
  for (uint32_t tgid : tgids) {
    // A process seen before its exec (perfgate's fork of the workload) is read again once it has exec'd.
    std::error_code ec;
    const std::string exe = std::filesystem::read_symlink("/proc/" + std::to_string(tgid) + "/exe", ec).string();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto seen = exe_.find(tgid);
      if (!all && seen != exe_.end() && seen->second == exe) continue;
    }
    std::optional<ProcessMaps> maps = ReadProcessMaps(static_cast<pid_t>(tgid));
    if (!maps) continue;  // exited meanwhile: keep what was read before
    std::lock_guard<std::mutex> lock(mutex_);
    maps_[tgid] = std::move(*maps);
    exe_[tgid] = exe;
  }
}

std::map<uint32_t, ProcessMaps> ProcessMapsRecorder::Finish() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  Poll(true);
  std::lock_guard<std::mutex> lock(mutex_);
  return maps_;
}

// ---- stacks -------------------------------------------------------------

StackSymbolizer::StackSymbolizer(KernelSymbols kernel, std::map<uint32_t, ProcessMaps> maps)
    : kernel_(std::move(kernel)), maps_(std::move(maps)) {}

std::string StackSymbolizer::KernelFrame(uint64_t ip) {
  std::string name = kernel_.Name(ip);
  return (name.empty() ? "[unknown]" : name) + "_[k]";
}

StackSymbolizer::Object& StackSymbolizer::ObjectAt(const std::string& path) {
  auto& slot = objects_[path];
  if (slot) return *slot;
  slot = std::make_unique<Object>();
  if (path.empty() || path[0] != '/') return *slot;  // [vdso], [anon:...]
  try {
    ElfObject elf = ReadElfObject(path);
    slot->functions = std::move(elf.functions);
    std::sort(slot->functions.begin(), slot->functions.end(), [](const ElfFunction& a, const ElfFunction& b) {
      if (a.file_offset != b.file_offset) return a.file_offset < b.file_offset;
      return a.global && !b.global;  // the global name of an alias first
    });
    slot->readable = true;
  } catch (const Error& e) {
    unreadable_.push_back(e.what());
  }
  return *slot;
}

StackSymbolizer::Location StackSymbolizer::Locate(uint32_t tgid, uint64_t ip) {
  Location at;
  auto maps = maps_.find(tgid);
  if (maps == maps_.end()) {
    missing_[tgid] = true;
    return at;
  }
  at.range = maps->second.Find(ip);
  if (at.range == nullptr || at.range->path[0] != '/') return at;  // no map, or "[vdso]"
  at.file_offset = ip - at.range->start + at.range->offset;
  at.object = &ObjectAt(at.range->path);
  const auto& fns = at.object->functions;
  // The last function starting at or below the offset, if it spans it.
  auto it = std::upper_bound(fns.begin(), fns.end(), at.file_offset,
                             [](uint64_t value, const ElfFunction& f) { return value < f.file_offset; });
  while (it != fns.begin()) {
    --it;
    if (at.file_offset < it->file_offset + it->size) {
      // Aliases share an offset; the first of them is the preferred name.
      while (it != fns.begin() && std::prev(it)->file_offset == it->file_offset) --it;
      at.function = &*it;
      return at;
    }
    // A small function right below may not span it; a larger one further down might.
    if (at.file_offset - it->file_offset > (1u << 20)) break;
  }
  return at;
}

std::string StackSymbolizer::FrameAt(const Location& at) {
  if (at.range == nullptr) return "[unknown]";
  if (at.object == nullptr) return at.range->path;  // "[vdso]"
  if (at.function != nullptr) return FunctionBaseName(Demangle(at.function->symbol));
  return std::filesystem::path(at.range->path).filename().string() + "+" + Hex(at.file_offset);
}

std::string StackSymbolizer::SourceAt(const Location& at) {
  if (at.function == nullptr) return "";
  if (!at.object->lines_read) {
    at.object->lines_read = true;
    at.object->lines = DwarfLines::Open(at.range->path);
  }
  if (!at.object->lines) return "";
  // The line table speaks the object's virtual addresses; the function's
  // symbol gives the offset-to-address shift of its segment.
  return at.object->lines->At(at.file_offset - at.function->file_offset + at.function->address);
}

std::string StackSymbolizer::UserFrame(uint32_t tgid, uint64_t ip) { return FrameAt(Locate(tgid, ip)); }

std::string StackSymbolizer::UserSource(uint32_t tgid, uint64_t ip) { return SourceAt(Locate(tgid, ip)); }

StackSymbolizer::UserSymbol StackSymbolizer::User(uint32_t tgid, uint64_t ip) {
  const Location at = Locate(tgid, ip);
  return {FrameAt(at), SourceAt(at)};
}

bool IsTruncatedUserStack(const std::vector<std::string>& frames) {
  if (frames.empty()) return false;
  if (frames.size() <= 2) return true;
  static const std::set<std::string> kRoots = {
      "_start",  "__libc_start_main", "__libc_start_call_main", "start_thread", "clone", "clone3",
      "__clone", "__clone3",          "__GI___clone3"};
  if (kRoots.count(frames.front()) != 0) return false;
  // Distributions strip the C library's local symbols: its start routines
  // (__libc_start_call_main, start_thread, clone3) read "libc.so.6+0x...".
  // A walk that ended there, or right above main, reached the root.
  return frames[1] != "main" && frames.front().rfind("libc.so", 0) != 0;
}

namespace {

// A frame as folded stacks hold it: ';' separates frames, so none may appear in one.
std::string FoldedFrame(const std::string& frame) {
  std::string out = frame;
  std::replace(out.begin(), out.end(), ';', ':');
  return out;
}

}  // namespace

std::string FoldFrames(const std::vector<std::string>& user, const std::vector<std::string>& kernel) {
  std::string folded;
  auto add = [&](const std::string& frame) {
    if (!folded.empty()) folded += ';';
    folded += FoldedFrame(frame);
  };
  for (auto it = user.rbegin(); it != user.rend(); ++it) add(*it);
  for (auto it = kernel.rbegin(); it != kernel.rend(); ++it) add(*it);
  return folded.empty() ? "[unknown]" : folded;
}

FoldedProfile FoldProfile(const std::string& kind, const std::string& unit, const std::vector<RawStack>& stacks,
                          StackSymbolizer& symbolizer) {
  FoldedProfile profile;
  profile.kind = kind;
  profile.unit = unit;
  std::map<std::string, std::map<std::string, uint64_t>> line_weights;  // frame -> source line -> weight
  for (const RawStack& stack : stacks) {
    std::vector<std::string> user, kernel;
    for (size_t i = 0; i < stack.user_ips.size(); ++i) {
      // Every frame but the innermost is a return address: the call is just before it.
      const uint64_t ip = stack.user_ips[i] - (i > 0 ? 1 : 0);
      StackSymbolizer::UserSymbol symbol = symbolizer.User(stack.tgid, ip);
      user.push_back(std::move(symbol.frame));
      if (!symbol.source.empty()) line_weights[FoldedFrame(user.back())][symbol.source] += stack.weight;
    }
    for (size_t i = 0; i < stack.kernel_ips.size(); ++i)
      kernel.push_back(symbolizer.KernelFrame(stack.kernel_ips[i] - (i > 0 ? 1 : 0)));
    // A stack taken inside a tracepoint program (offcpu's) starts with the
    // program and the tracepoint's BPF glue: perfgate's frames, not the workload's.
    static const char* const kGlue[] = {"__traceiter_", "bpf_trace_run", "__bpf_trace_", "perf_trace_",
                                        "trace_call_bpf"};
    for (size_t i = kernel.size(); i-- > 0;) {
      if (std::any_of(std::begin(kGlue), std::end(kGlue),
                      [&](const char* glue) { return kernel[i].rfind(glue, 0) == 0; })) {
        kernel.erase(kernel.begin(), kernel.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        break;
      }
    }
    const std::vector<std::string> outermost_first(user.rbegin(), user.rend());
    if (IsTruncatedUserStack(outermost_first)) profile.truncated_user_stacks += stack.count;
    profile.stacks[FoldFrames(user, kernel)] += stack.weight;
    profile.total += stack.weight;
    profile.samples += stack.count;
  }
  for (const auto& [frame, lines] : line_weights) {
    auto heaviest = std::max_element(lines.begin(), lines.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
    profile.sources[frame] = heaviest->first;
  }
  return profile;
}

std::string TruncationNote(const FoldedProfile& profile) {
  if (profile.truncated_user_stacks == 0) return "";
  const std::string what = profile.kind == "off-cpu" ? " waits" : " samples";
  return profile.kind + ": user stacks truncated in " + std::to_string(profile.truncated_user_stacks) + " of " +
         std::to_string(profile.samples) + what + ": rebuild with -fno-omit-frame-pointer for full stacks";
}

}  // namespace perfgate
