// The commands a bisection runs besides the workloads: git, whose output it
// reads, and the project's build command, whose output goes to a log file.
// Both without a shell of perfgate's own, so no argument is ever re-parsed.
#pragma once

#include <string>
#include <vector>

#include "config/credentials.h"

namespace perfgate {

struct CapturedCommand {
  int status = -1;  // exit code, or 128 + signal
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs argv (found on PATH) in `cwd` and waits. InfraError when it cannot start.
CapturedCommand RunCaptured(const std::vector<std::string>& argv, const std::string& cwd = "");

// Runs argv in `cwd` with stdout and stderr appended to `log_file` (opened
// by perfgate, so the log may live where `as` cannot write). With `as`, the
// command takes that user's identity and HOME. Returns the exit status
// (128 + signal); InfraError when it cannot start.
int RunLogged(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log_file,
              const Credentials* as);

}  // namespace perfgate
