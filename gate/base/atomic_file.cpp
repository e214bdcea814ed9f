#include "base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/error.h"

namespace perfgate {

std::string StageFile(const std::string& file, const std::string& text) {
  namespace fs = std::filesystem;
  fs::path target(file);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  if (fd < 0) throw InfraError(file + ": cannot create temporary file: " + std::strerror(errno));
  auto fail = [&](const char* what) {
    int err = errno;
    close(fd);
    unlink(name.data());
    throw InfraError(file + ": " + what + ": " + std::strerror(err));
  };
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write failed");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (fchmod(fd, 0644) != 0) fail("chmod failed");
  if (fsync(fd) != 0) fail("fsync failed");
  if (close(fd) != 0) {
    int err = errno;
    unlink(name.data());
    throw InfraError(file + ": close failed: " + std::strerror(err));
  }
  return std::string(name.data());
}

void CommitStagedFile(const std::string& staged, const std::string& file) {
  namespace fs = std::filesystem;
  if (rename(staged.c_str(), file.c_str()) != 0) {
    int err = errno;
    unlink(staged.c_str());
    throw InfraError(file + ": rename failed: " + std::strerror(err));
  }
  // Make the rename itself durable.
  fs::path target(file);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
}

void WriteFileAtomic(const std::string& file, const std::string& text) {
  CommitStagedFile(StageFile(file, text), file);
}

}  // namespace perfgate
