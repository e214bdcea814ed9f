// Source lines of instruction addresses from an object's DWARF line table
// (elfutils libdwfl), for the evidence reports: "which line of the function
// the samples fell on". Debug info is read from the object itself or from
// its separate debug file (/usr/lib/debug/.build-id/..., as Debian's -dbgsym
// packages install it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

struct Dwfl;
struct Dwfl_Module;

namespace perfgate {

class DwarfLines {
 public:
  // The line table of the ELF file at `path`; nullptr when it has none (no
  // debug info, or not readable).
  static std::unique_ptr<DwarfLines> Open(const std::string& path);
  ~DwarfLines();
  DwarfLines(const DwarfLines&) = delete;
  DwarfLines& operator=(const DwarfLines&) = delete;

  // "src/parse.cpp:42" for `address`, a virtual address in the object's own
  // layout (st_value's); empty when the table has no line for it.
  std::string At(uint64_t address) const;

 private:
  DwarfLines(Dwfl* dwfl, Dwfl_Module* module) : dwfl_(dwfl), module_(module) {}
  Dwfl* dwfl_;
  Dwfl_Module* module_;
};

}  // namespace perfgate
