#include "base/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace perfgate {

namespace {

int StatusOf(int wstatus) { return WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : WEXITSTATUS(wstatus); }

// The command's standard input: `input` in a memory file (no pipe to fill,
// so no SIGPIPE if the command stops reading), or /dev/null.
int InputFd(const std::string& input) {
  if (input.empty()) return open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int fd = memfd_create("perfgate-input", MFD_CLOEXEC);
  if (fd < 0) throw InfraError(std::string("memfd_create: ") + std::strerror(errno));
  for (size_t done = 0; done < input.size();) {
    const ssize_t n = write(fd, input.data() + done, input.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      throw InfraError(std::string("writing a command's input: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

}  // namespace

std::vector<char*> ArgvOf(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

int WaitFor(pid_t pid) {
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) throw InfraError(std::string("waitpid: ") + std::strerror(errno));
  }
  return StatusOf(wstatus);
}

CapturedCommand RunCaptured(const std::vector<std::string>& argv, const std::string& cwd) {
  CaptureOptions options;
  options.cwd = cwd;
  return RunCaptured(argv, options);
}

CapturedCommand RunCaptured(const std::vector<std::string>& argv, const CaptureOptions& options) {
  int held[2] = {-1, -1};  // hold_input_open: the child reads held[0], this process keeps held[1]
  if (options.hold_input_open && pipe2(held, O_CLOEXEC) != 0)
    throw InfraError(std::string("pipe: ") + std::strerror(errno));
  const int in = options.hold_input_open ? held[0] : InputFd(options.input);
  if (in < 0) throw InfraError(std::string("/dev/null: ") + std::strerror(errno));
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || (!options.pass_err && pipe2(err_pipe, O_CLOEXEC) != 0)) {
    const std::string why = std::strerror(errno);
    for (int fd : {in, held[1], out_pipe[0], out_pipe[1]}) {
      if (fd >= 0) close(fd);
    }
    throw InfraError("pipe: " + why);
  }
  std::vector<char*> args = ArgvOf(argv);
  const char* cwd = options.cwd.c_str();
  const pid_t pid = fork();
  if (pid < 0) {
    const std::string why = std::strerror(errno);
    for (int fd : {in, held[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
      if (fd >= 0) close(fd);
    }
    throw InfraError("fork: " + why);
  }
  if (pid == 0) {
    // Only async-signal-safe calls here; 127 when exec fails, as a shell says.
    dup2(in, STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    if (!options.pass_err) dup2(err_pipe[1], STDERR_FILENO);
    if (cwd[0] != '\0' && chdir(cwd) != 0) _exit(127);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(in);
  close(out_pipe[1]);
  if (!options.pass_err) close(err_pipe[1]);
  CapturedCommand result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = options.pass_err ? 1 : 2;
  char buffer[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  result.status = WaitFor(pid);
  if (held[1] >= 0) close(held[1]);
  if (result.status == 127 && result.out.empty() && result.err.empty())
    throw InfraError("could not run " + argv[0] + " (is it installed?)");
  return result;
}

}  // namespace perfgate
