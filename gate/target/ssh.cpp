#include "target/ssh.h"

#include <filesystem>
#include <utility>

#include "base/error.h"

namespace fs = std::filesystem;

namespace perfgate {

namespace {

// ssh's exit status when the connection failed or was lost (a command's
// own status otherwise).
constexpr int kSshFailed = 255;

// The last line ssh wrote to stderr: why it could not connect or went away.
std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  const size_t start = text.find_last_of('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

std::string ShellQuote(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

SshDevice::SshDevice(Target target, std::string config_file)
    : target_(std::move(target)), config_file_(std::move(config_file)) {}

std::vector<std::string> SshDevice::SshArgv() const {
  std::vector<std::string> argv = {"ssh"};
  if (!config_file_.empty()) argv.insert(argv.end(), {"-F", config_file_});
  argv.insert(argv.end(), {"-o", "BatchMode=yes", "-o", "ConnectTimeout=15", "-o", "ServerAliveInterval=5", "-o",
                           "ServerAliveCountMax=3", "-o", "LogLevel=ERROR"});
  if (target_.port > 0) argv.insert(argv.end(), {"-p", std::to_string(target_.port)});
  if (!target_.user.empty()) argv.insert(argv.end(), {"-l", target_.user});
  argv.insert(argv.end(), {"--", target_.host});
  return argv;
}

CapturedCommand SshDevice::Run(const std::vector<std::string>& remote, const CaptureOptions& options) const {
  std::string command;
  for (const std::string& word : remote) command += (command.empty() ? "" : " ") + ShellQuote(word);
  std::vector<std::string> argv = SshArgv();
  argv.push_back(command);
  CapturedCommand result = RunCaptured(argv, options);
  if (result.status == kSshFailed) {
    const std::string said = LastLine(result.err);
    throw InfraError(target_.url + ": the connection failed or was lost" + (said.empty() ? "" : ": " + said) +
                     (options.pass_err ? " (see ssh's message above)" : ""));
  }
  return result;
}

CapturedCommand SshDevice::RunScript(const std::string& script, const std::vector<std::string>& args,
                                     const CaptureOptions& options) const {
  std::vector<std::string> remote = {"sh", "-c", script, "sh"};
  remote.insert(remote.end(), args.begin(), args.end());
  return Run(remote, options);
}

void SshDevice::SendDirectory(const std::string& local_dir, const std::string& remote_dir) const {
  const CapturedCommand tar = RunCaptured({"tar", "-C", local_dir, "-cf", "-", "."});
  if (tar.status != 0) throw InfraError("tar of " + local_dir + " failed: " + LastLine(tar.err));
  CaptureOptions options;
  options.input = tar.out;
  const CapturedCommand untar = RunScript("mkdir -p \"$1\" && tar -C \"$1\" -xf -", {remote_dir}, options);
  if (untar.status != 0)
    throw InfraError(target_.url + ": could not unpack " + local_dir + " into " + remote_dir + ": " + LastLine(untar.err));
}

void SshDevice::SendFile(const std::string& local_file, const std::string& remote_file) const {
  const fs::path local(local_file);
  const CapturedCommand tar =
      RunCaptured({"tar", "-C", local.parent_path().string(), "-cf", "-", "--", local.filename().string()});
  if (tar.status != 0) throw InfraError("tar of " + local_file + " failed: " + LastLine(tar.err));
  CaptureOptions options;
  options.input = tar.out;
  const std::string script =
      "d=$(dirname \"$2\") && mkdir -p \"$d\" && tar -C \"$d\" -xf - && { [ \"$d/$1\" = \"$2\" ] || mv -f -- \"$d/$1\" \"$2\"; }";
  const CapturedCommand untar = RunScript(script, {local.filename().string(), remote_file}, options);
  if (untar.status != 0)
    throw InfraError(target_.url + ": could not write " + remote_file + ": " + LastLine(untar.err));
}

void SshDevice::FetchDirectory(const std::string& remote_dir, const std::string& local_dir) const {
  const CapturedCommand tar = RunScript("tar -C \"$1\" -cf - .", {remote_dir});
  if (tar.status != 0)
    throw InfraError(target_.url + ": could not read " + remote_dir + ": " + LastLine(tar.err));
  CaptureOptions options;
  options.input = tar.out;
  const CapturedCommand untar = RunCaptured({"tar", "-C", local_dir, "-xf", "-"}, options);
  if (untar.status != 0) throw InfraError("unpacking what came back from " + target_.url + ": " + LastLine(untar.err));
}

}  // namespace perfgate
