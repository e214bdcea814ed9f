// Runs the perfgate binary as a user would and captures what it printed.
#pragma once

#include <bpf/bpf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace perfgate::testing {

struct CliRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// `env` entries are "NAME=value", prepended to the command line.
inline CliRun RunCli(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  std::string cmd;
  for (const auto& e : env) cmd += e + " ";
  cmd += ShellQuote(PERFGATE_BIN);
  for (const auto& a : args) cmd += " " + ShellQuote(a);
  auto log = std::filesystem::temp_directory_path() / ("perfgate-cli-" + std::to_string(getpid()) + ".log");
  cmd += " >" + ShellQuote(log.string()) + " 2>&1";
  int status = std::system(cmd.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.output = ReadFile(log);
  std::filesystem::remove(log);
  return run;
}

// Ids of the BPF programs loaded right now (what `bpftool prog` lists).
inline std::set<unsigned> LoadedBpfPrograms() {
  std::set<unsigned> ids;
  unsigned id = 0;
  while (bpf_prog_get_next_id(id, &id) == 0) ids.insert(id);
  return ids;
}

// The kernel releases a closed program's links and id from a workqueue after
// an RCU grace period, so a program can stay listed briefly after its last fd
// closed. Waits up to `timeout` until no program outside `before` is loaded,
// and returns those still loaded. Programs of `before` that went away in the
// meantime (an earlier test's, released late) do not count.
inline std::set<unsigned> WaitForBpfPrograms(const std::set<unsigned>& before,
                                             std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::set<unsigned> outlived;
    for (unsigned id : LoadedBpfPrograms()) {
      if (!before.count(id)) outlived.insert(id);
    }
    if (outlived.empty() || std::chrono::steady_clock::now() >= deadline) return outlived;
    usleep(20 * 1000);
  }
}

// A fresh scratch directory under the system temp dir, removed by the destructor.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "perfgate-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace perfgate::testing
