#include "bisect/subprocess.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace perfgate {

namespace {

// The build's environment, built before the fork (the child may only make
// async-signal-safe calls): this process's, without the CI system's tokens
// (the commit's build is the project's code, as a pull request's is), and
// with HOME, USER and LOGNAME of `as`.
std::vector<std::string> BuildEnvironment(const Credentials* as, const std::string& home) {
  static constexpr const char* kDropped[] = {
      "GITHUB_TOKEN=", "ACTIONS_RUNTIME_TOKEN=", "ACTIONS_ID_TOKEN_REQUEST_TOKEN="};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    bool drop = false;
    for (const char* prefix : kDropped) drop = drop || entry.rfind(prefix, 0) == 0;
    if (as != nullptr) {
      for (const char* prefix : {"HOME=", "USER=", "LOGNAME="}) drop = drop || entry.rfind(prefix, 0) == 0;
    }
    if (!drop) env.push_back(entry);
  }
  if (as != nullptr) {
    env.push_back("HOME=" + home);
    env.push_back("USER=" + as->user);
    env.push_back("LOGNAME=" + as->user);
  }
  return env;
}

// In the child, after fork: only async-signal-safe calls. 127 when exec
// fails and 126 when the identity cannot be taken, as a shell would say.
[[noreturn]] void ExecChild(char* const* argv, const char* cwd, const Credentials* as, char* const* envp) {
  if (cwd != nullptr && cwd[0] != '\0' && chdir(cwd) != 0) _exit(127);
  if (as != nullptr) {
    if (setgroups(as->groups.size(), as->groups.data()) != 0 || setresgid(as->gid, as->gid, as->gid) != 0 ||
        setresuid(as->uid, as->uid, as->uid) != 0)
      _exit(126);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  }
  if (envp != nullptr) execvpe(argv[0], argv, envp);
  execvp(argv[0], argv);
  _exit(127);
}

}  // namespace

int RunLogged(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log_file,
              const Credentials* as) {
  const int log = open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) throw InfraError(log_file + ": " + std::strerror(errno));
  std::vector<char*> args = ArgvOf(argv);
  const std::vector<std::string> env = BuildEnvironment(as, cwd);
  std::vector<char*> envp = ArgvOf(env);
  const pid_t pid = fork();
  if (pid < 0) {
    close(log);
    throw InfraError(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    ExecChild(args.data(), cwd.c_str(), as, envp.data());
  }
  close(log);
  return WaitFor(pid);
}

}  // namespace perfgate
