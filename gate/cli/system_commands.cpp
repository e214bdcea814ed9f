// probes and doctor: what this kernel and this process can do.
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "adapters/adapter.h"
#include "base/error.h"
#include "base/escape.h"
#include "base/quantity.h"
#include "cli/commands.h"
#include "compare/host_speed.h"
#include "probes/cpu.h"
#include "probes/features.h"
#include "probes/probe.h"
#include "run/canary.h"
#include "run/runner.h"
#include "stats/descriptive.h"

namespace perfgate {

namespace fs = std::filesystem;

namespace {

constexpr const char* kTracefs = "/sys/kernel/tracing";
constexpr int kCapPerfmon = 38;
constexpr int kCapBpf = 39;
constexpr int kCapSysAdmin = 21;

bool HasCapability(int cap) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) == 0) {
      unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
      return (mask >> cap) & 1ULL;
    }
  }
  return false;
}

bool Privileged() {
  return geteuid() == 0 || HasCapability(kCapSysAdmin) || (HasCapability(kCapBpf) && HasCapability(kCapPerfmon));
}

// Mounted, not mounted, or unknown: tracefs is mode 0700, so a user without
// root cannot even tell.
enum class Tracefs { kMounted, kMissing, kUnreadable };

Tracefs TracefsState() {
  std::error_code ec;
  const bool events = fs::exists(std::string(kTracefs) + "/events", ec);
  if (ec) return ec == std::errc::permission_denied ? Tracefs::kUnreadable : Tracefs::kMissing;
  return events ? Tracefs::kMounted : Tracefs::kMissing;
}

void Line(bool ok, const std::string& what, const std::string& detail) {
  std::printf("%-8s %-22s %s\n", ok ? "ok" : "missing", what.c_str(), detail.c_str());
}

}  // namespace

int ProbesCommand() {
  bool privileged = Privileged();
  std::vector<AttachSupport> support;
  if (privileged) support = ProbeAttachSupport();
  std::printf("attach types on this kernel:\n");
  for (const auto& s : support) {
    std::printf("  %-11s %s\n", ToString(s.type).c_str(), s.supported ? "yes" : ("no: " + s.reason).c_str());
  }
  if (!privileged) std::printf("  (unknown: needs root or CAP_BPF+CAP_PERFMON to probe)\n");
  std::printf("\nprobes:\n");
  for (const auto& info : ProbeCatalog()) {
    std::printf("  %s — %s\n", info.name.c_str(), info.description.c_str());
    std::string metrics;
    for (const auto& m : info.metrics) metrics += (metrics.empty() ? "" : ", ") + m.name;
    std::printf("    metrics: %s\n", metrics.c_str());
    std::printf("    attach: %s\n", info.attach.c_str());
    for (const auto& param : info.parameters) {
      std::printf("    parameter %s (%s): %s\n", param.name.c_str(), ToString(param.type).c_str(),
                  param.description.c_str());
    }
    if (!privileged) continue;
    auto probe = CreateProbe(info.name);
    try {
      ProbeOptions options;
      options.scope = ProbeScope::kSystem;
      probe->Attach(options, nullptr);
      for (const auto& hook : probe->Report().hooks) {
        std::string rejected;
        for (const auto& r : hook.rejected) rejected += (rejected.empty() ? " (not: " : "; ") + r;
        if (!rejected.empty()) rejected += ")";
        std::printf("    hook %-22s %-11s %s%s\n", hook.hook.c_str(), hook.attach_type.c_str(), hook.target.c_str(),
                    rejected.c_str());
      }
      probe->Detach();
    } catch (const Error& e) {
      // A probe of what its suite parameters name (ufunc's functions) has no
      // hooks without them: not a failure of this kernel.
      if (e.code() == ExitCode::kBadInput)
        std::printf("    hooks: chosen from its suite parameters (%s)\n", e.what());
      else
        std::printf("    cannot attach: %s\n", e.what());
    }
  }
  return 0;
}

