// The commands a bisection runs besides the workloads: git, whose output it
// reads (base/subprocess.h), and the project's build command, whose output
// goes to a log file, without a shell of perfgate's own.
#pragma once

#include <string>
#include <vector>

#include "base/subprocess.h"
#include "config/credentials.h"

namespace perfgate {

// Runs argv in `cwd` with stdout and stderr appended to `log_file` (opened
// by perfgate, so the log may live where `as` cannot write). With `as`, the
// command takes that user's identity and HOME. Returns the exit status
// (128 + signal); InfraError when it cannot start.
int RunLogged(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log_file,
              const Credentials* as);

}  // namespace perfgate
