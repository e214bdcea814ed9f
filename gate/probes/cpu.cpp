// cpu: perf_event counters in counting mode, no BPF. In workload scope one
// event per counter is opened on the held workload process (the tracker's
// process at Reset()), disabled until its exec and inherited by every thread
// and process it creates, so the count is the workload's tree from its first
// instruction; in system scope, one per counter and CPU. The events are read
// once when the repetition ends (the kernel has added the exited children's
// counts to their parent's event by then) and closed.
//
// A counter set is data (probes/cpu.h): hardware where the PMU is, software
// otherwise, or what the suite's `counters` parameter asks for. Nothing else
// differs between them.
#include "probes/cpu.h"

#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "metrics/error.h"
#include "probes/builtin_probes.h"
#include "probes/features.h"
#include "probes/hooks.h"
#include "probes/map_keys.h"
#include "probes/tracker.h"

namespace perfgate {

std::string ToString(CpuCounterSet set) { return set == CpuCounterSet::kHardware ? "hardware" : "software"; }

const std::vector<CpuCounter>& CpuCounters(CpuCounterSet set) {
  static const std::vector<CpuCounter> hardware = {
      {"cpu.instructions", "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "count"},
      {"cpu.cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "count"},
      {"cpu.branch_misses", "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "count"},
      {"cpu.cache_misses", "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "count"},
      {"cpu.instructions.user", "instructions:u", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "count", false, true},
      {"cpu.instructions.kernel", "instructions:k", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "count", true,
       false},
  };
  static const std::vector<CpuCounter> software = {
      {"cpu.task_clock", "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "ns"},
      {"cpu.context_switches", "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "count"},
      {"cpu.page_faults", "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "count"},
      {"cpu.migrations", "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "count"},
  };
  return set == CpuCounterSet::kHardware ? hardware : software;
}

CpuCounterChoice AutoCpuCounters() {
  const Feature pmu = HardwareCountersSupported();
  if (pmu.supported) return {CpuCounterSet::kHardware, ""};
  return {CpuCounterSet::kSoftware, pmu.reason};
}

std::optional<double> ScaledCount(const CounterReading& reading) {
  if (reading.time_running >= reading.time_enabled) return static_cast<double>(reading.value);
  if (reading.time_running == 0) return std::nullopt;
  return static_cast<double>(reading.value) * static_cast<double>(reading.time_enabled) /
         static_cast<double>(reading.time_running);
}

void AddCpuCounterMetrics(const std::vector<CpuCounter>& counters,
                          const std::vector<std::vector<CounterReading>>& readings, double duration_s, MetricSet& out) {
  double running_fraction = 1.0;
  for (size_t i = 0; i < counters.size() && i < readings.size(); ++i) {
    double total = 0;
    bool known = true;
    for (const CounterReading& reading : readings[i]) {
      if (reading.time_enabled > 0 && reading.time_running < reading.time_enabled) {
        running_fraction = std::min(
            running_fraction, static_cast<double>(reading.time_running) / static_cast<double>(reading.time_enabled));
      }
      const std::optional<double> scaled = ScaledCount(reading);
      if (!scaled)
        known = false;
      else
        total += *scaled;
    }
    if (known) out[counters[i].metric] = CounterMetric(counters[i].metric, counters[i].unit, total, duration_s);
  }
  out[kCpuRunningFraction] = ScalarMetric(kCpuRunningFraction, running_fraction, "fraction", Better::kNone);
}

namespace {

const std::string kCpuName = "cpu";
const char* const kCpuWhat = "probe cpu";

// Every counter is opened with these attributes; only type and config differ.
perf_event_attr CountingAttributes(const CpuCounter& counter) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = counter.type;
  attr.config = counter.config;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  attr.exclude_hv = 1;
  attr.exclude_user = counter.kernel_only ? 1 : 0;
  attr.exclude_kernel = counter.user_only ? 1 : 0;
  return attr;
}

// On a process held before exec: counting starts at its exec (not in
// perfgate's code before it), and every thread and process it creates
// inherits the event, whose count then includes theirs.
int OpenOnProcess(const CpuCounter& counter, pid_t pid) {
  perf_event_attr attr = CountingAttributes(counter);
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  attr.inherit = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

int OpenOnCpu(const CpuCounter& counter, int cpu) {
  perf_event_attr attr = CountingAttributes(counter);
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

CpuCounterSet CounterSetFrom(const nlohmann::json& params, std::vector<std::string>& rejected) {
  const std::string wanted = params.contains("counters") && params.at("counters").is_string()
                                 ? params.at("counters").get<std::string>()
                                 : "auto";
  if (wanted == "software") return CpuCounterSet::kSoftware;
  if (wanted != "auto" && wanted != "hardware")
    throw InputError(std::string(kCpuWhat) +
                     ": parameter \"counters\" must be \"auto\", \"hardware\" or \"software\", not " +
                     params.at("counters").dump());
  const CpuCounterChoice choice = AutoCpuCounters();
  if (choice.set == CpuCounterSet::kHardware) return choice.set;
  if (wanted == "hardware")
    throw InfraError(std::string(kCpuWhat) + ": \"counters\": \"hardware\" but " + choice.why_not_hardware);
  rejected.push_back("hardware: " + choice.why_not_hardware);
  return CpuCounterSet::kSoftware;
}

class CpuCountersProbe final : public Probe {
 public:
  ~CpuCountersProbe() override { CpuCountersProbe::Detach(); }
  const std::string& name() const override { return kCpuName; }

  void Attach(const ProbeOptions& options, WorkloadTracker* tracker) override {
    Detach();
    RequireAllowedAttachType(options, AttachType::kPerfEvent, kCpuName);
    const bool workload = options.scope == ProbeScope::kWorkload;
    if (workload && tracker == nullptr)
      throw InfraError(std::string(kCpuWhat) + ": workload scope needs a WorkloadTracker");
    std::vector<std::string> rejected;
    const CpuCounterSet set = CounterSetFrom(options.params, rejected);
    // Each counter opened once now (on perfgate itself, or on the first CPU),
    // so that a counter this host refuses fails the attach, not a repetition.
    for (const CpuCounter& counter : CpuCounters(set)) {
      const int fd = workload ? OpenOnProcess(counter, 0) : OpenOnCpu(counter, 0);
      if (fd < 0)
        throw InfraError(std::string(kCpuWhat) + ", hook " + counter.event + ": perf_event_open of the " +
                         ToString(set) + " counter: " + ErrnoText(errno));
      close(fd);
    }
    set_ = set;
    rejected_ = std::move(rejected);
    scope_ = options.scope;
    tracker_ = workload ? tracker : nullptr;
    attached_ = true;
  }

  void Reset() override {
    if (!attached_) throw InfraError(std::string(kCpuWhat) + ": used before Attach()");
    CloseEvents();
    events_.resize(CpuCounters(set_).size());
    try {
      if (tracker_ != nullptr) {
        OpenOnWorkload();
      } else {
        OpenOnEveryCpu();
      }
    } catch (...) {
      CloseEvents();
      throw;
    }
  }

  void Collect(double duration_s, MetricSet& out) override {
    if (events_.empty()) throw InfraError(std::string(kCpuWhat) + ": Collect() without Reset()");
    const std::vector<CpuCounter>& counters = CpuCounters(set_);
    std::vector<std::vector<CounterReading>> readings(counters.size());
    for (size_t i = 0; i < counters.size(); ++i) {
      for (int fd : events_[i]) {
        uint64_t values[3] = {};
        if (read(fd, values, sizeof(values)) != static_cast<ssize_t>(sizeof(values))) {
          const int err = errno;
          CloseEvents();
          throw InfraError(std::string(kCpuWhat) + ", hook " + counters[i].event + ": read: " + ErrnoText(err));
        }
        readings[i].push_back({values[0], values[1], values[2]});
      }
    }
    CloseEvents();
    // A workload's events are enabled at its exec, so only one that never
    // counted has none enabled: zeros would read as a great improvement.
    const bool never_enabled = std::all_of(readings.begin(), readings.end(), [](const auto& events) {
      return std::all_of(events.begin(), events.end(), [](const CounterReading& r) { return r.time_enabled == 0; });
    });
    if (tracker_ != nullptr && never_enabled)
      throw InfraError(std::string(kCpuWhat) +
                       ": the workload's counters never ran: it did not exec, or it executed a set-user-ID or "
                       "set-group-ID program, whose counters the kernel drops at exec");
    AddCpuCounterMetrics(counters, readings, duration_s, out);
  }

  ProbeReport Report() const override {
    ProbeReport report = UnattachedReport(kCpuName, scope_);
    if (!attached_) return report;
    for (const CpuCounter& counter : CpuCounters(set_)) {
      HookChoice hook;
      hook.hook = counter.event;
      hook.attach_type = ToString(AttachType::kPerfEvent);
      hook.target = ToString(set_) + ":" + counter.event;
      hook.rejected = rejected_;
      report.hooks.push_back(std::move(hook));
    }
    return report;
  }

  void Detach() override {
    CloseEvents();
    attached_ = false;
    tracker_ = nullptr;
    rejected_.clear();
  }

 private:
  // The tracker holds the held workload process (and no thread of it yet):
  // its entries whose thread is the process itself.
  void OpenOnWorkload() {
    std::vector<pid_t> processes;
    for (const auto& [tid, tgid] : MapEntries<uint32_t, uint32_t>(tracker_->map_fd())) {
      if (tid == tgid) processes.push_back(static_cast<pid_t>(tid));
    }
    if (processes.empty()) throw InfraError(std::string(kCpuWhat) + ": no workload process is tracked to count");
    const std::vector<CpuCounter>& counters = CpuCounters(set_);
    for (size_t i = 0; i < counters.size(); ++i) {
      for (pid_t pid : processes) {
        const int fd = OpenOnProcess(counters[i], pid);
        if (fd < 0)
          throw InfraError(std::string(kCpuWhat) + ", hook " + counters[i].event + ": perf_event_open on pid " +
                           std::to_string(pid) + ": " + ErrnoText(errno));
        events_[i].push_back(fd);
      }
    }
  }

  void OpenOnEveryCpu() {
    const int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) throw InfraError(std::string(kCpuWhat) + ": cannot count possible CPUs: " + ErrnoText(-cpus));
    const std::vector<CpuCounter>& counters = CpuCounters(set_);
    for (size_t i = 0; i < counters.size(); ++i) {
      for (int cpu = 0; cpu < cpus; ++cpu) {
        const int fd = OpenOnCpu(counters[i], cpu);
        if (fd < 0 && errno == ENODEV && cpu > 0) continue;  // an offline CPU
        if (fd < 0)
          throw InfraError(std::string(kCpuWhat) + ", hook " + counters[i].event + ": perf_event_open on CPU " +
                           std::to_string(cpu) + ": " + ErrnoText(errno));
        events_[i].push_back(fd);
      }
    }
  }

  void CloseEvents() {
    for (auto& fds : events_) {
      for (int fd : fds) close(fd);
    }
    events_.clear();
  }

  bool attached_ = false;
  CpuCounterSet set_ = CpuCounterSet::kSoftware;
  std::vector<std::string> rejected_;  // "hardware: <why not>" when the software set stands in
  ProbeScope scope_ = ProbeScope::kWorkload;
  WorkloadTracker* tracker_ = nullptr;
  std::vector<std::vector<int>> events_;  // per counter: one fd per workload process or CPU
};

}  // namespace

ProbeDefinition DefineCpuCountersProbe() { return DefineProbe<CpuCountersProbe>(DeclaredProbe("cpu")); }

}  // namespace perfgate
