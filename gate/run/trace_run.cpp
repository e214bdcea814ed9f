#include "run/trace_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "adapters/adapter.h"
#include "base/error.h"
#include "metrics/metric.h"
#include "probes/syscalls.h"
#include "run/repetition.h"
#include "run/schedule.h"

namespace perfgate {

namespace {

bool Failed(const CheckResult& c) { return c.verdict == Verdict::kRegression; }

// The change of a check in its bad direction, in percent (negative: better).
double BadChange(const CheckResult& c) {
  if (c.better == Better::kHigher) return -c.change_pct;
  if (c.better == Better::kNone) return std::abs(c.change_pct);
  return c.change_pct;
}

std::string DescribeTarget(const CheckResult& c) {
  char change[32];
  std::snprintf(change, sizeof change, "%+.1f %%", c.change_pct);
  return c.spec.name + ": " + ToString(c.verdict) + " (" + change + ")";
}

// Waits of a histogram at least `threshold` long, per second.
double RateAtLeast(const Metric& m, uint64_t threshold) {
  if (m.duration_s <= 0) return 0;
  uint64_t n = 0;
  for (const auto& [index, count] : m.hist.buckets()) {
    if (LogLinearHistogram::BucketUpper(index) >= threshold) n += count;
  }
  return static_cast<double>(n) / m.duration_s;
}

double CounterRate(const Metric& m) { return m.duration_s > 0 ? m.value / m.duration_s : 0; }

std::string OwnComm() {
  std::ifstream in("/proc/self/comm");
  std::string comm;
  std::getline(in, comm);
  return comm;
}

}  // namespace

std::optional<TraceTarget> WorstScenario(const RunResults& results) {
  std::optional<TraceTarget> worst;
  double worst_change = -INFINITY;
  for (size_t i = 0; i < results.scenarios.size(); ++i) {
    const ScenarioResult& s = results.scenarios[i];
    if (!s.error.empty() || s.repetitions.empty()) continue;
    for (const CheckResult& c : s.checks) {
      if (Failed(c)) return TraceTarget{i, DescribeTarget(c)};
      if (c.verdict == Verdict::kError) continue;
      const double change = BadChange(c);
      if (change > worst_change) {
        worst_change = change;
        worst = TraceTarget{i, DescribeTarget(c)};
      }
    }
    if (!worst) worst = TraceTarget{i, "no check: first scenario that ran"};
  }
  return worst;
}

double ExpectedTraceRate(const ScenarioResult& measured, const TraceSettings& settings) {
  double busiest = 0;
  for (const Repetition& rep : measured.repetitions) {
    double rate = 0;
    for (const auto& [name, m] : rep.metrics) {
      if (name == kSyscallsLatency) {
        // Sampled: the share of slow calls among the sampled ones, times all calls.
        auto count = rep.metrics.find(kSyscallsCount);
        if (count != rep.metrics.end() && m.hist.count() > 0)
          rate += CounterRate(count->second) * RateAtLeast(m, settings.slow_syscall_ns) * m.duration_s /
                  static_cast<double>(m.hist.count());
      } else if (name == kSchedOffcpu) {
        rate += RateAtLeast(m, settings.long_offcpu_ns);
      } else if (name == kSchedRunqLatency || name == kBlockIoLatency) {
        rate += m.duration_s > 0 ? static_cast<double>(m.hist.count()) / m.duration_s : 0;
      } else if (name == kMmPageAlloc || name == kMmReclaim || name == kMmMemcgReclaim) {
        rate += CounterRate(m);  // pages: at least as many as allocations
      }
    }
    busiest = std::max(busiest, rate);
  }
  return busiest;
}

TraceCapture TraceRepetition(const ScenarioSpec& spec, const RunOptions& options, const TraceSettings& settings) {
  TraceBuffer buffer(settings);
  pid_t pid = 0;
  std::vector<ScenarioResult> ran;
  {
    Schedule schedule;
    schedule.arms = {{"traced", &spec, spec.probes}};
    schedule.trace = &buffer;
    schedule.probe_cost = ProbeCostWindow::kNever;
    schedule.progress = false;
    schedule.numbered = false;
    schedule.canary = false;
    schedule.before_repetition = [&](ScenarioProbes&) { buffer.Start(); };
    schedule.after_repetition = [&](size_t, const Repetition&, ScenarioProbes& probes) { pid = probes.workload_pid(); };
    RunSchedule(schedule, options, ran);
  }  // probes detached: nothing is produced after the last drain
  TraceCapture capture = buffer.Finish();
  Repetition& rep = ran[0].repetitions.at(0);
  const std::vector<std::string> argv = LaunchArgv(spec);
  const uint32_t workload_pid = static_cast<uint32_t>(pid);
  capture.workloads = {{workload_pid, std::move(rep.phases)}};
  // Records from before exec carry perfgate's own name for the workload.
  if (!argv.empty()) {
    const std::string comm = std::filesystem::path(argv[0]).filename().string().substr(0, 15);
    const std::string own = OwnComm();
    auto process = capture.processes.find(workload_pid);
    if (process == capture.processes.end() || process->second == own) capture.processes[workload_pid] = comm;
    auto thread = capture.threads.find(workload_pid);
    if (thread != capture.threads.end() && thread->second.name == own) thread->second.name = comm;
  }
  for (const pg_trace_event& e : capture.events) {
    if (e.type == PG_TRACE_SYSCALL && e.arg != PG_TRACE_NO_NR && !capture.syscall_names.count(e.arg))
      capture.syscall_names[e.arg] = SyscallName(e.arg);
  }
  return capture;
}

TraceCapture MergeTraceSides(std::vector<std::pair<std::string, TraceCapture>> sides) {
  TraceCapture merged;
  for (auto& [side, capture] : sides) {
    if (merged.workloads.empty() && merged.events.empty()) {
      merged.monotonic_ns = capture.monotonic_ns;
      merged.boottime_ns = capture.boottime_ns;
    }
    merged.events.insert(merged.events.end(), capture.events.begin(), capture.events.end());
    for (auto& [tid, thread] : capture.threads) merged.threads[tid] = std::move(thread);
    for (auto& [tgid, name] : capture.processes) merged.processes[tgid] = side + ": " + name;
    for (auto& workload : capture.workloads) {
      // A process known only as a workload still gets its side in its name.
      if (!merged.processes.count(workload.pid)) merged.processes[workload.pid] = side + ": workload";
      merged.workloads.push_back(std::move(workload));
    }
    merged.syscall_names.insert(capture.syscall_names.begin(), capture.syscall_names.end());
    merged.produced += capture.produced;
    merged.dropped += capture.dropped;
    merged.buffer_bytes = std::max(merged.buffer_bytes, capture.buffer_bytes);
  }
  return merged;
}

}  // namespace perfgate
