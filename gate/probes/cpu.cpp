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

#include "base/error.h"
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

namespace {

class KernelCounters final : public PerfCounterSource {
 public:
  int Open(const perf_event_attr& attr, pid_t pid, int cpu) override {
    return static_cast<int>(syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
  }
  bool Read(int fd, CounterReading& reading) override {
    uint64_t values[3] = {};
    const ssize_t n = read(fd, values, sizeof(values));
    if (n != static_cast<ssize_t>(sizeof(values))) {
      if (n >= 0) errno = EIO;  // a short read: not a counting event of this format
      return false;
    }
    reading = {values[0], values[1], values[2]};
    return true;
  }
  void Close(int fd) override { close(fd); }
};

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

}  // namespace

PerfCounterSource& KernelPerfCounters() {
  static KernelCounters kernel;
  return kernel;
}

CpuCounterChoice ChooseCpuCounters(PerfCounterSource& source) {
  // User-space instructions: what perf_event_paranoid 2 still lets a user count.
  const std::vector<CpuCounter>& hardware = CpuCounters(CpuCounterSet::kHardware);
  const auto user = std::find_if(hardware.begin(), hardware.end(), [](const CpuCounter& c) {
    return c.config == PERF_COUNT_HW_INSTRUCTIONS && c.user_only;
  });
  perf_event_attr attr = CountingAttributes(*user);
  attr.disabled = 1;
  const int fd = source.Open(attr, 0, -1);
  if (fd >= 0) {
    source.Close(fd);
    return {CpuCounterSet::kHardware, ""};
  }
  const int err = errno;
  const std::string open = "perf_event_open(hardware instructions): " + ErrnoText(err);
  // The kernel's answer when no PMU driver registered the hardware events.
  if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
    return {CpuCounterSet::kSoftware,
            "no hardware PMU (" + open + "): a virtual machine without a virtual PMU, or a CPU without a PMU driver"};
  return {CpuCounterSet::kSoftware, "hardware counters not usable: " + open};
}

CpuCounterChoice AutoCpuCounters() {
  static const CpuCounterChoice choice = ChooseCpuCounters(KernelPerfCounters());
  return choice;
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

// On a process held before exec: counting starts at its exec (not in
// perfgate's code before it), and every thread and process it creates
// inherits the event, whose count then includes theirs.
int OpenOnProcess(PerfCounterSource& source, const CpuCounter& counter, pid_t pid) {
  perf_event_attr attr = CountingAttributes(counter);
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  attr.inherit = 1;
  return source.Open(attr, pid, -1);
}

int OpenOnCpu(PerfCounterSource& source, const CpuCounter& counter, int cpu) {
  return source.Open(CountingAttributes(counter), -1, cpu);
}

// The set a suite's `counters` asks for on this host, why the hardware one
// was passed over (for the report's hooks), and the other set's metrics
// with why they are not counted and what to do (for a check on one).
struct CounterSetChoice {
  CpuCounterSet set = CpuCounterSet::kSoftware;
  std::vector<std::string> rejected;
  UnavailableMetrics unavailable;
};

CounterSetChoice CounterSetFrom(PerfCounterSource& source, const nlohmann::json& params) {
  const std::string wanted = params.contains("counters") && params.at("counters").is_string()
                                 ? params.at("counters").get<std::string>()
                                 : "auto";
  if (wanted != "auto" && wanted != "hardware" && wanted != "software")
    throw InputError(std::string(kCpuWhat) +
                     ": parameter \"counters\" must be \"auto\", \"hardware\" or \"software\", not " +
                     params.at("counters").dump());
  CounterSetChoice out;
  const auto other_metrics = [](CpuCounterSet other) {
    std::vector<std::string> metrics;
    for (const CpuCounter& c : CpuCounters(other)) metrics.push_back(c.metric);
    return metrics;
  };
  if (wanted == "software") {
    out.unavailable = {other_metrics(CpuCounterSet::kHardware),
                       "the suite sets \"counters\": \"software\", so it counts software events",
                       "set \"counters\" to \"auto\" to count hardware events where the host has a PMU"};
    return out;
  }
  const CpuCounterChoice choice = ChooseCpuCounters(source);
  if (choice.set == CpuCounterSet::kHardware) {
    out.set = CpuCounterSet::kHardware;
    out.unavailable = {other_metrics(CpuCounterSet::kSoftware), "this host has a PMU, so it counts hardware events",
                       "set \"counters\": \"software\" to count the software events on every host"};
    return out;
  }
  if (wanted == "hardware")
    throw InfraError(std::string(kCpuWhat) + ": \"counters\": \"hardware\" but " + choice.why_not_hardware);
  out.rejected.push_back("hardware: " + choice.why_not_hardware);
  out.unavailable = {other_metrics(CpuCounterSet::kHardware),
                     choice.why_not_hardware + ", so it counts software events",
                     "count instructions with --instrument (instr.total, under Valgrind) or on a host with a PMU"};
  return out;
}

class CpuCountersProbe final : public Probe {
 public:
  CpuCountersProbe() : source_(KernelPerfCounters()) {}
  explicit CpuCountersProbe(PerfCounterSource& source) : source_(source) {}
  ~CpuCountersProbe() override { CpuCountersProbe::Detach(); }
  CpuCountersProbe(const CpuCountersProbe&) = delete;
  CpuCountersProbe& operator=(const CpuCountersProbe&) = delete;
  const std::string& name() const override { return kCpuName; }

  void Attach(const ProbeOptions& options, WorkloadTracker* tracker) override {
    Detach();
    RequireAllowedAttachType(options, AttachType::kPerfEvent, kCpuName);
    const bool workload = options.scope == ProbeScope::kWorkload;
    if (workload && tracker == nullptr)
      throw InfraError(std::string(kCpuWhat) + ": workload scope needs a WorkloadTracker");
    CounterSetChoice choice = CounterSetFrom(source_, options.params);
    const CpuCounterSet set = choice.set;
    // Each counter opened once now (on perfgate itself, or on the first CPU),
    // so that a counter this host refuses fails the attach, not a repetition.
    for (const CpuCounter& counter : CpuCounters(set)) {
      const int fd = workload ? OpenOnProcess(source_, counter, 0) : OpenOnCpu(source_, counter, 0);
      if (fd < 0)
        throw InfraError(std::string(kCpuWhat) + ", hook " + counter.event + ": perf_event_open of the " +
                         ToString(set) + " counter: " + ErrnoText(errno));
      source_.Close(fd);
    }
    set_ = set;
    rejected_ = std::move(choice.rejected);
    unavailable_ = std::move(choice.unavailable);
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
        CounterReading reading;
        if (!source_.Read(fd, reading)) {
          const int err = errno;
          CloseEvents();
          throw InfraError(std::string(kCpuWhat) + ", hook " + counters[i].event + ": read: " + ErrnoText(err));
        }
        readings[i].push_back(reading);
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
    report.unavailable.push_back(unavailable_);
    return report;
  }

  void Detach() override {
    CloseEvents();
    attached_ = false;
    tracker_ = nullptr;
    rejected_.clear();
    unavailable_ = {};
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
        const int fd = OpenOnProcess(source_, counters[i], pid);
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
        const int fd = OpenOnCpu(source_, counters[i], cpu);
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
      for (int fd : fds) source_.Close(fd);
    }
    events_.clear();
  }

  PerfCounterSource& source_;
  bool attached_ = false;
  CpuCounterSet set_ = CpuCounterSet::kSoftware;
  std::vector<std::string> rejected_;  // "hardware: <why not>" when the software set stands in
  UnavailableMetrics unavailable_;     // the other set's metrics, and why not they
  ProbeScope scope_ = ProbeScope::kWorkload;
  WorkloadTracker* tracker_ = nullptr;
  std::vector<std::vector<int>> events_;  // per counter: one fd per workload process or CPU
};

}  // namespace

std::unique_ptr<Probe> MakeCpuCountersProbe(PerfCounterSource& source) {
  return std::make_unique<CpuCountersProbe>(source);
}

ProbeDefinition DefineCpuCountersProbe() { return DefineProbe<CpuCountersProbe>(DeclaredProbe("cpu")); }

}  // namespace perfgate
