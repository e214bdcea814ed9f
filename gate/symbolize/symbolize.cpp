#include "symbolize/symbolize.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/error.h"
#include "probes/features.h"

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

namespace {

constexpr size_t kRingPages = 128;  // per CPU, 512 KiB of records between drains
constexpr int kDrainIntervalMs = 10;

int OpenSideBand(int cpu) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  attr.sample_id_all = 1;
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.build_id = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;  // fork: a child starts with its parent's mappings
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

struct ProcessMapsRecorder::Ring {
  int fd = -1;
  void* base = nullptr;
  size_t length = 0;
  ~Ring() {
    if (base != nullptr) munmap(base, length);
    if (fd >= 0) close(fd);
  }
  // Parses every record written since the last call into `out`.
  void Read(std::vector<MapRecord>& out, uint32_t self) {
    auto* meta = static_cast<perf_event_mmap_page*>(base);
    const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    const auto* data = static_cast<const uint8_t*>(base) + meta->data_offset;
    const uint64_t size = meta->data_size;
    std::vector<uint8_t> record;
    while (tail < head) {
      perf_event_header header{};
      for (size_t i = 0; i < sizeof(header); ++i) reinterpret_cast<uint8_t*>(&header)[i] = data[(tail + i) % size];
      if (header.size < sizeof(header)) break;  // cannot happen; never spin on it
      record.resize(header.size);
      for (size_t i = 0; i < header.size; ++i) record[i] = data[(tail + i) % size];
      tail += header.size;
      std::optional<MapRecord> r = ParseMapRecord(record.data(), record.size());
      // perfgate's own mappings are of no use, but a child it forks starts with them.
      if (r && (r->kind != MapRecord::Kind::kMap || r->pid != self)) out.push_back(std::move(*r));
    }
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  }
};

ProcessMapsRecorder::ProcessMapsRecorder(int tracked_map_fd) : map_fd_(tracked_map_fd) {
  const long page = sysconf(_SC_PAGESIZE);
  const int cpus = libbpf_num_possible_cpus();
  for (int cpu = 0; cpu < cpus; ++cpu) {
    const int fd = OpenSideBand(cpu);
    if (fd < 0) {
      if (errno == ENODEV && cpu > 0) continue;  // an offline CPU
      throw InfraError("evidence: mmap records: perf_event_open on CPU " + std::to_string(cpu) + ": " +
                       ErrnoText(errno));
    }
    auto ring = std::make_unique<Ring>();
    ring->fd = fd;
    ring->length = static_cast<size_t>(page) * (kRingPages + 1);
    ring->base = mmap(nullptr, ring->length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring->base == MAP_FAILED) {
      ring->base = nullptr;
      throw InfraError("evidence: mmap records: map the ring buffer of CPU " + std::to_string(cpu) + ": " +
                       ErrnoText(errno));
    }
    rings_.push_back(std::move(ring));
  }
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      Drain();
      std::this_thread::sleep_for(std::chrono::milliseconds(kDrainIntervalMs));
    }
  });
}

ProcessMapsRecorder::~ProcessMapsRecorder() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void ProcessMapsRecorder::Drain() {
  const uint32_t self = static_cast<uint32_t>(getpid());
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& ring : rings_) ring->Read(records_, self);
}

std::map<uint32_t, ProcessMaps> ProcessMapsRecorder::Finish() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  Drain();
  std::map<uint32_t, ProcessMaps> maps;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lost_ += ApplyMapRecords(std::move(records_), maps);
    records_.clear();
  }
  // Tracked processes that mapped their code before recording began.
  uint32_t key = 0, current = 0;
  const void* previous = nullptr;
  while (bpf_map_get_next_key(map_fd_, previous, &key) == 0) {
    current = key;
    previous = &current;
    uint32_t tgid = 0;
    if (bpf_map_lookup_elem(map_fd_, &current, &tgid) != 0 || tgid == 0) continue;
    auto known = maps.find(tgid);
    if (known != maps.end() && !known->second.ranges.empty()) continue;
    if (std::optional<ProcessMaps> read = ReadProcessMaps(static_cast<pid_t>(tgid))) maps[tgid] = std::move(*read);
  }
  return maps;
}

