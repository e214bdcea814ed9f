#include "symbolize/dwarf_lines.h"

#include <elfutils/libdwfl.h>

namespace perfgate {
namespace {

char* g_debuginfo_path = nullptr;  // libdwfl's default search path

const Dwfl_Callbacks kCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &g_debuginfo_path,
};

}  // namespace

std::unique_ptr<DwarfLines> DwarfLines::Open(const std::string& path) {
  Dwfl* dwfl = dwfl_begin(&kCallbacks);
  if (dwfl == nullptr) return nullptr;
  // Base 0, segments at their own p_vaddr: module addresses are the file's
  // link-time virtual addresses, for executables and shared objects alike.
  Dwfl_Module* module = dwfl_report_elf(dwfl, path.c_str(), path.c_str(), -1, 0, true);
  Dwarf_Addr bias = 0;
  if (module == nullptr || dwfl_report_end(dwfl, nullptr, nullptr) != 0 ||
      dwfl_module_getdwarf(module, &bias) == nullptr) {
    dwfl_end(dwfl);
    return nullptr;
  }
  return std::unique_ptr<DwarfLines>(new DwarfLines(dwfl, module));
}

DwarfLines::~DwarfLines() { dwfl_end(dwfl_); }

std::string DwarfLines::At(uint64_t address) const {
  Dwfl_Line* line = dwfl_module_getsrc(module_, address);
  if (line == nullptr) return "";
  int number = 0;
  const char* file = dwfl_lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr);
  if (file == nullptr || number <= 0) return "";
  return std::string(file) + ":" + std::to_string(number);
}

}  // namespace perfgate
