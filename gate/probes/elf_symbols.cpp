#include "probes/elf_symbols.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "base/error.h"
#include "probes/fd.h"
#include "probes/features.h"

namespace perfgate {
namespace {

constexpr const char* kCloneMarker = " [clone ";

struct LoadSegment {
  uint64_t vaddr, filesz, offset;
  bool executable;
};

// The file offset of virtual address `address`: a uprobe names a file and an
// offset in it, while symbols hold addresses in the object's own layout. The
// two differ wherever the linker placed a segment at another address than
// its file position (every -z separate-code binary, most shared libraries).
bool FileOffset(const std::vector<LoadSegment>& segments, uint64_t address, uint64_t& offset) {
  // Executable segments first: text is where functions are.
  for (bool want_exec : {true, false}) {
    for (const auto& s : segments) {
      if (s.executable != want_exec || address < s.vaddr || address - s.vaddr >= s.filesz) continue;
      offset = address - s.vaddr + s.offset;
      return true;
    }
  }
  return false;
}

// GCC's split-off cold part of a function: "foo.cold", "foo.cold.3", "_Z3foov.cold".
bool IsColdPart(const std::string& symbol) {
  size_t pos = symbol.find(".cold");
  while (pos != std::string::npos) {
    size_t end = pos + 5;
    if (end == symbol.size() || symbol[end] == '.') return true;
    pos = symbol.find(".cold", end);
  }
  return false;
}

class ElfFile {
 public:
  explicit ElfFile(const std::string& path)
      : path_(path), fd_(open(path.c_str(), O_RDONLY | O_CLOEXEC)), elf_(nullptr, elf_end) {
    static const bool initialized = elf_version(EV_CURRENT) != EV_NONE;
    if (!initialized) throw InfraError("libelf: " + std::string(elf_errmsg(-1)));
    if (!fd_.ok()) throw InputError(path + ": cannot open: " + ErrnoText(errno));
    elf_.reset(elf_begin(fd_.get(), ELF_C_READ_MMAP, nullptr));
    if (elf_ == nullptr || elf_kind(elf_.get()) != ELF_K_ELF) Fail("not an ELF file");
  }

  Elf* get() const { return elf_.get(); }
  [[noreturn]] void Fail(const std::string& what) const {
    int err = elf_errno();
    throw InputError(path_ + ": " + what + (err != 0 ? std::string(" (") + elf_errmsg(err) + ")" : ""));
  }

 private:
  std::string path_;
  // Members, not a destructor, own the file: they are released also when
  // the constructor throws. The handle goes before the descriptor it reads.
  Fd fd_;
  std::unique_ptr<Elf, int (*)(Elf*)> elf_;
};

void ReadSymbols(const ElfFile& file, Elf_Scn* section, const GElf_Shdr& header,
                 const std::vector<LoadSegment>& segments, std::vector<ElfFunction>& out) {
  Elf_Data* data = elf_getdata(section, nullptr);
  if (data == nullptr || header.sh_entsize == 0) return;
  size_t count = header.sh_size / header.sh_entsize;
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) file.Fail("bad symbol table");
    if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size == 0) continue;
    if (sym.st_shndx == SHN_UNDEF || (sym.st_shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX)) continue;
    const char* name = elf_strptr(file.get(), header.sh_link, sym.st_name);
    if (name == nullptr || *name == '\0' || IsColdPart(name)) continue;
    ElfFunction f;
    f.symbol = name;
    f.address = sym.st_value;
    f.size = sym.st_size;
    if (!FileOffset(segments, f.address, f.file_offset)) continue;
    int binding = GELF_ST_BIND(sym.st_info);
    f.global = binding == STB_GLOBAL || binding == STB_WEAK;
    out.push_back(std::move(f));
  }
}

}  // namespace

