// A device reached with OpenSSH's client, one connection per command. ssh
// runs in batch mode: it never prompts, so keys and passwords come only
// from ssh's own configuration (an agent, ~/.ssh/config, the file given
// with --ssh-config) and never pass through perfgate, its results or its
// logs. Keepalives notice a connection that went away within about 15 s.
#pragma once

#include <string>
#include <vector>

#include "base/subprocess.h"
#include "target/target.h"

namespace perfgate {

// `word` quoted for a POSIX shell: 'it'\''s'.
std::string ShellQuote(const std::string& word);

class SshDevice {
 public:
  // `config_file`: ssh -F FILE; empty: ssh's own (~/.ssh/config).
  SshDevice(Target target, std::string config_file);

  // Runs argv on the device, each word quoted for its shell. A lost or
  // refused connection (ssh's own exit status 255) is InfraError naming the
  // target and what ssh said.
  CapturedCommand Run(const std::vector<std::string>& argv, const CaptureOptions& options = {}) const;
  // Runs a POSIX shell script on the device, with `args` as $1, $2, ...
  CapturedCommand RunScript(const std::string& script, const std::vector<std::string>& args,
                            const CaptureOptions& options = {}) const;
  // The contents of local directory `local_dir` into `remote_dir` (made).
  void SendDirectory(const std::string& local_dir, const std::string& remote_dir) const;
  // One local file to `remote_file`, keeping its mode.
  void SendFile(const std::string& local_file, const std::string& remote_file) const;
  // The contents of `remote_dir` into the existing local directory `local_dir`.
  void FetchDirectory(const std::string& remote_dir, const std::string& local_dir) const;

  const Target& target() const { return target_; }

 private:
  // ssh's argv up to the remote command.
  std::vector<std::string> SshArgv() const;

  Target target_;
  std::string config_file_;
};

}  // namespace perfgate
