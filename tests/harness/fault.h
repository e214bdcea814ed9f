// What the fault and security tests share: BPF objects that outlive a run,
// perfgate started in the background, and shell scripts run in a private
// mount namespace (mounts made there vanish with it, even when a test fails).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "harness/bpf_objects.h"
#include "harness/cli.h"
#include "harness/files.h"
#include "harness/paths.h"

namespace perfgate::testing {

// Every path under the BPF file system (pinned objects).
inline std::set<std::string> PinnedBpfPaths() {
  std::set<std::string> paths;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator("/sys/fs/bpf", ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    paths.insert(it->path().string());
  }
  return paths;
}

// perfgate with `args`, in the background, stdout and stderr to `log`.
inline pid_t StartPerfgate(const std::vector<std::string>& args, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv = {const_cast<char*>(PERFGATE_BIN)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(PERFGATE_BIN, argv.data());
    _exit(127);
  }
  return pid;
}

// Its exit code (128 + signal when killed), and its maximum RSS in KiB.
struct Exited {
  int code = -1;
  long max_rss_kib = 0;
};
inline Exited WaitForPerfgate(pid_t pid) {
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), usage.ru_maxrss};
}

inline bool WaitForFile(const std::string& path, std::chrono::seconds timeout = std::chrono::seconds(30)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!std::filesystem::exists(path)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    usleep(20 * 1000);
  }
  return true;
}

// True when no process has this pid any more (gone and reaped), within `timeout`.
inline bool ProcessGone(pid_t pid, std::chrono::milliseconds timeout = std::chrono::milliseconds(3000)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    usleep(20 * 1000);
  }
}

inline pid_t ReadPid(const std::string& file) {
  std::string text = ReadFile(file);
  return text.empty() ? 0 : static_cast<pid_t>(std::stol(text));
}

// Runs `script` with /bin/sh in a new mount namespace whose mounts are
// private, so that nothing it mounts or unmounts is seen outside or outlives
// it. Returns the script's exit status.
inline int InPrivateMountNamespace(const std::string& script) {
  const std::string cmd = "unshare --mount --propagation private /bin/sh -c " + ShellQuote(script);
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace perfgate::testing