namespace {

// "events, 2 us each, within sched.offcpu_time, unless sched.switches, per CPU-second": the why's price of a metric.
std::string DescribePrice(const MetricDeclaration& d) {
  if (d.role != MetricRole::kKernel) return d.role == MetricRole::kHost ? "host noise, never a cause" : "outcome";
  const MetricPrice& p = d.price;
  std::string text = p.hidden ? "never a cause" : ToString(p.pricing);
  if (p.pricing == Pricing::kEvents) text += ", " + FormatQuantity(p.event_s, "s") + " each";
  if (!p.within.empty()) text += ", within " + p.within;
  if (!p.unless.empty()) text += ", unless " + p.unless;
  if (p.scale == PriceScale::kCpu) text += ", per CPU-second";
  if (p.scale == PriceScale::kWall) text += ", per second of the run";
  return text;
}

}  // namespace

int MetricsCommand(bool markdown) {
  const auto print = [&](const std::string& title, const std::vector<MetricDeclaration>& declarations) {
    if (markdown) {
      std::printf("### %s\n\n| metric | kind | unit | better | the why | what it is |\n", title.c_str());
      std::printf("| --- | --- | --- | --- | --- | --- |\n");
    } else {
      std::printf("%s:\n", title.c_str());
    }
    for (const MetricDeclaration& d : declarations) {
      const std::string unit = d.unit == kUnitAsReported ? "as reported" : d.unit;
      if (markdown) {
        std::printf("| `%s` | %s | %s | %s | %s | %s |\n", d.name.c_str(), ToString(d.kind).c_str(),
                    MarkdownEscape(unit).c_str(), ToString(d.better).c_str(), MarkdownEscape(DescribePrice(d)).c_str(),
                    MarkdownEscape(d.help).c_str());
      } else {
        std::printf("  %-42s %-9s %-11s %-6s %s\n    %s\n", d.name.c_str(), ToString(d.kind).c_str(), unit.c_str(),
                    ToString(d.better).c_str(), DescribePrice(d).c_str(), d.help.c_str());
      }
    }
    std::printf("\n");
  };
  print("every repetition", RepetitionMetricDeclarations());
  print("workload adapters", AdapterMetricDeclarations());
  for (const ProbeInfo& info : ProbeCatalog()) print("probe " + info.name, info.metrics);
  return 0;
}

namespace {

// How steady this host is now: the canary (run/canary.h), 20 ms at a time,
// every 50 ms for kSteadinessSeconds, and the robust CV of each part; the
// loop's decides the smallest timing change a run against stored numbers
// can tell from the host (compare/host_speed.h). Needs no privilege.
constexpr double kSteadinessSeconds = 3;

void HostSteadiness() {
  std::vector<double> loop, stream, faults, read;
  for (double spent = 0; spent < kSteadinessSeconds; spent += 0.05) {
    const CanaryReading r = RunCanary(0.02);
    if (r.cpu_s) loop.push_back(*r.cpu_s);
    if (r.memory_s) stream.push_back(*r.memory_s);
    if (r.fault_s) faults.push_back(*r.fault_s);
    if (r.io_s) read.push_back(*r.io_s);
    usleep(static_cast<useconds_t>(std::max(0.0, 0.05 - r.elapsed_s) * 1e6));
  }
  const auto cv = [](const std::vector<double>& v) {
    return v.size() < 3 ? std::string("n/a") : FormatValue("%.1f", 100 * stats::RobustCoefficientOfVariation(v)) + " %";
  };
  const double smallest = SmallestChangeTheHostLetsDecide(stats::RobustCoefficientOfVariation(loop));
  Line(smallest <= 2 * kHostSpeedFloorPct, "host steadiness",
       "the canary's spread over " + FormatValue("%.0f", kSteadinessSeconds) + " s: loop " + cv(loop) + ", stream " +
           cv(stream) + ", faults " + cv(faults) + ", direct read " + cv(read) +
           "; a run against stored baselines tells a timing change from "
           "the host's own beyond " +
           FormatValue("%.0f", smallest) + " %" +
           (smallest <= 2 * kHostSpeedFloorPct ? "" : ": set timing thresholds above it, or gate with perfgate ab"));
}

}  // namespace

