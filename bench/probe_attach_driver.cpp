// Attaches one catalog probe so scripts can time workloads under it without
// the perfgate CLI. On exit it prints the chosen hooks, the probe's metrics
// and (with --stats) its BPF run-time statistics on stderr.
//
// Without a command: system scope only; holds the probe until stdin closes or
// SIGTERM/SIGINT arrives, printing "ready" on stdout once attached.
//
// With `-- CMD ARGS...`: runs CMD the way perfgate runs a workload: forks it
// held on a pipe, tracks it (workload scope), resets the probe, releases it
// and waits; CMD's stdout is this program's stdout.
//
// PROBE may be a comma-separated list (e.g. the default set), or `none`.
// --empty TRACEPOINT (repeatable) also attaches an empty program ("r0 = 0;
// exit", raw_tp) to that raw tracepoint: the floor any program there costs.
//
//   probe_attach_driver PROBE[,PROBE...] [--attach-type raw_tp|tracepoint|tp_btf] [--stats]
//                       [--scope system|workload] [--sample N] [--no-latency] [--trace MIN_NS]
//                       [--empty TRACEPOINT]... [-- CMD ARGS...]
//
// --sample sets the syscalls probe's latency sampling (1 in N; 1 = exact);
// --no-latency turns its latency off (sys_enter only).
// --trace turns the probes' trace paths on as `perfgate run --trace` does,
// with syscalls and off-CPU waits of at least MIN_NS as records (0: every
// syscall), and prints the records read and dropped.
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "probes/probe.h"
#include "probes/syscalls.h"
#include "probes/trace_buffer.h"
#include "probes/tracker.h"

namespace {

volatile sig_atomic_t stop_requested = 0;

void RequestStop(int) { stop_requested = 1; }

// Returns when stdin reaches EOF or a stop signal arrives.
void WaitForStop() {
  struct sigaction action {};
  action.sa_handler = RequestStop;  // no SA_RESTART: poll must return EINTR
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  char buffer[256];
  while (!stop_requested) {
    pollfd in{STDIN_FILENO, POLLIN, 0};
    if (poll(&in, 1, -1) < 0) continue;
    if (read(STDIN_FILENO, buffer, sizeof(buffer)) <= 0) return;
  }
}

bool ParseAttachType(const std::string& text, perfgate::AttachType& type) {
  using perfgate::AttachType;
  for (AttachType t : {AttachType::kTpBtf, AttachType::kRawTp, AttachType::kTracepoint}) {
    if (perfgate::ToString(t) == text) {
      type = t;
      return true;
    }
  }
  return false;
}

void PrintReport(const perfgate::ProbeReport& report, bool stats) {
  for (const auto& hook : report.hooks) {
    std::fprintf(stderr, "hook %s: %s (%s)\n", hook.hook.c_str(), hook.attach_type.c_str(), hook.target.c_str());
    for (const auto& rejected : hook.rejected) std::fprintf(stderr, "  rejected %s\n", rejected.c_str());
  }
  if (stats) {
    double per_run = report.run_count ? static_cast<double>(report.run_time_ns) / report.run_count : 0;
    std::fprintf(stderr, "bpf runs %llu, %.1f ns/run, misses %llu\n", static_cast<unsigned long long>(report.run_count),
                 per_run, static_cast<unsigned long long>(report.drops));
  }
}

void PrintMetrics(const perfgate::MetricSet& metrics) {
  for (const auto& [name, metric] : metrics) {
    if (metric.kind == perfgate::MetricKind::kHistogram)
      std::fprintf(stderr, "%s: n=%llu p50=%.0f p99=%.0f %s\n", name.c_str(),
                   static_cast<unsigned long long>(metric.hist.count()), metric.hist.Quantile(0.5),
                   metric.hist.Quantile(0.99), metric.unit.c_str());
    else
      std::fprintf(stderr, "%s: %.0f %s in %.2f s\n", name.c_str(), metric.value, metric.unit.c_str(),
                   metric.duration_s);
  }
}

// An empty raw_tp program attached to one raw tracepoint while this lives.
class EmptyProgram {
 public:
  explicit EmptyProgram(const std::string& tracepoint) {
    bpf_insn insns[2] = {};
    insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
    insns[0].dst_reg = BPF_REG_0;
    insns[1].code = BPF_JMP | BPF_EXIT;
    prog_ = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "pg_empty", "GPL", insns, 2, nullptr);
    if (prog_ < 0) throw perfgate::InfraError("empty program: load: " + std::string(std::strerror(errno)));
    link_ = bpf_raw_tracepoint_open(tracepoint.c_str(), prog_);
    if (link_ < 0) {
      close(prog_);
      throw perfgate::InfraError("empty program: attach to " + tracepoint + ": " + std::strerror(errno));
    }
  }
  ~EmptyProgram() {
    close(link_);
    close(prog_);
  }
  EmptyProgram(const EmptyProgram&) = delete;
  EmptyProgram& operator=(const EmptyProgram&) = delete;

 private:
  int prog_ = -1;
  int link_ = -1;
};

