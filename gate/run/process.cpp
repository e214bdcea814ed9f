#include "run/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>

#include "base/error.h"

namespace perfgate {

namespace {

constexpr size_t kStderrTail = 4096;
constexpr double kKillGraceS = 2.0;
// How long the clean-up after a workload may take to reap what it left.
constexpr long long kLeftoverReapNs = 3LL * 1000000000LL;

mode_t g_caller_umask = 022;
// Workloads still running: the leftover clean-up must not take them for orphans.
std::set<pid_t> g_live_workloads;

long long MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// Takes the user's identity (async-signal-safe calls only): setgroups,
// setgid, setuid, then no new privileges and no ambient capabilities. Leaving
// uid 0 clears the permitted and effective capability sets. Returns 0, or the
// errno of the step that failed.
int SwitchTo(const Credentials& c) {
  if (setgroups(c.groups.size(), c.groups.data()) != 0) return errno;
  if (setresgid(c.gid, c.gid, c.gid) != 0) return errno;
  if (setresuid(c.uid, c.uid, c.uid) != 0) return errno;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  // Ambient capabilities would survive exec; there should be none, make sure.
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  return 0;
}

// What the child reports on the status pipe when it cannot exec.
enum ChildStep : int { kExec = 0, kDirectory = 1, kIdentity = 2 };

[[noreturn]] void ChildFail(int status_wr, ChildStep step, int err) {
  const int report[2] = {step, err};
  (void)!write(status_wr, report, sizeof report);
  _exit(127);
}

// Everything the child needs, prepared before fork: it may not allocate.
struct ChildSetup {
  const std::vector<char*>* argv;
  const std::vector<char*>* envp;
  const char* cwd;        // nullptr: stay
  const Credentials* as;  // nullptr: stay root
  int exec_fd;            // opened executable, or -1: search PATH at exec
  pid_t parent;
};

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void ChildMain(const int (&gate)[2], const int (&status)[2], const int (&out)[2], const int (&errp)[2],
                            const ChildSetup& setup) {
  // The parent's ends must go, or the gate never reads end-of-file.
  close(gate[1]);
  close(status[0]);
  close(out[0]);
  close(errp[0]);
  const int gate_rd = gate[0], status_wr = status[1], out_wr = out[1], err_wr = errp[1];
  setpgid(0, 0);
  // Undo the parent's signal dispositions for the workload.
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, STDIN_FILENO);
  dup2(out_wr, STDOUT_FILENO);
  dup2(err_wr, STDERR_FILENO);
  char go;
  while (read(gate_rd, &go, 1) < 0 && errno == EINTR) {
  }
  // The directory first, as root: a checkout under a directory the user may
  // not traverse (a 0700 home) still has a reachable working directory.
  if (setup.cwd != nullptr && chdir(setup.cwd) != 0) ChildFail(status_wr, kDirectory, errno);
  if (setup.as != nullptr) {
    if (int err = SwitchTo(*setup.as); err != 0) ChildFail(status_wr, kIdentity, err);
  }
  umask(g_caller_umask);
  // A workload must not outlive perfgate killed with SIGKILL. Set after the
  // identity switch, which clears it; the parent may already be gone.
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != setup.parent) _exit(127);
  if (setup.exec_fd >= 0) {
    syscall(SYS_execveat, setup.exec_fd, "", setup.argv->data(), setup.envp->data(), AT_EMPTY_PATH);
  } else {
    execvpe((*setup.argv)[0], setup.argv->data(), setup.envp->data());
  }
  ChildFail(status_wr, kExec, errno);
}

// argv[0] as execvp would find it (relative to `cwd`), or empty.
std::string ExecutablePath(const std::string& name, const std::string& cwd, const std::string& path_var) {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    return name[0] == '/' || cwd.empty() ? name : cwd + "/" + name;
  }
  const std::string dirs = path_var.empty() ? "/usr/local/bin:/usr/bin:/bin" : path_var;
  size_t start = 0;
  for (;;) {
    const size_t colon = dirs.find(':', start);
    std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    if (dir[0] != '/' && !cwd.empty()) dir = cwd + "/" + dir;
    if (executable(dir + "/" + name)) return dir + "/" + name;
    if (colon == std::string::npos) return "";
    start = colon + 1;
  }
}

// Opens the executable for execveat as root. A script's interpreter reads
// it through /dev/fd, so its descriptor must survive the exec.
int OpenExecutable(const std::string& path) {
  if (path.empty()) return -1;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char magic[2] = {};
  if (pread(fd, magic, 2, 0) == 2 && magic[0] == '#' && magic[1] == '!') fcntl(fd, F_SETFD, 0);
  return fd;
}

// Processes whose parent is perfgate, other than the workloads it runs: the
// orphans a workload left, reparented here (perfgate is a subreaper).
std::vector<pid_t> OrphansOfOurs() {
  std::vector<pid_t> out;
  const pid_t self = getpid();
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return out;
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
    // getline, not an istreambuf_iterator: a process that exits between the
    // open and the read fails the read with ESRCH, which libstdc++'s filebuf
    // throws; getline turns it into a failed read, and the process is skipped.
    std::string stat;
    std::getline(in, stat);
    // pid (comm) state ppid ...: comm may hold anything, so parse after the last ')'.
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    char state = 0;
    long ppid = 0;
    if (std::sscanf(stat.c_str() + paren + 1, " %c %ld", &state, &ppid) != 2) continue;
    if (ppid == self && !g_live_workloads.count(static_cast<pid_t>(pid))) out.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return out;
}

