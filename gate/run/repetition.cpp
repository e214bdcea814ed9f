#include "run/repetition.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "adapters/tool_output.h"
#include "base/error.h"
#include "base/log.h"
#include "metrics/metric.h"
#include "run/canary.h"
#include "run/host_load.h"
#include "run/instrumented.h"
#include "run/memory_pressure.h"
#include "run/process.h"

namespace perfgate {

namespace {

double Seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

std::string DescribeFailure(const ProcessOutcome& o, double timeout_s) {
  std::string what;
  if (o.interrupted) return "interrupted";
  if (o.timed_out) {
    what = "timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s (process group killed)";
  } else if (o.term_signal) {
    what = "crashed with signal " + std::to_string(o.term_signal) + " (" + strsignal(o.term_signal) + ")";
  } else {
    what = "exited with status " + std::to_string(o.exit_code);
  }
  std::string tail = o.stderr_tail;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  if (auto nl = tail.rfind('\n'); nl != std::string::npos) tail = tail.substr(nl + 1);
  if (!tail.empty()) what += "; last stderr line: " + tail.substr(0, 300);
  return what;
}

}  // namespace

std::string ResolveExecutable(const std::string& name, const std::string& cwd) {
  namespace fs = std::filesystem;
  if (name.find('/') != std::string::npos) {
    fs::path p = name;
    if (p.is_relative() && !cwd.empty()) p = fs::path(cwd) / p;
    std::error_code ec;
    fs::path abs = fs::absolute(p, ec);
    return ec ? p.string() : abs.lexically_normal().string();
  }
  return FindExecutable(name);
}

ScenarioProbes::ScenarioProbes(const ScenarioSpec& spec, const std::vector<ProbeSpec>& probes,
                               const std::vector<std::string>& argv, const RunOptions& options,
                               const TraceBuffer* trace) {
  bool workload_scope = false;
  for (const auto& p : probes) workload_scope |= p.scope == "workload";
  ProbeOptions base;
  base.allowed_attach_types = options.allowed_attach_types;
  base.trace = trace;
  if (workload_scope) {
    tracker_ = std::make_unique<WorkloadTracker>();
    tracker_->Attach(base);
  }
  for (const auto& p : probes) {
    auto probe = CreateProbe(p.name);
    if (!probe) throw InputError("probe \"" + p.name + "\" is not in the catalog");
    ProbeOptions po = base;
    po.scope = p.scope == "system" ? ProbeScope::kSystem : ProbeScope::kWorkload;
    po.params = p.params;
    if (!spec.workload.shell && !argv.empty()) po.workload_path = ResolveExecutable(argv[0], spec.workload.cwd);
    try {
      probe->Attach(po, tracker_.get());
    } catch (const Error& e) {
      if (!p.optional || e.code() != ExitCode::kInfra) throw;
      probe->Detach();  // what attached before the failing hook
      ProbeReport report;
      report.name = p.name;
      report.scope = p.scope;
      report.not_attached = e.what();
      log::Warning("scenario %s: optional probe %s not attached, the run goes on without it: %s\n", spec.name.c_str(),
                   p.name.c_str(), e.what());
      not_attached_.push_back(std::move(report));
      continue;
    }
    probes_.push_back({std::move(probe), p.scope});
  }
}

ScenarioProbes::~ScenarioProbes() {
  for (auto& p : probes_) p.probe->Detach();
  if (tracker_) tracker_->Detach();
}

bool ScenarioProbes::Unhook() {
  for (auto& p : probes_) {
    if (!p.probe->Unhook()) return false;
  }
  if (tracker_) tracker_->Unhook();
  unhooked_ = true;
  return true;
}

void ScenarioProbes::Prepare(pid_t pid) {
  workload_pid_ = pid;
  if (tracker_) {
    tracker_->Clear();
    tracker_->Track(pid);
  }
  for (auto& p : probes_) p.probe->Reset();
}

void ScenarioProbes::MeasureProbeCost(bool on) {
  if (on && !stats_) stats_.emplace();
  if (!on) stats_.reset();
}

Probe* ScenarioProbes::Find(const std::string& name) const {
  for (const auto& p : probes_) {
    if (p.probe->name() == name) return p.probe.get();
  }
  return nullptr;
}

void ScenarioProbes::Collect(double duration_s, MetricSet& out) {
  if (unhooked_) return;
  for (auto& p : probes_) p.probe->Collect(duration_s, out);
}

std::vector<CpuHolder> ScenarioProbes::CpuHolders() const {
  if (unhooked_) return {};
  for (const auto& p : probes_) {
    if (auto holders = p.probe->CpuHolders(); !holders.empty()) return holders;
  }
  return {};
}

void ScenarioProbes::CountWorkloadCpu(const Repetition& rep) {
  auto cpu = rep.metrics.find(kWorkloadCpuTime);
  if (stats_ && stats_->enabled() && cpu != rep.metrics.end()) {
    workload_cpu_ns_ += static_cast<uint64_t>(cpu->second.value * 1e9);
  }
}

std::vector<ProbeReport> ScenarioProbes::Reports() const {
  std::vector<ProbeReport> out;
  if (tracker_) out.push_back(tracker_->Report());
  for (const auto& p : probes_) {
    ProbeReport r = p.probe->Report();
    r.scope = p.scope;
    out.push_back(std::move(r));
  }
  for (auto& r : out) r.workload_cpu_ns = workload_cpu_ns_;
  out.insert(out.end(), not_attached_.begin(), not_attached_.end());
  return out;
}

Repetition RunRepetition(const ScenarioSpec& spec, const WorkloadAdapter& adapter, const std::vector<std::string>& argv,
                         ScenarioProbes& probes, const RunOptions& options, HostCanary* canary) {
  std::optional<Credentials> as;
  if (!spec.run_as.empty()) as = ResolveUser(spec.run_as, "scenario \"" + spec.name + "\": run_as");
  adapter.PrepareLaunch(spec.workload);
  // After the launch's preparation (a cold start's dropped caches), before
  // anything of the workload exists.
  if (canary) canary->Before();
  // Declared before the process, so they outlive it: the cgroup is removed
  // once the workload is reaped and the antagonist stopped.
  std::optional<MemoryCgroup> cgroup;
  std::optional<MemoryAntagonist> antagonist;
  if (const std::optional<MemoryLimit> limit = adapter.MemoryLimitOf(spec.workload)) {
    cgroup.emplace(limit->limit_mb);
    if (limit->antagonist) antagonist.emplace(*cgroup);
  }
  // Instrumented: the launch under Valgrind, its counts in a directory of
  // this repetition that the workload's user may write.
  std::optional<InstrumentedLaunch> instrumented;
  if (spec.instrument && CanInstrument(spec.workload.kind)) {
    std::vector<std::string> counted = argv;
    for (std::string& arg : adapter.InstrumentedArgs(spec.workload)) counted.push_back(std::move(arg));
    instrumented.emplace(counted, adapter.InstrumentedPauses(spec.workload), as ? &*as : nullptr);
  }
  HeldProcess process(instrumented ? instrumented->argv() : argv, spec.workload.env, spec.workload.cwd,
                      as ? &*as : nullptr);
  if (cgroup) cgroup->AddWorkload(process.pid());  // before exec: every page of the start is charged there
  const std::unique_ptr<ReadinessMarker> ready = adapter.Readiness(spec.workload);
  probes.Prepare(process.pid());
  const std::optional<CpuTimes> host_before = ReadCpuTimes();
  const PressureTotals pressure_before = ReadPressure();
  process.Release();
  ProcessOutcome outcome = process.Wait(spec.timeout_s, options.stop, ready.get());
  const std::optional<CpuTimes> host_after = ReadCpuTimes();
  const PressureTotals pressure_after = ReadPressure();
  const std::optional<CanaryReading> canary_reading =
      canary ? std::optional(canary->After(outcome.wall_s)) : std::nullopt;
  Repetition rep;
  rep.exit_status = outcome.status();
  if (!outcome.succeeded() || (ready && !outcome.ready_s)) {
    rep.failure = DescribeFailure(outcome, spec.timeout_s);
    if (ready && !outcome.ready_s) rep.failure = "was never ready (" + ready->Describe() + "): " + rep.failure;
    return rep;
  }
  AddRusageMetrics(outcome.usage, outcome.wall_s, rep.metrics);
  if (canary_reading) AddCanaryMetrics(*canary_reading, rep.metrics);
  if (host_before && host_after) {
    const double cpu_s = rep.metrics[kWorkloadCpuTime].value;
    const double other = OtherCpus(*host_before, *host_after, cpu_s, outcome.wall_s);
    rep.metrics[kHostOtherCpus] = ScalarMetric(kHostOtherCpus, other, "cpus", Better::kNone);
    rep.metrics[kHostStealCpus] =
        ScalarMetric(kHostStealCpus, StealCpus(*host_before, *host_after, outcome.wall_s), "cpus", Better::kNone);
  }
  const auto share = [&](const char* name, std::optional<uint64_t> before, std::optional<uint64_t> after) {
    if (!before || !after || *after < *before || !(outcome.wall_s > 0)) return;
    const double waited_s = static_cast<double>(*after - *before) / 1e6;
    rep.metrics[name] = ScalarMetric(name, std::min(1.0, waited_s / outcome.wall_s), "fraction", Better::kNone);
  };
  share(kHostCpuPressure, pressure_before.cpu_us, pressure_after.cpu_us);
  share(kHostMemoryPressure, pressure_before.memory_us, pressure_after.memory_us);
  share(kHostIoPressure, pressure_before.io_us, pressure_after.io_us);
  probes.Collect(outcome.wall_s, rep.metrics);
  if (instrumented) AddInstructionMetrics(ReadInstructionCounts(instrumented->dir()), outcome.wall_s, rep.metrics);
  if (const std::optional<double> refaults = cgroup ? cgroup->WorkloadRefaultBytes() : std::nullopt) {
    rep.metrics[kReclaimRefaultBytes] = CounterMetric(kReclaimRefaultBytes, "bytes", *refaults, outcome.wall_s);
  }
  rep.cpu_holders = probes.CpuHolders();
  WorkloadOutput parsed = adapter.ParseOutput(outcome.stdout_text, spec.workload);
  for (auto& [name, m] : parsed.metrics) rep.metrics[name] = std::move(m);
  rep.warnings = std::move(parsed.warnings);
  if (outcome.stdout_dropped > 0) {
    rep.warnings.push_back("wrote more than " + std::to_string(HeldProcess::kMaxCapturedOutput >> 20) +
                           " MiB to stdout; the last " + std::to_string(outcome.stdout_dropped) +
                           " bytes were not kept or parsed");
  }
  if (outcome.leftovers_killed > 0) {
    rep.warnings.push_back("left " + std::to_string(outcome.leftovers_killed) +
                           " process(es) running when it exited; perfgate killed them");
  }
  rep.phases = std::move(parsed.phases);
  if (ready) adapter.AddStartMetrics(*outcome.ready_s, outcome.usage, spec.workload, rep.metrics);
  if (parsed.ops) {
    for (auto& [name, m] : rep.metrics) {
      if (m.kind == MetricKind::kCounter) m.ops = parsed.ops;
    }
  }
  return rep;
}

std::vector<MetricDeclaration> RepetitionMetricDeclarations() {
  return {
      OutcomeScalar(kWorkloadWallTime, "s", Better::kLower, "exec to exit (or readiness)"),
      OutcomeScalar(kWorkloadCpuTime, "s", Better::kLower, "user and system CPU time of the process tree (rusage)"),
      OutcomeScalar(kWorkloadMaxRss, "bytes", Better::kLower,
                    "the largest resident set of a process of the tree (rusage)"),
      KernelCounter(kWorkloadPageFaults, "count", PerEvent(1e-6, {}, "mm.page_faults"),
                    "page faults of the process tree (rusage)"),
      KernelCounter(kWorkloadContextSwitches, "count", PerEvent(2e-6, {}, "sched.switches"),
                    "context switches of the process tree (rusage)"),
      HostMetric(kHostOtherCpus, "cpus", "CPUs' worth of other work on the host during the repetition"),
      HostMetric(kHostStealCpus, "cpus", "CPUs' worth of time the hypervisor stole"),
      HostMetric(kHostCpuPressure, "fraction", "share of the wall time some task waited for a CPU (PSI)"),
      HostMetric(kHostMemoryPressure, "fraction", "share of the wall time some task waited for memory (PSI)"),
      HostMetric(kHostIoPressure, "fraction", "share of the wall time some task waited for I/O (PSI)"),
      HostMetric(kHostCanaryCpu, "s",
                 "the host canary around the repetition: seconds per 2^20 iterations of a dependent integer loop"),
      HostMetric(kHostCanaryMemory, "s", "the host canary around the repetition: seconds per GiB read through memory"),
      HostMetric(kHostCanaryFault, "s",
                 "the host canary around the repetition: seconds per MiB of fresh memory mapped, written and unmapped"),
      HostMetric(kHostCanaryIo, "s", "the host canary around the repetition: seconds per 4 KiB direct read"),
      HostMetric(kHostCanaryElapsed, "s", "the host canary's whole time, before and after the repetition (its cost)"),
      KernelCounter(kReclaimRefaultBytes, "bytes", {.pricing = Pricing::kReadBack, .within = "sched.offcpu.io"},
                    "file pages of a start in a memory cgroup that reclaim evicted and it read back (workingset "
                    "refaults)"),
  };
}

void AddRusageMetrics(const ::rusage& u, double wall_s, MetricSet& out) {
  out[kWorkloadWallTime] = ScalarMetric(kWorkloadWallTime, wall_s, "s");
  out[kWorkloadCpuTime] = ScalarMetric(kWorkloadCpuTime, Seconds(u.ru_utime) + Seconds(u.ru_stime), "s");
  out[kWorkloadMaxRss] = ScalarMetric(kWorkloadMaxRss, static_cast<double>(u.ru_maxrss) * 1024.0, "bytes");
  out[kWorkloadPageFaults] =
      CounterMetric(kWorkloadPageFaults, "count", static_cast<double>(u.ru_minflt + u.ru_majflt), wall_s);
  out[kWorkloadContextSwitches] =
      CounterMetric(kWorkloadContextSwitches, "count", static_cast<double>(u.ru_nvcsw + u.ru_nivcsw), wall_s);
}

}  // namespace perfgate
