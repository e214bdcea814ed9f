// Errors carry the exit code DESIGN.md assigns and a message that already
// names the file, JSON path, probe or tracepoint; the CLI prints it as one line.
#pragma once

#include <stdexcept>
#include <string>

namespace perfgate {

enum class ExitCode : int {
  kPass = 0,
  kCheckFailed = 1,
  kBadInput = 2,  // usage, config, baseline
  kInfra = 3,     // probe attach, workload crash/timeout, privilege
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// Bad usage, suite or baseline: exit 2.
inline Error InputError(const std::string& message) { return Error(ExitCode::kBadInput, message); }
// Kernel, privilege or workload failure: exit 3.
inline Error InfraError(const std::string& message) { return Error(ExitCode::kInfra, message); }

}  // namespace perfgate
