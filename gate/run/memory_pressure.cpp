#include "run/memory_pressure.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "run/process.h"

namespace perfgate {

namespace {

bool ReadText(const std::string& path, std::string& out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

bool WriteText(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int saved = errno;
  close(fd);
  errno = saved;
  return ok;
}

bool HasWord(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  for (std::string w; in >> w;) {
    if (w == word) return true;
  }
  return false;
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

long long MonotonicMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void SleepMs(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000 * 1000};
  nanosleep(&ts, nullptr);
}

const char kGroupPrefix[] = "perfgate-memory-";
const char kWorkloadLeaf[] = "workload";
const char kAntagonistLeaf[] = "antagonist";

// Removes a group MemoryCgroup made: its leaves, then the group. `patient`:
// waits up to a second for each while the kernel has not seen its last
// process go yet (EBUSY).
void RemoveGroup(const std::string& group, bool patient) {
  for (const std::string& dir : {group + "/" + kWorkloadLeaf, group + "/" + kAntagonistLeaf, group}) {
    for (int i = 0; rmdir(dir.c_str()) != 0 && errno == EBUSY && patient && i < 100; ++i) SleepMs(10);
  }
}

// The value of `key` in a memory.stat text; nullopt without that line.
std::optional<double> StatValue(const std::string& stat, const std::string& key) {
  std::istringstream in(stat);
  for (std::string name, value; in >> name >> value;) {
    if (name == key) return std::atof(value.c_str());
  }
  return std::nullopt;
}

// Groups of runs that were SIGKILLed could not remove themselves; an empty
// group of a perfgate that is gone goes now.
void RemoveStaleGroups(const std::string& root) {
  DIR* dir = opendir(root.c_str());
  if (!dir) return;
  const std::string prefix = kGroupPrefix;
  while (dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::atol(name.c_str() + prefix.size());
    if (pid <= 0 || kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    RemoveGroup(root + "/" + name, false);
  }
  closedir(dir);
}

// A directory of perfgate's own (created by this user, not a symlink), where
// nobody else can swap the antagonist's file.
std::string AntagonistDir() {
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string dir =
      std::string(tmpdir && *tmpdir ? tmpdir : "/var/tmp") + "/perfgate-antagonist-" + std::to_string(geteuid());
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw InfraError(Errno("memory antagonist: cannot create " + dir));
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    throw InfraError("memory antagonist: " + dir + " is not a directory of perfgate's user that only it may write");
  }
  return dir;
}

// Creates `path` with `bytes` of non-zero data unless it is already there with
// that size; written to a temporary name and renamed, so concurrent first runs
// never see a partial file.
void EnsureFile(const std::string& path, size_t bytes) {
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && static_cast<size_t>(st.st_size) == bytes) return;
  std::string tmp = path + ".XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) throw InfraError(Errno("memory antagonist: cannot create " + tmp));
  std::vector<uint32_t> chunk(256 * 1024 / sizeof(uint32_t));
  uint32_t x = 7 * 2654435761u + 1;
  for (size_t done = 0; done < bytes;) {
    for (auto& w : chunk) w = x = x * 1664525u + 1013904223u;  // not zero pages: real data to read
    const size_t n = std::min(bytes - done, chunk.size() * sizeof(uint32_t));
    if (write(fd, chunk.data(), n) != static_cast<ssize_t>(n)) {
      close(fd);
      unlink(tmp.c_str());
      throw InfraError(Errno("memory antagonist: cannot write " + tmp));
    }
    done += n;
  }
  // Synced, so the pages are clean: reclaim can take them, and DONTNEED drop them.
  const bool synced = fsync(fd) == 0;
  close(fd);
  if (!synced || rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    throw InfraError(Errno("memory antagonist: cannot write " + path));
  }
}

// The antagonist's loop, in a child of a perfgate that may have threads: only
// system calls, no allocation.
[[noreturn]] void Antagonize(int fd, size_t file_bytes, char* buffer, size_t chunk) {
  const size_t anon = 4 << 20;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t round = 0;; ++round) {
    const off_t off = static_cast<off_t>((round * chunk) % file_bytes);
    if (pread(fd, buffer, chunk, off) < 0) _exit(1);
    if (round % 8 == 0) {
      void* p = mmap(nullptr, anon, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p != MAP_FAILED) {
        for (size_t o = 0; o < anon; o += page) static_cast<volatile char*>(p)[o] = 1;
        munmap(p, anon);
      }
    }
  }
}

}  // namespace

