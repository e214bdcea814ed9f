// Errors carry their exit code (docs/ARCHITECTURE.md) and a message that already
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

// The first line of `text`, up to its first \r or \n: a tool's message.
inline std::string FirstLine(const std::string& text) { return text.substr(0, text.find_first_of("\r\n")); }

// `message` as one line of a terminal or CI log: control characters (a key
// or tool output holding a newline, an escape sequence) written as \n, \t,
// \r or \xNN, so an error is always exactly one line.
inline std::string OneLine(const std::string& message) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (u < 0x20 || u == 0x7f)
      out += std::string("\\x") + kHex[u >> 4] + kHex[u & 0xf];
    else
      out += c;
  }
  return out;
}

}  // namespace perfgate
