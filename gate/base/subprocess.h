// Commands perfgate runs besides the workloads (git, tar, ssh), without a
// shell of its own, so no argument is ever re-parsed, and their output read.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace perfgate {

struct CapturedCommand {
  int status = -1;  // exit code, or 128 + signal
  std::string out;  // stdout
  std::string err;  // stderr (empty when it was passed through)
};

struct CaptureOptions {
  std::string cwd;        // empty: this process's
  std::string input;      // the command's standard input (else /dev/null)
  bool pass_err = false;  // stderr goes to this process's stderr as it comes, not into `err`
  // Standard input is a pipe held open (and empty) until the command ends:
  // a command that watches its input for the end (ssh, whose remote side
  // then sees it) learns that perfgate went away. `input` must be empty.
  bool hold_input_open = false;
};

// Runs argv (found on PATH) and waits. InfraError when it cannot start.
CapturedCommand RunCaptured(const std::vector<std::string>& argv, const CaptureOptions& options);
CapturedCommand RunCaptured(const std::vector<std::string>& argv, const std::string& cwd = "");

// argv as execvp takes it (pointers into `argv`, null-terminated).
std::vector<char*> ArgvOf(const std::vector<std::string>& argv);
// Waits for the child `pid`: its exit code, or 128 + the signal that ended it.
int WaitFor(pid_t pid);

}  // namespace perfgate
