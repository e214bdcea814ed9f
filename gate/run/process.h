// A workload process that is forked but held before exec until the parent has
// registered it with the probes, so no event of the workload is missed. It runs
// in its own process group, which the timeout and clean-up kill as a whole.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "adapters/readiness.h"
#include "config/credentials.h"

namespace perfgate {

struct ProcessOutcome {
  int exit_code = -1;    // valid when !signaled
  int term_signal = 0;   // signal that ended the process, 0 if it exited
  bool timed_out = false;
  bool interrupted = false;  // perfgate itself was asked to stop
  double wall_s = 0;
  ::rusage usage{};
  std::string stdout_text;      // first kMaxCapturedOutput bytes
  uint64_t stdout_dropped = 0;  // bytes beyond that
  std::string stderr_tail;      // last few KiB, for error messages
  int leftovers_killed = 0;     // processes it left behind (daemons, orphans), killed and reaped
  // With a readiness marker: seconds from the release to exec until it fired,
  // and whether the app still ran then and was stopped (SIGTERM to its group).
  std::optional<double> ready_s;
  bool stopped_after_ready = false;
  // Exit status as a shell reports it: code, or 128 + signal.
  int status() const { return term_signal ? 128 + term_signal : exit_code; }
  // An app stopped after it was ready may end by the signal or with any status.
  bool succeeded() const {
    return !timed_out && !interrupted && (stopped_after_ready || (term_signal == 0 && exit_code == 0));
  }
};

// Called once at start-up, before any workload: perfgate's own files are
// never group- or world-writable whatever the caller's umask (workloads get
// the caller's umask back), and perfgate becomes the reaper of the orphans a
// workload leaves, so that none escapes its clean-up by double-forking.
void PrepareProcessForWorkloads();

// A child perfgate runs beside a workload (a memory antagonist) until it
// forgets it: the workload's leftover clean-up does not take it for an orphan.
void KeepBesideWorkloads(pid_t pid);
void ForgetBesideWorkloads(pid_t pid);

class HeldProcess {
 public:
  static constexpr size_t kMaxCapturedOutput = 16u << 20;

  // Forks; the child sets up cwd/env/process group and blocks until Release().
  // With `as`, it enters cwd and opens the executable as root, then takes
  // that user's identity and execs the opened file, so a workload in a
  // directory the user cannot traverse still runs (USER, LOGNAME and HOME
  // follow unless `env` sets them). The workload dies with perfgate.
  // Throws InfraError when the fork or pipes fail.
  HeldProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
              const std::string& cwd, const Credentials* as = nullptr);
  ~HeldProcess();
  HeldProcess(const HeldProcess&) = delete;
  HeldProcess& operator=(const HeldProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Lets the child exec. Throws InfraError (naming argv[0] and errno) when exec fails.
  void Release();
  // Waits for the exit, reading output, killing the process group at the
  // timeout (SIGTERM, then SIGKILL after a grace period) or when *stop turns true.
  // With `ready`, the marker watches the output (and is polled); once it
  // fires, an app still running is stopped the same way.
  ProcessOutcome Wait(double timeout_s, const std::atomic<bool>* stop, ReadinessMarker* ready = nullptr);

 private:
  void KillGroup(int sig);
  // Kills and reaps what the workload left: its process group and any orphan
  // reparented to perfgate. Returns how many processes were still alive.
  int KillLeftovers();

  pid_t pid_ = -1;
  int gate_fd_ = -1;    // write end: closing it releases the child
  int status_fd_ = -1;  // read end of the CLOEXEC pipe that reports exec errors
  int out_fd_ = -1;
  int err_fd_ = -1;
  int pidfd_ = -1;
  int exec_fd_ = -1;  // the executable opened before the identity switch (run_as)
  bool reaped_ = false;
  std::string argv0_;
  std::string user_;  // the identity taken, for error messages
  long long start_ns_ = 0;
};

}  // namespace perfgate