int DoctorCommand(bool fix) {
  bool essential_ok = true;
  // Every probe is a CO-RE program: without the kernel's BTF none loads.
  const Feature btf = KernelBtf();
  Line(btf.supported, "BTF", btf.supported ? "kernel BTF found" : btf.reason + "; no probe can load without it");
  essential_ok &= btf.supported;

  bool privileged = Privileged();
  Line(privileged, "privileges",
       privileged ? (geteuid() == 0 ? "root" : "CAP_BPF + CAP_PERFMON")
                  : "not root: run perfgate with sudo, or grant CAP_BPF,CAP_PERFMON (setcap) to the binary");
  essential_ok &= privileged;

  Tracefs state = TracefsState();
  if (state == Tracefs::kMissing && fix) {
    if (mount("nodev", kTracefs, "tracefs", 0, nullptr) == 0) {
      state = TracefsState();
    } else {
      std::printf("         (mount failed: %s)\n", std::strerror(errno));
    }
  }
  const bool tracefs = state == Tracefs::kMounted;
  Line(tracefs, "tracefs",
       tracefs ? kTracefs
       : state == Tracefs::kUnreadable
           ? std::string(kTracefs) + " is not readable without root: run `sudo perfgate doctor`"
           : std::string("not mounted at ") + kTracefs + ": run `perfgate doctor --fix` or `mount -t tracefs nodev " +
                 kTracefs + "` (only the tracepoint attach type needs it)");
  // Only the tracepoint attach type needs tracefs: raw tracepoints (and
  // tp_btf) attach without it, so its absence alone is not fatal.

  bool cgroup2 = fs::exists("/sys/fs/cgroup/cgroup.controllers") || fs::exists("/sys/fs/cgroup/unified/cgroup.procs");
  Line(cgroup2, "cgroup v2",
       cgroup2
           ? (fs::exists("/sys/fs/cgroup/cgroup.controllers") ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified (hybrid)")
           : "no cgroup v2 hierarchy: mount -t cgroup2 none /sys/fs/cgroup/unified");
  bool memcg = fs::exists("/sys/fs/cgroup/memory") || fs::exists("/sys/fs/cgroup/cgroup.controllers");
  Line(memcg, "memory cgroup", memcg ? "available" : "no memory controller: memory-limited scenarios cannot run");

  // Only the cpu probe reads the PMU, and without one it counts software events.
  const CpuCounterChoice counters = AutoCpuCounters();
  std::string counted;
  for (const auto& c : CpuCounters(counters.set)) counted += (counted.empty() ? "" : ", ") + c.event;
  const bool pmu = counters.set == CpuCounterSet::kHardware;
  Line(pmu, "hardware counters",
       pmu ? "PMU found: the cpu probe counts hardware " + counted
           : counters.why_not_hardware + "; the cpu probe counts software " + counted +
                 " instead, and checks on cpu.instructions end in error: count instructions with --instrument");

  HostSteadiness();

  if (!privileged) {
    Line(false, "attach types", "unknown: probing needs privileges");
    return 3;
  }
  bool any_tracepoint = false;
  bool raw_tracepoints = false;
  for (const auto& s : ProbeAttachSupport()) {
    Line(s.supported, "attach " + ToString(s.type), s.supported ? "works" : s.reason);
    any_tracepoint |= s.supported && (s.type == AttachType::kRawTp || s.type == AttachType::kTracepoint ||
                                      s.type == AttachType::kTpBtf);
    raw_tracepoints |= s.supported && (s.type == AttachType::kRawTp || s.type == AttachType::kTpBtf);
  }
  essential_ok &= any_tracepoint;
  BpfStatsEnabler stats;
  Line(stats.enabled(), "BPF run-time stats", stats.enabled() ? "available" : stats.reason());
  if (!essential_ok) {
    std::printf("perfgate cannot run probes here: fix what is missing%s\n",
                btf.supported ? "" : " (compare, report, merge, trend and export still work)");
    return 3;
  }
  if (!tracefs && raw_tracepoints) {
    std::printf(
        "perfgate can run here: hooks attach as raw tracepoints; without tracefs only the tracepoint "
        "fallback is unavailable\n");
  } else {
    std::printf("perfgate can run here\n");
  }
  return 0;
}

}  // namespace perfgate
