// Times the ufunc probe's Attach and Detach on the 1,000 functions of
// ufunc_bench_target, and checks after each attach that a run of the target
// counts each function's one call. Needs root.
//
//   ufunc_attach_driver [--rounds N] [--perf-event] [--functions GLOB]
//
// --perf-event attaches one perf_event uprobe per function and direction
// instead of uprobe_multi links (slow to detach: narrow --functions, e.g.
// 'ufunc_bench_0[0-4]?' for 50 functions).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "probes/probe.h"
#include "probes/tracker.h"
#include "probes/ufunc_probe.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Runs the target the way perfgate runs a workload: forked, tracked while
// held before exec, then released. Returns its exit status.
int RunTracked(perfgate::WorkloadTracker& tracker, perfgate::Probe& probe) {
  int gate[2];
  if (pipe(gate) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(gate[1]);
    char byte;
    while (read(gate[0], &byte, 1) < 0 && errno == EINTR) {
    }
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    execl(UFUNC_BENCH_TARGET, UFUNC_BENCH_TARGET, static_cast<char*>(nullptr));
    _exit(127);
  }
  close(gate[0]);
  tracker.Clear();
  tracker.Track(pid);
  probe.Reset();
  close(gate[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  bool multi = true;
  std::string glob = "ufunc_bench_*";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--perf-event") {
      multi = false;
    } else if (arg == "--functions" && i + 1 < argc) {
      glob = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--rounds N] [--perf-event] [--functions GLOB]\n", argv[0]);
      return 2;
    }
  }
  try {
    perfgate::WorkloadTracker tracker;
    tracker.Attach({});
    perfgate::ProbeOptions options;
    options.params = {{"functions", {glob}}};
    options.workload_path = UFUNC_BENCH_TARGET;
    std::vector<double> attach_s, detach_s;
    for (int round = 0; round < rounds; ++round) {
      auto probe = perfgate::MakeUfuncProbe(perfgate::UfuncProbeOptions{.uprobe_multi = multi});
      auto start = Clock::now();
      probe->Attach(options, &tracker);
      attach_s.push_back(Seconds(start));
      perfgate::ProbeReport report = probe->Report();

      int status = RunTracked(tracker, *probe);
      perfgate::MetricSet metrics;
      probe->Collect(1, metrics);
      double calls = 0, timed = 0;
      size_t functions = 0;
      for (const auto& [name, metric] : metrics) {
        if (metric.kind == perfgate::MetricKind::kCounter) {
          calls += metric.value;
          ++functions;
        } else {
          timed += static_cast<double>(metric.hist.count());
        }
      }

      start = Clock::now();
      probe->Detach();
      detach_s.push_back(Seconds(start));
      const auto& hook = report.hooks.at(0);
      std::printf("round %d: %s via %s: attach %.3f s, detach %.3f s; target exit %d, %.0f calls, %.0f timed\n",
                  round + 1, hook.hook.c_str(), hook.target.substr(0, hook.target.find(':')).c_str(), attach_s.back(),
                  detach_s.back(), status, calls, timed);
      if (status != 0 || calls != static_cast<double>(functions) || timed != calls) {
        std::fprintf(stderr, "expected one call of each of the %zu functions\n", functions);
        return 1;
      }
    }
    std::printf("median of %d rounds: attach %.3f s, detach %.3f s\n", rounds, Median(attach_s), Median(detach_s));
  } catch (const perfgate::Error& e) {
    std::fprintf(stderr, "ufunc_attach_driver: %s\n", e.what());
    return static_cast<int>(e.code());
  }
  return 0;
}