MemoryCgroup::MemoryCgroup(long limit_mb) : limit_mb_(limit_mb) {
  std::string controllers;
  for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    if (ReadText(std::string(root) + "/cgroup.controllers", controllers) && HasWord(controllers, "memory")) {
      root_ = root;
      v2_ = true;
      break;
    }
  }
  if (!v2_) {
    if (access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) != 0) {
      throw InfraError(
          "memory limit: no memory cgroup controller (neither cgroup v2 with \"memory\" nor v1 "
          "/sys/fs/cgroup/memory)");
    }
    root_ = "/sys/fs/cgroup/memory";
  }
  if (v2_) {
    std::string enabled;
    if (ReadText(root_ + "/cgroup.subtree_control", enabled) && !HasWord(enabled, "memory") &&
        !WriteText(root_ + "/cgroup.subtree_control", "+memory")) {
      throw InfraError(
          Errno("memory limit: cannot enable the memory controller in " + root_ + "/cgroup.subtree_control"));
    }
  }
  RemoveStaleGroups(root_);
  static std::atomic<int> sequence{0};
  path_ = root_ + "/" + kGroupPrefix + std::to_string(getpid()) + "-" + std::to_string(sequence++);
  if (mkdir(path_.c_str(), 0755) != 0) {
    throw InfraError(Errno("memory limit: cannot create memory cgroup " + path_) +
                     (geteuid() != 0 ? " (needs perfgate to run as root)" : ""));
  }
  const std::string limit = std::to_string(static_cast<long long>(limit_mb) * 1024 * 1024);
  std::string why;
  if (!WriteText(path_ + (v2_ ? "/memory.max" : "/memory.limit_in_bytes"), limit)) {
    why = Errno("memory limit: cannot set the limit of " + path_);
  } else if (v2_ && !WriteText(path_ + "/cgroup.subtree_control", "+memory")) {
    why = Errno("memory limit: cannot enable the memory controller in " + path_ + "/cgroup.subtree_control");
  } else {
    for (const char* leaf : {kWorkloadLeaf, kAntagonistLeaf}) {
      if (mkdir((path_ + "/" + leaf).c_str(), 0755) != 0) {
        why = Errno("memory limit: cannot create memory cgroup " + path_ + "/" + leaf);
        break;
      }
    }
  }
  if (!why.empty()) {
    RemoveGroup(path_, false);
    throw InfraError(why);
  }
}

MemoryCgroup::~MemoryCgroup() {
  // The kernel may take a moment to see the last process gone.
  RemoveGroup(path_, true);
}

void MemoryCgroup::AddTo(const char* leaf, pid_t pid) const {
  const std::string dir = path_ + "/" + leaf;
  if (!WriteText(dir + "/cgroup.procs", std::to_string(pid))) {
    throw InfraError(Errno("memory limit: cannot move process " + std::to_string(pid) + " into " + dir));
  }
}

void MemoryCgroup::AddWorkload(pid_t pid) const { AddTo(kWorkloadLeaf, pid); }

void MemoryCgroup::AddAntagonist(pid_t pid) const { AddTo(kAntagonistLeaf, pid); }

std::optional<double> MemoryCgroup::WorkloadRefaultBytes() const {
  std::string stat;
  if (!ReadText(path_ + "/" + kWorkloadLeaf + "/memory.stat", stat)) return std::nullopt;
  // Kernels before 5.9 have one count for file and anonymous pages.
  std::optional<double> pages = StatValue(stat, "workingset_refault_file");
  if (!pages) pages = StatValue(stat, "workingset_refault");
  if (!pages) return std::nullopt;
  return *pages * static_cast<double>(sysconf(_SC_PAGESIZE));
}

long long MemoryCgroup::UsageBytes() const {
  std::string text;
  if (!ReadText(path_ + (v2_ ? "/memory.current" : "/memory.usage_in_bytes"), text)) return -1;
  return std::atoll(text.c_str());
}

MemoryAntagonist::MemoryAntagonist(const MemoryCgroup& cgroup) {
  const size_t file_bytes = static_cast<size_t>(2 * cgroup.limit_mb()) << 20;
  const std::string file = AntagonistDir() + "/stream-" + std::to_string(2 * cgroup.limit_mb()) + "MiB.dat";
  EnsureFile(file, file_bytes);
  const int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) throw InfraError(Errno("memory antagonist: cannot open " + file));
  // Pages cached by an earlier run stay charged to that run's cgroup; drop
  // them so the antagonist's reads charge this one.
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  const size_t chunk = 1 << 20;
  void* buffer = mmap(nullptr, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  int gate[2];
  if (buffer == MAP_FAILED || pipe2(gate, O_CLOEXEC) != 0) {
    const std::string why = Errno("memory antagonist: cannot set up");
    if (buffer != MAP_FAILED) munmap(buffer, chunk);
    close(fd);
    throw InfraError(why);
  }
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGTERM, &dfl, nullptr);
    sigaction(SIGINT, &dfl, nullptr);
    close(gate[1]);
    char c;
    // Held until it is in the cgroup, so its first page is charged there.
    while (read(gate[0], &c, 1) < 0 && errno == EINTR) {
    }
    Antagonize(fd, file_bytes, static_cast<char*>(buffer), chunk);
  }
  const int fork_errno = errno;
  close(gate[0]);
  close(fd);
  munmap(buffer, chunk);
  if (pid_ < 0) {
    close(gate[1]);
    errno = fork_errno;
    throw InfraError(Errno("memory antagonist: fork"));
  }
  KeepBesideWorkloads(pid_);
  try {
    cgroup.AddAntagonist(pid_);
  } catch (...) {
    close(gate[1]);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    ForgetBesideWorkloads(pid_);
    throw;
  }
  close(gate[1]);
  const long long target = static_cast<long long>(cgroup.limit_mb()) * 1024 * 1024 * 9 / 10;
  const long long deadline = MonotonicMs() + 30000;
  while (cgroup.UsageBytes() < target) {
    if (MonotonicMs() > deadline) {
      log::Warning("the memory antagonist did not fill %s within 30 s\n", cgroup.path().c_str());
      break;
    }
    SleepMs(5);
  }
}

MemoryAntagonist::~MemoryAntagonist() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  ForgetBesideWorkloads(pid_);
}

}  // namespace perfgate
