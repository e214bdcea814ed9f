// Two perfgate processes on one out dir or one baseline dir must not
// interleave their files. Each takes a lock on the directory itself (flock on
// the directory's descriptor), so nothing is left in it, nothing can be
// planted in its place, and the kernel drops the lock when perfgate dies,
// however it dies.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>

namespace perfgate {

class DirectoryLock {
 public:
  enum class Mode {
    kReportsOut,      // exclusive for the whole command; a second one fails at once (exit 3)
    kReadBaselines,   // shared; waits for a writer to finish
    kWriteBaselines,  // exclusive; waits for readers and writers to finish
  };
  // Creates `dir` when missing (kReadBaselines: locks nothing then), then locks it. `option` names it in messages
  // ("--out", "--baseline-dir"). Throws InfraError naming the directory and,
  // when /proc/locks tells, the pid that holds it.
  DirectoryLock(const std::string& dir, Mode mode, const std::string& option);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
  std::pair<dev_t, ino_t> key_{};
};

}  // namespace perfgate