std::string ReadBuildId(const std::string& path) {
  elf_version(EV_CURRENT);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string id;
  if (Elf* elf = elf_begin(fd, ELF_C_READ, nullptr)) {
    Elf_Scn* scn = nullptr;
    while (id.empty() && (scn = elf_nextscn(elf, scn)) != nullptr) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (data == nullptr) continue;
      GElf_Nhdr note;
      size_t offset = 0, name_at = 0, desc_at = 0;
      while ((offset = gelf_getnote(data, offset, &note, &name_at, &desc_at)) > 0) {
        const char* name = static_cast<const char*>(data->d_buf) + name_at;
        if (note.n_type != NT_GNU_BUILD_ID || note.n_namesz != 4 || std::memcmp(name, "GNU", 4) != 0) continue;
        const auto* desc = static_cast<const uint8_t*>(data->d_buf) + desc_at;
        char hex[3];
        for (size_t i = 0; i < note.n_descsz; ++i) {
          std::snprintf(hex, sizeof hex, "%02x", desc[i]);
          id += hex;
        }
        break;
      }
    }
    elf_end(elf);
  }
  close(fd);
  return id;
}

std::string DebugFileOfBuildId(const std::string& build_id) {
  if (build_id.size() < 3) return "";
  return "/usr/lib/debug/.build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) + ".debug";
}

// ---- stacks -------------------------------------------------------------

StackSymbolizer::StackSymbolizer(KernelSymbols kernel, std::map<uint32_t, ProcessMaps> maps)
    : kernel_(std::move(kernel)), maps_(std::move(maps)) {}

std::string StackSymbolizer::KernelFrame(uint64_t ip) {
  std::string name = kernel_.Name(ip);
  return (name.empty() ? "[unknown]" : name) + "_[k]";
}