// Forks `argv` held on a pipe until Release().
class HeldCommand {
 public:
  explicit HeldCommand(char** argv) {
    if (pipe(gate_) != 0) throw perfgate::InfraError("pipe: " + std::string(std::strerror(errno)));
    pid_ = fork();
    if (pid_ < 0) throw perfgate::InfraError("fork: " + std::string(std::strerror(errno)));
    if (pid_ == 0) {
      close(gate_[1]);
      char byte;
      while (read(gate_[0], &byte, 1) < 0 && errno == EINTR) {
      }
      close(gate_[0]);
      execvp(argv[0], argv);
      std::fprintf(stderr, "exec %s: %s\n", argv[0], std::strerror(errno));
      _exit(127);
    }
    close(gate_[0]);
  }
  ~HeldCommand() {
    if (gate_[1] >= 0) close(gate_[1]);
    if (pid_ > 0 && !reaped_) waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  // Releases the command and returns its exit status (128 + signal if killed).
  int Release() {
    close(gate_[1]);
    gate_[1] = -1;
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  int gate_[2] = {-1, -1};
  pid_t pid_ = -1;
  bool reaped_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s PROBE [--attach-type TYPE] [--stats] [--scope system|workload] [--sample N]"
                 " [--no-latency] [--empty TRACEPOINT]... [-- CMD ARGS...]\n",
                 argv[0]);
    return 2;
  }
  perfgate::ProbeOptions options;
  options.scope = perfgate::ProbeScope::kSystem;
  bool stats = false;
  long sample = 0;
  bool latency = true;
  long trace_min_ns = -1;
  std::vector<std::string> empty;
  char** command = nullptr;
  for (int i = 2; i < argc; ++i) {
    perfgate::AttachType type;
    if (std::strcmp(argv[i], "--") == 0 && i + 1 < argc) {
      command = argv + i + 1;
      break;
    } else if (std::strcmp(argv[i], "--stats") == 0) {
      stats = true;
    } else if (std::strcmp(argv[i], "--no-latency") == 0) {
      latency = false;
    } else if (std::strcmp(argv[i], "--empty") == 0 && i + 1 < argc) {
      empty.emplace_back(argv[++i]);
    } else if (std::strcmp(argv[i], "--scope") == 0 && i + 1 < argc &&
               (std::strcmp(argv[i + 1], "system") == 0 || std::strcmp(argv[i + 1], "workload") == 0)) {
      options.scope =
          std::strcmp(argv[++i], "system") == 0 ? perfgate::ProbeScope::kSystem : perfgate::ProbeScope::kWorkload;
    } else if (std::strcmp(argv[i], "--trace") == 0 && i + 1 < argc && (trace_min_ns = std::atol(argv[i + 1])) >= 0) {
      ++i;
    } else if (std::strcmp(argv[i], "--sample") == 0 && i + 1 < argc && (sample = std::atol(argv[i + 1])) > 0) {
      ++i;
    } else if (std::strcmp(argv[i], "--attach-type") == 0 && i + 1 < argc && ParseAttachType(argv[i + 1], type)) {
      options.allowed_attach_types.push_back(type);
      ++i;
    } else {
      std::fprintf(stderr, "unknown argument: %s\n", argv[i]);
      return 2;
    }
  }
  bool workload = options.scope == perfgate::ProbeScope::kWorkload;
  if (workload && command == nullptr) {
    std::fprintf(stderr, "--scope workload needs a command after --\n");
    return 2;
  }
  int status = 0;
  try {
    std::vector<std::unique_ptr<perfgate::Probe>> probes;
    std::string names = argv[1];
    for (size_t start = 0; names != "none" && start <= names.size();) {
      size_t end = std::min(names.find(',', start), names.size());
      std::string name = names.substr(start, end - start);
      start = end + 1;
      if ((sample > 0 || !latency) && name == "syscalls")
        probes.push_back(perfgate::MakeSyscallsProbe(
            {.latency_sample_every = static_cast<uint32_t>(sample > 0 ? sample : 16), .latency = latency}));
      else
        probes.push_back(perfgate::CreateProbe(name));
      if (!probes.back()) {
        std::fprintf(stderr, "unknown probe: %s\n", name.c_str());
        return 2;
      }
    }
    // Run-time stats cost two clock reads per program run, so only on request.
    std::optional<perfgate::BpfStatsEnabler> enabler;
    if (stats) enabler.emplace();
    std::optional<perfgate::TraceBuffer> trace;
    if (trace_min_ns >= 0) {
      perfgate::TraceSettings settings;
      settings.slow_syscall_ns = settings.long_offcpu_ns = static_cast<uint64_t>(trace_min_ns);
      settings.buffer_bytes = perfgate::TraceBufferBytes(2e6, settings.poll_interval_ms);
      options.trace = &trace.emplace(settings);
      trace->Start();
    }
    std::vector<std::unique_ptr<EmptyProgram>> empty_programs;
    for (const auto& tracepoint : empty) empty_programs.push_back(std::make_unique<EmptyProgram>(tracepoint));
    std::optional<perfgate::WorkloadTracker> tracker;
    if (workload) tracker.emplace().Attach(options);
    for (auto& probe : probes) probe->Attach(options, tracker ? &*tracker : nullptr);
    auto begin = std::chrono::steady_clock::now();
    if (command != nullptr) {
      std::fflush(stdout);
      HeldCommand held(command);
      if (tracker) {
        tracker->Clear();
        tracker->Track(held.pid());
      }
      for (auto& probe : probes) probe->Reset();
      begin = std::chrono::steady_clock::now();
      status = held.Release();
    } else {
      for (auto& probe : probes) probe->Reset();
      std::printf("ready\n");
      std::fflush(stdout);
      WaitForStop();
    }
    perfgate::MetricSet metrics;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    for (auto& probe : probes) {
      probe->Collect(seconds, metrics);
      PrintReport(probe->Report(), stats);
    }
    PrintMetrics(metrics);
    for (auto& probe : probes) probe->Detach();
    if (trace) {
      const perfgate::TraceCapture capture = trace->Finish();
      std::fprintf(stderr, "trace: %llu records produced, %zu read, %llu dropped\n",
                   static_cast<unsigned long long>(capture.produced), capture.events.size(),
                   static_cast<unsigned long long>(capture.dropped));
    }
  } catch (const perfgate::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return static_cast<int>(e.code());
  }
  return status;
}
