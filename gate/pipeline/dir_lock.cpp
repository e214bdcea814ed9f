#include "pipeline/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "base/error.h"
#include "base/log.h"

namespace perfgate {

namespace {

// The pid holding a flock on the file with this device and inode, from
// /proc/locks ("1: FLOCK  ADVISORY  WRITE 1234 08:01:131 0 EOF"); 0 when unknown.
long LockHolder(const struct stat& st) {
  char id[64];
  std::snprintf(id, sizeof id, "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  std::ifstream in("/proc/locks");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string n, kind, advisory, access, pid, where;
    fields >> n >> kind;
    if (kind == "->") continue;  // a waiter, listed under the holder
    fields >> advisory >> access >> pid >> where;
    if (kind == "FLOCK" && where == id) return std::atol(pid.c_str());
  }
  return 0;
}

std::string Holder(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return "another perfgate";
  const long pid = LockHolder(st);
  return pid > 0 ? "another perfgate (pid " + std::to_string(pid) + ")" : "another perfgate";
}

// Directories this process holds a lock on: an out dir that is also the
// baseline dir must not wait for itself (flock locks of two descriptors of
// one process conflict).
std::set<std::pair<dev_t, ino_t>> g_held;

}  // namespace

DirectoryLock::DirectoryLock(const std::string& dir, Mode mode, const std::string& option) {
  std::error_code ec;
  // Nothing to read in a directory that does not exist, and reading must not create one.
  if (mode == Mode::kReadBaselines && !std::filesystem::is_directory(dir, ec)) return;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InfraError(option + " " + dir + ": cannot create directory: " + ec.message());
  fd_ = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) throw InfraError(option + " " + dir + ": cannot open directory: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd_, &st) == 0 && g_held.count({st.st_dev, st.st_ino})) {
    close(fd_);
    fd_ = -1;
    return;
  }
  key_ = {st.st_dev, st.st_ino};
  const int op = mode == Mode::kReadBaselines ? LOCK_SH : LOCK_EX;
  if (flock(fd_, op | LOCK_NB) == 0) {
    g_held.insert(key_);
    return;
  }
  if (errno != EWOULDBLOCK) {
    const int err = errno;
    close(fd_);
    throw InfraError(option + " " + dir + ": cannot lock: " + std::strerror(err));
  }
  if (mode == Mode::kReportsOut) {
    const std::string who = Holder(fd_);
    close(fd_);
    throw InfraError(option + " " + dir + ": " + who +
                     " is writing its results there; wait for it or give this run another " + option);
  }
  log::Notice("%s %s: waiting for %s to finish %s the baselines\n", option.c_str(), dir.c_str(), Holder(fd_).c_str(),
              mode == Mode::kReadBaselines ? "writing" : "using");
  if (flock(fd_, op) != 0) {
    // EINTR: SIGINT or SIGTERM while waiting, which stops perfgate.
    const int err = errno;
    close(fd_);
    throw InfraError(option + " " + dir + ": " +
                     (err == EINTR ? std::string("interrupted while waiting for the lock")
                                   : "cannot lock: " + std::string(std::strerror(err))));
  }
  g_held.insert(key_);
}

DirectoryLock::~DirectoryLock() {
  if (fd_ < 0) return;
  g_held.erase(key_);
  close(fd_);
}

}  // namespace perfgate
