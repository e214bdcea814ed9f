// Attaches one catalog probe in system scope and holds it until stdin closes
// or SIGTERM/SIGINT arrives, so scripts can time workloads under the probe
// without the perfgate CLI. Prints "ready" on stdout once attached; on exit
// prints the chosen hooks, the probe's metrics and (with --stats) its BPF
// run-time statistics on stderr.
//
//   probe_attach_driver PROBE [--attach-type raw_tp|tracepoint|tp_btf] [--stats]
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "metrics/error.h"
#include "probes/probe.h"

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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PROBE [--attach-type TYPE] [--stats]\n", argv[0]);
    return 2;
  }
  perfgate::ProbeOptions options;
  options.scope = perfgate::ProbeScope::kSystem;
  bool stats = false;
  for (int i = 2; i < argc; ++i) {
    perfgate::AttachType type;
    if (std::strcmp(argv[i], "--stats") == 0) {
      stats = true;
    } else if (std::strcmp(argv[i], "--attach-type") == 0 && i + 1 < argc && ParseAttachType(argv[i + 1], type)) {
      options.allowed_attach_types.push_back(type);
      ++i;
    } else {
      std::fprintf(stderr, "unknown argument: %s\n", argv[i]);
      return 2;
    }
  }
  auto probe = perfgate::CreateProbe(argv[1]);
  if (!probe) {
    std::fprintf(stderr, "unknown probe: %s\n", argv[1]);
    return 2;
  }
  try {
    // Run-time stats cost two clock reads per program run, so only on request.
    std::optional<perfgate::BpfStatsEnabler> enabler;
    if (stats) enabler.emplace();
    probe->Attach(options, nullptr);
    probe->Reset();
    auto begin = std::chrono::steady_clock::now();
    std::printf("ready\n");
    std::fflush(stdout);
    WaitForStop();
    perfgate::MetricSet metrics;
    probe->Collect(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(), metrics);
    PrintReport(probe->Report(), stats);
    PrintMetrics(metrics);
    probe->Detach();
  } catch (const perfgate::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return static_cast<int>(e.code());
  }
  return 0;
}
