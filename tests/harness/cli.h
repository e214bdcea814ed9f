// Runs the perfgate binary as a user would and captures what it printed.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/files.h"
#include "harness/paths.h"

namespace perfgate::testing {

struct CliRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// The shipped example suite of pg-smoke.
inline const std::string kSmokeSuite = std::string(PERFGATE_SOURCE_DIR) + "/workloads/examples/smoke.json";
// Its loop at half its 600 iterations (about 0.3 s a repetition): for the
// tests that run the suite many times to measure perfgate's verdicts, which
// do not depend on how long one repetition is.
inline const std::string kSmokeHalfLoop = "SMOKE_ITERATIONS=300";

inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
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

}  // namespace perfgate::testing
