#include "run/runner.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>

#include "adapters/adapter.h"
#include "metrics/error.h"
#include "probes/tracker.h"
#include "run/environment.h"
#include "run/host_load.h"
#include "run/process.h"

namespace perfgate {

namespace {

Metric Scalar(const std::string& name, double value, const std::string& unit) {
  Metric m;
  m.name = name;
  m.kind = MetricKind::kScalar;
  m.value = value;
  m.unit = unit;
  m.better = Better::kLower;
  return m;
}

Metric Counter(const std::string& name, double count, double duration_s, const std::string& unit) {
  Metric m = Scalar(name, count, unit);
  m.kind = MetricKind::kCounter;
  m.duration_s = duration_s;
  return m;
}

double Seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

// argv[0] as exec would find it: a path with a '/' (relative to cwd), else the
// first executable in PATH; empty when there is none.
std::string ResolveExecutable(const std::string& name, const std::string& cwd) {
  namespace fs = std::filesystem;
  if (name.find('/') != std::string::npos) {
    fs::path p = name;
    if (p.is_relative() && !cwd.empty()) p = fs::path(cwd) / p;
    std::error_code ec;
    fs::path abs = fs::absolute(p, ec);
    return ec ? p.string() : abs.lexically_normal().string();
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return "";
}

// The probes of one scenario, attached for its whole duration.
class ScenarioProbes {
 public:
  ScenarioProbes(const ScenarioSpec& spec, const std::vector<std::string>& argv, const RunOptions& options) {
    bool workload_scope = false;
    for (const auto& p : spec.probes) workload_scope |= p.scope == "workload";
    ProbeOptions base;
    base.allowed_attach_types = options.allowed_attach_types;
    if (workload_scope) {
      tracker_ = std::make_unique<WorkloadTracker>();
      tracker_->Attach(base);
    }
    for (const auto& p : spec.probes) {
      auto probe = CreateProbe(p.name);
      if (!probe) throw InputError("probe \"" + p.name + "\" is not in the catalog");
      ProbeOptions po = base;
      po.scope = p.scope == "system" ? ProbeScope::kSystem : ProbeScope::kWorkload;
      po.params = p.params;
      if (!spec.workload.shell && !argv.empty()) po.workload_path = ResolveExecutable(argv[0], spec.workload.cwd);
      probe->Attach(po, tracker_.get());
      probes_.push_back({std::move(probe), p.scope});
    }
  }
  ~ScenarioProbes() {
    for (auto& p : probes_) p.probe->Detach();
    if (tracker_) tracker_->Detach();
  }

  void Prepare(pid_t pid) {
    if (tracker_) {
      tracker_->Clear();
      tracker_->Track(pid);
    }
    for (auto& p : probes_) p.probe->Reset();
  }
  void MeasureProbeCost(bool on) {
    if (on && !stats_) stats_.emplace();
    if (!on) stats_.reset();
  }
  void Collect(double duration_s, MetricSet& out) {
    for (auto& p : probes_) p.probe->Collect(duration_s, out);
  }
  // Counts a repetition's CPU time towards the probes' cost share when the
  // run-time stats were on during it.
  void CountWorkloadCpu(const Repetition& rep) {
    auto cpu = rep.metrics.find("workload.cpu_time");
    if (stats_ && stats_->enabled() && cpu != rep.metrics.end()) {
      workload_cpu_ns_ += static_cast<uint64_t>(cpu->second.value * 1e9);
    }
  }
  // Every probe's report, and the tracker's (its fork/exit hooks cost too).
  std::vector<ProbeReport> Reports() const {
    std::vector<ProbeReport> out;
    if (tracker_) {
      out.push_back(tracker_->Report());
    }
    for (const auto& p : probes_) {
      ProbeReport r = p.probe->Report();
      r.scope = p.scope;
      out.push_back(std::move(r));
    }
    for (auto& r : out) r.workload_cpu_ns = workload_cpu_ns_;
    return out;
  }

 private:
  struct Attached {
    std::unique_ptr<Probe> probe;
    std::string scope;
  };
  // BPF run-time stats cost two clock reads per program run, so they are on
  // only while the warm-up runs (or, without warm-up, throughout): the probe
  // cost is measured without distorting the measured repetitions.
  std::optional<BpfStatsEnabler> stats_;
  std::unique_ptr<WorkloadTracker> tracker_;
  std::vector<Attached> probes_;
  uint64_t workload_cpu_ns_ = 0;
};

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

// One fresh process run of the workload under the attached probes.
Repetition RunRepetition(const ScenarioSpec& spec, const WorkloadAdapter& adapter,
                         const std::vector<std::string>& argv, ScenarioProbes& probes, const RunOptions& options) {
  HeldProcess process(argv, spec.workload.env, spec.workload.cwd);
  probes.Prepare(process.pid());
  const std::optional<CpuTimes> host_before = ReadCpuTimes();
  process.Release();
  ProcessOutcome outcome = process.Wait(spec.timeout_s, options.stop);
  const std::optional<CpuTimes> host_after = ReadCpuTimes();
  Repetition rep;
  rep.exit_status = outcome.status();
  if (!outcome.succeeded()) {
    rep.failure = DescribeFailure(outcome, spec.timeout_s);
    return rep;
  }
  AddRusageMetrics(outcome.usage, outcome.wall_s, rep.metrics);
  if (host_before && host_after) {
    const double cpu_s = rep.metrics["workload.cpu_time"].value;
    Metric other = Scalar(kHostOtherCpus, OtherCpus(*host_before, *host_after, cpu_s, outcome.wall_s), "cpus");
    other.better = Better::kNone;
    rep.metrics[kHostOtherCpus] = std::move(other);
  }
  probes.Collect(outcome.wall_s, rep.metrics);
  WorkloadOutput parsed = adapter.ParseOutput(outcome.stdout_text, spec.workload);
  for (auto& [name, m] : parsed.metrics) rep.metrics[name] = std::move(m);
  if (parsed.ops) {
    for (auto& [name, m] : rep.metrics) {
      if (m.kind == MetricKind::kCounter) m.ops = parsed.ops;
    }
  }
  return rep;
}

ScenarioResult RunScenario(const ScenarioSpec& spec, const RunOptions& options) {
  ScenarioResult result;
  result.name = spec.name;
  result.workload_kind = spec.workload.kind;
  result.timestamp = UtcTimestamp();
  for (const auto& c : spec.checks) {
    CheckResult check;
    check.spec = c;
    result.checks.push_back(std::move(check));
  }
  timespec t0{}, t1{};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  try {
    const WorkloadAdapter* adapter = FindAdapter(spec.workload.kind);
    if (!adapter) throw InputError("unknown workload kind \"" + spec.workload.kind + "\"");
    std::vector<std::string> argv = adapter->LaunchArgv(spec.workload);
    ScenarioProbes probes(spec, argv, options);
    int reps = options.repetitions.value_or(spec.repetitions_min);
    for (int i = -spec.warmup; i < reps; ++i) {
      if (options.stop && options.stop->load()) throw InfraError("interrupted");
      probes.MeasureProbeCost(i < 0 || spec.warmup == 0);
      Repetition rep = RunRepetition(spec, *adapter, argv, probes, options);
      probes.CountWorkloadCpu(rep);
      std::string label = i < 0 ? "warm-up " + std::to_string(i + spec.warmup + 1)
                                : "repetition " + std::to_string(i + 1);
      if (!rep.failure.empty()) throw InfraError("scenario \"" + spec.name + "\": " + label + ": workload " + rep.failure);
      if (!options.quiet) {
        auto wall = rep.metrics.find("workload.wall_time");
        std::fprintf(stderr, "perfgate: %s: %s: %.3f s\n", spec.name.c_str(), label.c_str(),
                     wall == rep.metrics.end() ? 0.0 : wall->second.value);
      }
      if (i < 0) continue;
      rep.index = i;
      result.repetitions.push_back(std::move(rep));
    }
    result.probes = probes.Reports();
  } catch (const Error& e) {
    if (e.code() == ExitCode::kBadInput) throw;
    result.error = e.what();
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  result.duration_s = static_cast<double>(t1.tv_sec - t0.tv_sec) + static_cast<double>(t1.tv_nsec - t0.tv_nsec) / 1e9;
  return result;
}

}  // namespace

void AddRusageMetrics(const ::rusage& u, double wall_s, MetricSet& out) {
  out["workload.wall_time"] = Scalar("workload.wall_time", wall_s, "s");
  out["workload.cpu_time"] = Scalar("workload.cpu_time", Seconds(u.ru_utime) + Seconds(u.ru_stime), "s");
  out["workload.max_rss"] = Scalar("workload.max_rss", static_cast<double>(u.ru_maxrss) * 1024.0, "bytes");
  out["workload.page_faults"] =
      Counter("workload.page_faults", static_cast<double>(u.ru_minflt + u.ru_majflt), wall_s, "count");
  out["workload.context_switches"] =
      Counter("workload.context_switches", static_cast<double>(u.ru_nvcsw + u.ru_nivcsw), wall_s, "count");
}

RunResults RunSuite(const Suite& suite, const RunOptions& options) {
  RunResults results;
  results.suite = suite.name;
  results.suite_file = suite.file;
  results.environment = CaptureEnvironment();
  for (const auto& name : options.scenarios) {
    bool found = false;
    for (const auto& s : suite.scenarios) found |= s.name == name;
    if (!found) throw InputError(suite.file + ": no scenario named \"" + name + "\"");
  }
  for (const auto& spec : suite.scenarios) {
    if (!options.scenarios.empty() &&
        std::find(options.scenarios.begin(), options.scenarios.end(), spec.name) == options.scenarios.end()) {
      continue;
    }
    if (options.stop && options.stop->load()) {
      results.partial = true;
      break;
    }
    results.scenarios.push_back(RunScenario(spec, options));
    if (options.stop && options.stop->load()) results.partial = true;
    if (options.on_scenario_done) options.on_scenario_done(results);
  }
  return results;
}

}  // namespace perfgate
