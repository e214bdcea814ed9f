// The page cache of single files: dropping a file's pages so that the next
// start reads it from the disk, and counting what is still resident.
//
// posix_fadvise(POSIX_FADV_DONTNEED) drops only clean pages that no process
// maps: a library a running process uses (libc) stays, and so do dirty pages
// until written back (the eviction syncs the file first).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace perfgate {

struct PageCacheUse {
  uint64_t file_bytes = 0;
  uint64_t resident_bytes = 0;
};

// Writes the file back and drops its pages. Throws InfraError naming the file
// when it cannot be opened.
void EvictFromPageCache(const std::string& path);

// How much of the file is in the page cache (mincore on a mapping of it).
// Throws InfraError naming the file when it cannot be opened or mapped.
PageCacheUse ResidentInPageCache(const std::string& path);

// The regular files under `dir`, recursively (symbolic links are not followed).
std::vector<std::string> FilesUnder(const std::string& dir);

// The ELF interpreter of an executable (PT_INTERP, e.g. /lib64/ld-linux-x86-64.so.2);
// empty for a static executable or a file that is not a 64-bit ELF.
std::string ElfInterpreter(const std::string& path);

// The paths of a dynamic loader's `--list` output (what `ldd` prints): the
// libraries as the loader resolved them, in its order, without the vDSO.
std::vector<std::string> ParseLoaderList(const std::string& text);

// The shared libraries exec would load for `executable`: its DT_NEEDED
// closure resolved by its own loader (`INTERP --list`, which maps the
// libraries and exits without running any of their code), so RUNPATH,
// LD_LIBRARY_PATH from `env_ld_library_path` and ld.so.cache count exactly as
// at exec. Libraries opened later with dlopen are not among them.
std::vector<std::string> SharedLibraries(const std::string& executable, const std::string& env_ld_library_path);

// Writes 3 to /proc/sys/vm/drop_caches after a sync: every clean page cache
// page and slab object of the machine, not only the app's. InfraError when it fails.
void DropAllCaches();

}  // namespace perfgate