ElfObject ReadElfObject(const std::string& path) {
  ElfFile file(path);
  GElf_Ehdr header;
  if (gelf_getehdr(file.get(), &header) == nullptr) file.Fail("no ELF header");
  if (header.e_type != ET_EXEC && header.e_type != ET_DYN) file.Fail("not an executable or shared object");

  ElfObject object;
  object.path = path;
  size_t count = 0;
  if (elf_getphdrnum(file.get(), &count) != 0) file.Fail("no program headers");
  std::vector<LoadSegment> segments;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(file.get(), static_cast<int>(i), &ph) == nullptr) file.Fail("bad program header");
    if (ph.p_type == PT_LOAD) segments.push_back({ph.p_vaddr, ph.p_filesz, ph.p_offset, (ph.p_flags & PF_X) != 0});
    if (ph.p_type == PT_INTERP) {
      size_t size = 0;
      const char* raw = elf_rawfile(file.get(), &size);
      if (raw != nullptr && ph.p_offset < size) {
        size_t length = std::min<uint64_t>(ph.p_filesz, size - ph.p_offset);
        object.interpreter.assign(raw + ph.p_offset, strnlen(raw + ph.p_offset, length));
      }
    }
  }

  Elf_Scn* section = nullptr;
  while ((section = elf_nextscn(file.get(), section)) != nullptr) {
    GElf_Shdr sh;
    if (gelf_getshdr(section, &sh) == nullptr) file.Fail("bad section header");
    if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
      ReadSymbols(file, section, sh, segments, object.functions);
  }
  // .dynsym repeats .symtab's exported functions.
  auto& fns = object.functions;
  std::sort(fns.begin(), fns.end(), [](const ElfFunction& a, const ElfFunction& b) {
    if (a.address != b.address) return a.address < b.address;
    if (a.symbol != b.symbol) return a.symbol < b.symbol;
    return a.global && !b.global;  // the global copy survives std::unique
  });
  fns.erase(std::unique(fns.begin(), fns.end(),
                        [](const ElfFunction& a, const ElfFunction& b) {
                          return a.address == b.address && a.symbol == b.symbol;
                        }),
            fns.end());
  return object;
}

std::string Demangle(const std::string& symbol) {
  if (symbol.rfind("_Z", 0) != 0) return symbol;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                                  &std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

namespace {

// Splits "name(args) const [clone .isra.0] [clone .cold]" into the part
// before the first clone marker and the clone suffixes (".isra.0.cold").
std::pair<std::string, std::string> SplitClones(const std::string& demangled) {
  size_t marker = demangled.find(kCloneMarker);
  if (marker == std::string::npos) return {demangled, ""};
  std::string suffix;
  size_t pos = marker;
  while (pos != std::string::npos) {
    size_t start = pos + std::strlen(kCloneMarker);
    size_t end = demangled.find(']', start);
    if (end == std::string::npos) break;
    suffix += demangled.substr(start, end - start);
    pos = demangled.find(kCloneMarker, end);
  }
  return {demangled.substr(0, marker), suffix};
}

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Drops a return type ("void ns::F<int>" -> "ns::F<int>"): the demangler
// prints one for function templates, separated by the last space outside any
// brackets. An operator's own name can hold spaces and brackets ("operator
// new", "operator<"), so the scan stops at the keyword.
std::string DropReturnType(const std::string& name) {
  std::vector<char> open;
  size_t last_space = std::string::npos;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (name.compare(i, 8, "operator") == 0 && (i == 0 || !IsIdentifierChar(name[i - 1])) &&
        (i + 8 == name.size() || !IsIdentifierChar(name[i + 8])))
      break;
    if (c == '<' || c == '(' || c == '{' || c == '[') {
      open.push_back(c);
    } else if (!open.empty() && ((c == '>' && open.back() == '<') || (c == ')' && open.back() == '(') ||
                                 (c == '}' && open.back() == '{') || (c == ']' && open.back() == '['))) {
      open.pop_back();
    } else if (c == ' ' && open.empty()) {
      last_space = i;
    }
  }
  return last_space == std::string::npos ? name : name.substr(last_space + 1);
}

// Drops ABI tags ("GetEnv[abi:cxx11]" -> "GetEnv"): they tell the linker
// apart what the source spells the same, and nobody writes them in a glob.
std::string DropAbiTags(std::string name) {
  for (size_t pos = name.find("[abi:"); pos != std::string::npos; pos = name.find("[abi:", pos)) {
    size_t end = name.find(']', pos);
    if (end == std::string::npos) break;
    name.erase(pos, end + 1 - pos);
  }
  return name;
}

}  // namespace

std::string FunctionBaseName(const std::string& demangled) {
  auto [name, clones] = SplitClones(DropAbiTags(demangled));
  size_t close = name.rfind(')');
  if (close == std::string::npos) {
    // A C name: GCC's clones are "foo.isra.0", "foo.constprop.0", "foo.part.1".
    size_t dot = name.find('.');
    return dot == 0 || dot == std::string::npos ? name : name.substr(0, dot);
  }
  // Everything after the parameter list's ')' is a qualifier (const, &&, ...).
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) return i == 0 ? name : DropReturnType(name.substr(0, i));
  }
  return name;
}

std::string CloneSuffix(const std::string& demangled) {
  auto [name, clones] = SplitClones(DropAbiTags(demangled));
  if (!clones.empty() || name.find(')') != std::string::npos) return clones;
  size_t dot = name.find('.');
  return dot == 0 || dot == std::string::npos ? "" : name.substr(dot);
}

}  // namespace perfgate
