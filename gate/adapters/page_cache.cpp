#include "adapters/page_cache.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "base/error.h"

namespace perfgate {

namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Closes the descriptor when it goes, whichever way the function returns.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

void EvictFromPageCache(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  const FdCloser closer{fd};
  if (fd < 0) throw InfraError(Errno("cold start: cannot open " + path + " to evict it"));
  // DONTNEED skips dirty pages: write them first.
  fdatasync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

PageCacheUse ResidentInPageCache(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const FdCloser closer{fd};
  if (fd < 0) throw InfraError(Errno("cannot open " + path));
  struct stat st {};
  if (fstat(fd, &st) != 0) throw InfraError(Errno("cannot stat " + path));
  PageCacheUse use;
  use.file_bytes = static_cast<uint64_t>(st.st_size);
  if (st.st_size == 0) return use;
  const size_t length = static_cast<size_t>(st.st_size);
  // Mapping does not fault pages in; mincore then reports the page cache's state.
  void* map = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) throw InfraError(Errno("cannot map " + path));
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec((length + page - 1) / page);
  const int rc = mincore(map, length, vec.data());
  const int err = errno;
  munmap(map, length);
  errno = err;
  if (rc != 0) throw InfraError(Errno("mincore on " + path));
  for (size_t i = 0; i < vec.size(); ++i) {
    if (vec[i] & 1) use.resident_bytes += std::min(page, length - i * page);
  }
  return use;
}

std::vector<std::string> FilesUnder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) files.push_back(it->path().string());
  }
  if (ec) throw InfraError("cold start: cannot list " + dir + ": " + ec.message());
  return files;
}

std::string ElfInterpreter(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const FdCloser closer{fd};
  if (fd < 0) return "";
  Elf64_Ehdr eh{};
  if (pread(fd, &eh, sizeof eh, 0) != static_cast<ssize_t>(sizeof eh) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr)) {
    return "";
  }
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (pread(fd, &ph, sizeof ph, static_cast<off_t>(eh.e_phoff + i * sizeof ph)) != static_cast<ssize_t>(sizeof ph)) {
      return "";
    }
    if (ph.p_type != PT_INTERP || ph.p_filesz == 0 || ph.p_filesz > 4096) continue;
    std::string interp(ph.p_filesz, '\0');
    if (pread(fd, interp.data(), interp.size(), static_cast<off_t>(ph.p_offset)) !=
        static_cast<ssize_t>(interp.size())) {
      return "";
    }
    interp.resize(std::strlen(interp.c_str()));
    return interp;
  }
  return "";
}

std::vector<std::string> ParseLoaderList(const std::string& text) {
  // "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)", "\t/lib64/ld-linux-x86-64.so.2 (0x...)",
  // "\tlinux-vdso.so.1 (0x...)" (no file), "\tlibfoo.so => not found".
  std::vector<std::string> paths;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t arrow = line.find(" => ");
    std::string rest = arrow == std::string::npos ? line : line.substr(arrow + 4);
    const size_t start = rest.find_first_not_of(" \t");
    if (start == std::string::npos || rest[start] != '/') continue;
    rest = rest.substr(start);
    if (const size_t paren = rest.rfind(" (0x"); paren != std::string::npos) rest.resize(paren);
    paths.push_back(rest);
  }
  return paths;
}

std::vector<std::string> SharedLibraries(const std::string& executable, const std::string& env_ld_library_path) {
  const std::string interp = ElfInterpreter(executable);
  if (interp.empty() || access(interp.c_str(), X_OK) != 0) return {};
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw InfraError(Errno("cold start: pipe"));
  const std::string ld_path = "LD_LIBRARY_PATH=" + env_ld_library_path;
  const char* argv[] = {interp.c_str(), "--list", executable.c_str(), nullptr};
  const char* envp[] = {ld_path.c_str(), nullptr};
  const pid_t child = fork();
  if (child < 0) throw InfraError(Errno("cold start: fork"));
  if (child == 0) {
    dup2(out[1], STDOUT_FILENO);
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDERR_FILENO);
    execve(argv[0], const_cast<char* const*>(argv),
           const_cast<char* const*>(env_ld_library_path.empty() ? envp + 1 : envp));
    _exit(127);
  }
  close(out[1]);
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(out[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  // A library the loader does not find fails the start itself, which reports it better.
  return ParseLoaderList(text);
}

void DropAllCaches() {
  sync();
  const int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  const FdCloser closer{fd};
  if (fd < 0 || write(fd, "3", 1) != 1) {
    throw InfraError(Errno("cold start: cannot write /proc/sys/vm/drop_caches (drop_caches needs root)"));
  }
}

}  // namespace perfgate