void Append(std::string& sink, const char* data, size_t n, size_t cap, uint64_t* dropped) {
  size_t room = sink.size() < cap ? cap - sink.size() : 0;
  size_t take = std::min(room, n);
  sink.append(data, take);
  if (dropped) *dropped += n - take;
}

// Drains what is readable now, showing it to the marker until it fires
// (*fired); returns false at EOF.
bool Drain(int fd, ProcessOutcome& out, bool is_stdout, ReadinessMarker* marker = nullptr, bool* fired = nullptr) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      if (marker != nullptr && !*fired) {
        *fired = marker->OnOutput(is_stdout ? OutputStream::kStdout : OutputStream::kStderr,
                                  std::string_view(buf, static_cast<size_t>(n)));
      }
      if (is_stdout) {
        Append(out.stdout_text, buf, static_cast<size_t>(n), HeldProcess::kMaxCapturedOutput, &out.stdout_dropped);
      } else {
        out.stderr_tail.append(buf, static_cast<size_t>(n));
        if (out.stderr_tail.size() > kStderrTail) out.stderr_tail.erase(0, out.stderr_tail.size() - kStderrTail);
      }
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return true;  // EAGAIN: nothing more for now
  }
}

}  // namespace

void PrepareProcessForWorkloads() {
  g_caller_umask = umask(022);
  umask(g_caller_umask | 022);
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

HeldProcess::HeldProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                         const std::string& cwd, const Credentials* as) {
  if (argv.empty()) throw InputError("workload: empty argv");
  argv0_ = argv[0];
  if (as != nullptr) user_ = as->user;
  int gate[2], status[2], out[2], err[2];
  if (pipe2(gate, O_CLOEXEC) != 0) throw InfraError("workload: pipe failed: " + std::string(std::strerror(errno)));
  if (pipe2(status, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    throw InfraError("workload: pipe failed: " + std::string(std::strerror(errno)));
  }
  // Build argv/envp before fork: the child may not allocate.
  std::vector<std::string> env_strings;
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) merged[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (as != nullptr) {
    merged["USER"] = merged["LOGNAME"] = as->user;
    merged["HOME"] = as->home;
  }
  for (const auto& [k, v] : env) merged[k] = v;
  for (const auto& [k, v] : merged) env_strings.push_back(k + "=" + v);
  std::vector<char*> argv_c, envp_c;
  for (const auto& a : argv) argv_c.push_back(const_cast<char*>(a.c_str()));
  argv_c.push_back(nullptr);
  for (auto& e : env_strings) envp_c.push_back(e.data());
  envp_c.push_back(nullptr);

  if (as != nullptr) exec_fd_ = OpenExecutable(ExecutablePath(argv[0], cwd, merged["PATH"]));
  const ChildSetup setup{&argv_c, &envp_c, cwd.empty() ? nullptr : cwd.c_str(), as, exec_fd_, getpid()};

  pid_ = fork();
  if (pid_ < 0) throw InfraError("workload: fork failed: " + std::string(std::strerror(errno)));
  if (pid_ == 0) ChildMain(gate, status, out, err, setup);
  g_live_workloads.insert(pid_);
  CloseFd(exec_fd_);
  // Also set the group from the parent so a kill before the child runs still reaches it.
  setpgid(pid_, pid_);
  close(gate[0]);
  close(status[1]);
  close(out[1]);
  close(err[1]);
  gate_fd_ = gate[1];
  status_fd_ = status[0];
  out_fd_ = out[0];
  err_fd_ = err[0];
  fcntl(out_fd_, F_SETFL, O_NONBLOCK);
  fcntl(err_fd_, F_SETFL, O_NONBLOCK);
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
}

HeldProcess::~HeldProcess() {
  if (pid_ > 0 && !reaped_) {
    KillGroup(SIGKILL);
    int st;
    while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    g_live_workloads.erase(pid_);
    KillLeftovers();
  }
  g_live_workloads.erase(pid_);
  CloseFd(gate_fd_);
  CloseFd(status_fd_);
  CloseFd(out_fd_);
  CloseFd(err_fd_);
  CloseFd(pidfd_);
}

void HeldProcess::KillGroup(int sig) {
  if (pid_ > 0) {
    kill(-pid_, sig);
    if (!reaped_) kill(pid_, sig);
  }
}

int HeldProcess::KillLeftovers() {
  kill(-pid_, SIGKILL);
  std::set<pid_t> seen;
  const long long deadline = MonotonicNs() + kLeftoverReapNs;
  for (;;) {
    const std::vector<pid_t> orphans = OrphansOfOurs();
    for (pid_t pid : orphans) {
      seen.insert(pid);
      kill(pid, SIGKILL);
      int st;
      waitpid(pid, &st, WNOHANG);
    }
    // Done when nothing is left to reap and the group is gone (kill() with
    // signal 0 still finds zombies, which a dead parent hands to perfgate).
    if (orphans.empty() && kill(-pid_, 0) != 0) break;
    if (MonotonicNs() >= deadline) break;
    usleep(2000);
  }
  return static_cast<int>(seen.size());
}

void HeldProcess::Release() {
  start_ns_ = MonotonicNs();
  CloseFd(gate_fd_);
  int report[2] = {kExec, 0};
  ssize_t n;
  while ((n = read(status_fd_, report, sizeof report)) < 0 && errno == EINTR) {
  }
  CloseFd(status_fd_);
  if (n != static_cast<ssize_t>(sizeof report)) return;
  int st;
  waitpid(pid_, &st, 0);
  reaped_ = true;
  g_live_workloads.erase(pid_);
  const std::string why = std::strerror(report[1]);
  const std::string as = user_.empty() ? "" : " as user \"" + user_ + "\"";
  switch (report[0]) {
    case kIdentity:
      throw InfraError("workload: cannot switch to user \"" + user_ + "\": " + why +
                       (geteuid() != 0 ? " (run_as needs perfgate to run as root)" : ""));
    case kDirectory:
      throw InfraError("workload: cannot enter its directory: " + why);
    default:
      throw InfraError("workload: cannot execute \"" + argv0_ + "\"" + as + ": " + why);
  }
}

ProcessOutcome HeldProcess::Wait(double timeout_s, const std::atomic<bool>* stop, ReadinessMarker* ready) {
  ProcessOutcome out;
  const long long deadline = start_ns_ + static_cast<long long>(timeout_s * 1e9);
  long long kill_at = 0;  // when SIGKILL follows the SIGTERM
  bool out_open = true, err_open = true, exited = false, fired = false;
  if (ready != nullptr) ready->Start();
  while (!exited) {
    pollfd fds[3] = {{pidfd_, POLLIN, 0}, {out_open ? out_fd_ : -1, POLLIN, 0}, {err_open ? err_fd_ : -1, POLLIN, 0}};
    long long now = MonotonicNs();
    long long next = kill_at ? kill_at : deadline;
    int wait_ms = static_cast<int>(std::max(0LL, std::min((next - now) / 1000000 + 1, 200LL)));
    if (ready != nullptr && !fired && ready->poll_interval_ms() > 0)
      wait_ms = std::min(wait_ms, ready->poll_interval_ms());
    int r = poll(fds, 3, pidfd_ >= 0 ? wait_ms : std::min(wait_ms, 10));
    if (r < 0 && errno != EINTR) break;
    if (fds[1].revents) out_open = Drain(out_fd_, out, true, ready, &fired);
    if (fds[2].revents) err_open = Drain(err_fd_, out, false, ready, &fired);
    if (ready != nullptr && !fired && ready->poll_interval_ms() > 0) fired = ready->Poll();
    if (fired && !out.ready_s) out.ready_s = static_cast<double>(MonotonicNs() - start_ns_) / 1e9;
    if (stop != nullptr && stop->load() && !out.interrupted) {
      out.interrupted = true;
      KillGroup(SIGTERM);
      kill_at = MonotonicNs() + static_cast<long long>(kKillGraceS * 1e9);
    }
    now = MonotonicNs();
    int st = 0;
    pid_t w = wait4(pid_, &st, WNOHANG, &out.usage);
    if (w == pid_) {
      exited = true;
      reaped_ = true;
      g_live_workloads.erase(pid_);
      if (WIFSIGNALED(st))
        out.term_signal = WTERMSIG(st);
      else
        out.exit_code = WEXITSTATUS(st);
      if (ready != nullptr && ready->ready_at_exit() && !out.ready_s && out.term_signal == 0 && out.exit_code == 0) {
        out.ready_s = static_cast<double>(now - start_ns_) / 1e9;
      }
    } else if (out.ready_s && !kill_at && ready->stop_when_ready()) {
      // Ready and still running (a server): stopped as at a timeout, but this is its normal end.
      out.stopped_after_ready = true;
      KillGroup(SIGTERM);
      kill_at = now + static_cast<long long>(kKillGraceS * 1e9);
    } else if (!kill_at && now >= deadline) {
      out.timed_out = true;
      KillGroup(SIGTERM);
      kill_at = now + static_cast<long long>(kKillGraceS * 1e9);
    } else if (kill_at && now >= kill_at) {
      KillGroup(SIGKILL);
      kill_at = now + 3600LL * 1000000000LL;
    }
  }
  out.wall_s = static_cast<double>(MonotonicNs() - start_ns_) / 1e9;
  // Children that outlive the workload would disturb the next repetition.
  out.leftovers_killed = KillLeftovers();
  if (out_open) Drain(out_fd_, out, true);
  if (err_open) Drain(err_fd_, out, false);
  return out;
}

void KeepBesideWorkloads(pid_t pid) { g_live_workloads.insert(pid); }

void ForgetBesideWorkloads(pid_t pid) { g_live_workloads.erase(pid); }

}  // namespace perfgate