StackSymbolizer::Object& StackSymbolizer::ObjectAt(const MappedRange& range) {
  auto& slot = objects_[range.build_id.empty() ? range.path : range.path + "\n" + range.build_id];
  if (slot) return *slot;
  slot = std::make_unique<Object>();
  if (range.path.empty() || range.path[0] != '/') return *slot;  // [vdso], [anon:...]
  // The debug file of the build ID has the full symbol table (the object
  // itself may be stripped) and is the one the process ran whatever became
  // of the file since; the file is used when it is still that object.
  std::string path;
  if (!range.build_id.empty()) {
    std::string debug = DebugFileOfBuildId(range.build_id);
    debug.replace(0, std::string("/usr/lib/debug").size(), debug_root_);
    std::error_code ec;
    if (std::filesystem::is_regular_file(debug, ec)) path = debug;
  }
  if (path.empty()) {
    const std::string now = range.build_id.empty() ? "" : ReadBuildId(range.path);
    if (range.build_id.empty() || now == range.build_id) {
      path = range.path;
    } else {
      unreadable_.push_back(
          range.path + ": " +
          (now.empty() ? "gone" : "replaced (build ID " + now + ", the process ran " + range.build_id + ")") +
          " and no debug file of build ID " + range.build_id);
      return *slot;
    }
  }
  slot->path = path;
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
  at.object = &ObjectAt(*at.range);
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
    at.object->lines = DwarfLines::Open(at.object->path);
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
  auto symbolize_user = [&](const RawStack& stack, const std::vector<uint64_t>& ips) {
    std::vector<StackSymbolizer::UserSymbol> symbols;
    for (size_t i = 0; i < ips.size(); ++i) {
      // Every frame but the innermost is a return address: the call is just before it.
      symbols.push_back(symbolizer.User(stack.tgid, ips[i] - (i > 0 ? 1 : 0)));
    }
    return symbols;
  };
  auto outermost_first = [](const std::vector<StackSymbolizer::UserSymbol>& symbols) {
    std::vector<std::string> frames;
    for (auto it = symbols.rbegin(); it != symbols.rend(); ++it) frames.push_back(it->frame);
    return frames;
  };
  for (const RawStack& stack : stacks) {
    std::vector<StackSymbolizer::UserSymbol> symbols = symbolize_user(stack, stack.user_ips);
    bool truncated = IsTruncatedUserStack(outermost_first(symbols));
    // The frame-pointer walk is the fast path; where it stopped short, the
    // unwound stack replaces it unless that went no further. Where there is
    // no walk at all (its stack lost a collision in the stack map, which code
    // without frame pointers fills with garbage chains: most often in its
    // hottest function), the unwound stack is all there is.
    if ((truncated || symbols.empty()) && !stack.unwound_user_ips.empty()) {
      std::vector<StackSymbolizer::UserSymbol> unwound = symbolize_user(stack, stack.unwound_user_ips);
      const bool unwound_truncated = IsTruncatedUserStack(outermost_first(unwound));
      if (!unwound_truncated || unwound.size() > symbols.size()) {
        symbols = std::move(unwound);
        truncated = unwound_truncated;
      }
    }
    std::vector<std::string> user, kernel;
    for (StackSymbolizer::UserSymbol& symbol : symbols) {
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
    if (truncated) profile.truncated_user_stacks += stack.count;
    profile.stacks[FoldFrames(user, kernel)] += stack.weight;
    profile.total += stack.weight;
    profile.samples += stack.count;
  }
  for (const auto& [frame, lines] : line_weights) {
    auto heaviest =
        std::max_element(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    profile.sources[frame] = heaviest->first;
  }
  return profile;
}

void SetRepetitionSpread(FoldedProfile& pooled, const std::vector<FoldedProfile>& repetitions) {
  pooled.spread_chi_square = 0;
  pooled.spread_df = 0;
  // Weight per leaf frame, of each repetition and pooled.
  std::vector<std::map<std::string, double>> rows;
  std::map<std::string, double> columns;
  double total = 0;
  for (const FoldedProfile& repetition : repetitions) {
    std::map<std::string, double> row;
    for (const auto& [stack, weight] : repetition.stacks) {
      const size_t leaf = stack.rfind(';');
      row[leaf == std::string::npos ? stack : stack.substr(leaf + 1)] += static_cast<double>(weight);
    }
    double n = 0;
    for (const auto& [frame, weight] : row) n += weight;
    if (n <= 0) continue;
    for (const auto& [frame, weight] : row) columns[frame] += weight;
    total += n;
    rows.push_back(std::move(row));
  }
  if (rows.size() < 2 || total <= 0) return;
  // Frames below 1 % of the weight are one column: their expected counts are
  // too small for the chi-square.
  std::vector<std::string> named;
  double rest = 0;
  for (const auto& [frame, weight] : columns) {
    if (weight >= 0.01 * total) {
      named.push_back(frame);
    } else {
      rest += weight;
    }
  }
  const size_t k = named.size() + (rest > 0 ? 1 : 0);
  if (k < 2) return;
  double chi_square = 0;
  for (const auto& row : rows) {
    double n = 0, named_weight = 0;
    for (const auto& [frame, weight] : row) n += weight;
    auto add = [&](double observed, double column) {
      const double expected = n * column / total;
      if (expected > 0) chi_square += (observed - expected) * (observed - expected) / expected;
    };
    for (const std::string& frame : named) {
      auto it = row.find(frame);
      const double observed = it == row.end() ? 0 : it->second;
      named_weight += observed;
      add(observed, columns[frame]);
    }
    if (rest > 0) add(n - named_weight, rest);
  }
  pooled.spread_chi_square = chi_square;
  pooled.spread_df = static_cast<uint32_t>((rows.size() - 1) * (k - 1));
}

std::string TruncationNote(const std::vector<FoldedProfile>& profiles) {
  std::string where;
  for (const FoldedProfile& profile : profiles) {
    if (profile.truncated_user_stacks == 0) continue;
    const std::string what = profile.kind == "off-cpu" ? " waits" : " samples";
    where += (where.empty() ? "" : ", ") + std::to_string(profile.truncated_user_stacks) + " of " +
             std::to_string(profile.samples) + " " + profile.kind + what;
  }
  if (where.empty()) return "";
  return "user stacks truncated in " + where + ": rebuild with -fno-omit-frame-pointer for full stacks";
}

}  // namespace perfgate
