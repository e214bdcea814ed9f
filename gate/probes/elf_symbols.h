// The functions an ELF executable or shared object defines, read from its
// symbol tables with libelf, with the file offsets a uprobe attaches to.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace perfgate {

struct ElfFunction {
  std::string symbol;    // as in the symbol table (mangled for C++)
  uint64_t address = 0;  // st_value: the virtual address in the object's own layout
  uint64_t size = 0;
  uint64_t file_offset = 0;  // where a uprobe on the function's entry goes
  bool global = false;       // STB_GLOBAL or STB_WEAK, else local (static)
};

struct ElfObject {
  std::string path;
  std::string interpreter;  // PT_INTERP (the dynamic loader); empty when statically linked
  // Defined functions (STT_FUNC, non-zero size, in a section) of .symtab and
  // .dynsym, once per (symbol, address), sorted by address. Aliases (several
  // names at one address) are all kept, so that a glob can match any of them.
  std::vector<ElfFunction> functions;
};

// Reads `path`. Throws InputError when it is missing or not an ELF
// executable/shared object. GNU indirect functions (STT_GNU_IFUNC) are left
// out: their symbol is the resolver, which runs once at load time, not the
// implementation that callers reach. So are GCC's ".cold" parts of split
// functions, which are jumped to rather than called, so a uretprobe there
// would take the caller's return address for theirs.
ElfObject ReadElfObject(const std::string& path);

// abi::__cxa_demangle of an Itanium C++ name; `symbol` itself when it is not
// one (a C name) or does not demangle.
std::string Demangle(const std::string& symbol);

// A demangled name without its return type, parameter list, qualifiers, ABI
// tags and compiler clone suffix: "void ns::F<int>(int) const [clone
// .isra.0]" -> "ns::F<int>", "ns::Name[abi:cxx11]()" -> "ns::Name"; a C name
// loses its clone suffix: "foo.constprop.0" -> "foo".
std::string FunctionBaseName(const std::string& demangled);

// The compiler clone suffix FunctionBaseName drops, in symbol form:
// ".isra.0" for both "ns::F(int) [clone .isra.0]" and "foo.isra.0"; empty
// for an original function.
std::string CloneSuffix(const std::string& demangled);

}  // namespace perfgate
