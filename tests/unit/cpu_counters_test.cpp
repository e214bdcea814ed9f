// The cpu probe's pure side: its two counter sets, turning the counting
// events' readings into metrics, scaled where the PMU multiplexed them, and
// its choice of set on a host with a PMU and on one without (a synthetic
// PMU in place of the kernel's perf events).
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "metrics/results.h"
#include "probes/cpu.h"
#include "probes/features.h"
#include "probes/probe.h"

namespace perfgate {
namespace {

std::vector<CpuCounter> Software() { return CpuCounters(CpuCounterSet::kSoftware); }

TEST(CpuCounters, HardwareSetCountsInstructionsCyclesAndMisses) {
  std::vector<std::string> metrics;
  for (const auto& c : CpuCounters(CpuCounterSet::kHardware)) {
    EXPECT_EQ(c.type, PERF_TYPE_HARDWARE) << c.event;
    EXPECT_EQ(c.unit, "count") << c.event;
    metrics.push_back(c.metric);
  }
  EXPECT_EQ(metrics,
            (std::vector<std::string>{"cpu.instructions", "cpu.cycles", "cpu.branch_misses", "cpu.cache_misses",
                                      "cpu.instructions.user", "cpu.instructions.kernel"}));
}

// The workload's own instructions apart from the kernel's on its behalf: the
// same event, counted in user space only and in the kernel only.
TEST(CpuCounters, InstructionsAreAlsoCountedInUserSpaceAndInTheKernelSeparately) {
  const std::vector<CpuCounter>& hardware = CpuCounters(CpuCounterSet::kHardware);
  ASSERT_EQ(hardware.size(), 6u);
  EXPECT_FALSE(hardware[0].user_only || hardware[0].kernel_only);
  EXPECT_TRUE(hardware[4].user_only);
  EXPECT_FALSE(hardware[4].kernel_only);
  EXPECT_TRUE(hardware[5].kernel_only);
  EXPECT_FALSE(hardware[5].user_only);
  for (size_t i : {0, 4, 5}) EXPECT_EQ(hardware[i].config, PERF_COUNT_HW_INSTRUCTIONS);
}

TEST(CpuCounters, SoftwareSetCountsTaskClockSwitchesFaultsAndMigrations) {
  std::vector<std::string> metrics;
  for (const auto& c : Software()) {
    EXPECT_EQ(c.type, PERF_TYPE_SOFTWARE) << c.event;
    metrics.push_back(c.metric);
  }
  EXPECT_EQ(metrics,
            (std::vector<std::string>{"cpu.task_clock", "cpu.context_switches", "cpu.page_faults", "cpu.migrations"}));
  EXPECT_EQ(Software()[0].unit, "ns");  // task-clock counts nanoseconds on the CPU
}

TEST(CpuCounters, CatalogListsEveryMetricOfBothSets) {
  const ProbeInfo* cpu = nullptr;
  for (const auto& info : ProbeCatalog()) {
    if (info.name == "cpu") cpu = &info;
  }
  ASSERT_NE(cpu, nullptr);
  std::set<std::string> listed;
  for (const MetricDeclaration& d : cpu->metrics) listed.insert(d.name);
  for (CpuCounterSet set : {CpuCounterSet::kHardware, CpuCounterSet::kSoftware}) {
    for (const auto& c : CpuCounters(set)) EXPECT_TRUE(listed.count(c.metric)) << c.metric;
  }
  EXPECT_TRUE(listed.count(kCpuRunningFraction));
  ASSERT_EQ(cpu->parameters.size(), 1u);
  EXPECT_EQ(cpu->parameters[0].name, "counters");
}

TEST(ScaledCount, ExactWhenTheCounterRanAllTheTimeItWasEnabled) {
  EXPECT_EQ(ScaledCount({12345, 1000, 1000}), 12345.0);
  EXPECT_EQ(ScaledCount({0, 0, 0}), 0.0);  // never enabled: the workload never ran, nothing to count
}

TEST(ScaledCount, ScalesAMultiplexedCountToTheEnabledTime) {
  EXPECT_DOUBLE_EQ(*ScaledCount({1000, 400, 100}), 4000.0);
  EXPECT_DOUBLE_EQ(*ScaledCount({3, 3, 2}), 4.5);
}

TEST(ScaledCount, UnknownWhenEnabledButNeverOnThePmu) { EXPECT_FALSE(ScaledCount({0, 500, 0}).has_value()); }

TEST(CpuCounterMetrics, CountersSumTheirEventsAsCountersOverTheRepetition) {
  MetricSet out;
  // task-clock on two CPUs (system scope), the others on one process.
  AddCpuCounterMetrics(Software(), {{{700, 10, 10}, {300, 10, 10}}, {{5, 9, 9}}, {{64, 9, 9}}, {{0, 9, 9}}}, 2.0, out);
  const Metric& clock = out.at("cpu.task_clock");
  EXPECT_EQ(clock.kind, MetricKind::kCounter);
  EXPECT_EQ(clock.unit, "ns");
  EXPECT_EQ(clock.value, 1000);
  EXPECT_EQ(clock.duration_s, 2.0);
  EXPECT_EQ(out.at("cpu.context_switches").value, 5);
  EXPECT_EQ(out.at("cpu.context_switches").unit, "count");
  EXPECT_EQ(out.at("cpu.page_faults").value, 64);
  EXPECT_EQ(out.at("cpu.migrations").value, 0);
  const Metric& fraction = out.at(kCpuRunningFraction);
  EXPECT_EQ(fraction.kind, MetricKind::kScalar);
  EXPECT_EQ(fraction.value, 1.0);
  EXPECT_EQ(fraction.better, Better::kNone);
}

TEST(CpuCounterMetrics, MultiplexedCountsAreScaledAndTheLeastRunningShareReported) {
  MetricSet out;
  const auto hardware = CpuCounters(CpuCounterSet::kHardware);
  AddCpuCounterMetrics(hardware, {{{1000, 100, 100}}, {{500, 100, 50}}, {{30, 100, 25}}, {{7, 100, 100}}}, 1.0, out);
  EXPECT_EQ(out.at("cpu.instructions").value, 1000);
  EXPECT_DOUBLE_EQ(out.at("cpu.cycles").value, 1000);
  EXPECT_DOUBLE_EQ(out.at("cpu.branch_misses").value, 120);
  EXPECT_EQ(out.at("cpu.cache_misses").value, 7);
  EXPECT_DOUBLE_EQ(out.at(kCpuRunningFraction).value, 0.25);
}

TEST(CpuCounterMetrics, ACounterThatNeverRanHasNoMetricRatherThanAZero) {
  MetricSet out;
  const auto hardware = CpuCounters(CpuCounterSet::kHardware);
  AddCpuCounterMetrics(hardware, {{{1000, 100, 100}}, {{0, 100, 0}}, {{1, 50, 50}, {0, 50, 0}}, {{7, 100, 100}}}, 1.0,
                       out);
  EXPECT_TRUE(out.count("cpu.instructions"));
  EXPECT_FALSE(out.count("cpu.cycles"));
  EXPECT_FALSE(out.count("cpu.branch_misses"));  // one of its events is unknown, so is the sum
  EXPECT_TRUE(out.count("cpu.cache_misses"));
  EXPECT_EQ(out.at(kCpuRunningFraction).value, 0.0);
}

// ---- the choice of counters ------------------------------------------------

// Perf events as a host answers them: hardware events open where it has a
// PMU and fail with `hardware_errno` where it has none (0: a PMU). Each
// event reads a count of its own kind, the same on every CPU: 1000
// instructions, 700 of them in user space, 2000 cycles, 400 ns on the CPU.
class SyntheticPmu final : public PerfCounterSource {
 public:
  explicit SyntheticPmu(int hardware_errno) : hardware_errno_(hardware_errno) {}

  int Open(const perf_event_attr& attr, pid_t, int) override {
    ++opens_;
    if (attr.type == PERF_TYPE_HARDWARE && hardware_errno_ != 0) {
      errno = hardware_errno_;
      return -1;
    }
    const int fd = next_fd_++;
    open_[fd] = attr;
    return fd;
  }
  bool Read(int fd, CounterReading& reading) override {
    auto it = open_.find(fd);
    if (it == open_.end()) {
      errno = EBADF;
      return false;
    }
    reading = {CountOf(it->second), 1000, 1000};
    return true;
  }
  void Close(int fd) override { closed_wrong_ += open_.erase(fd) == 1 ? 0 : 1; }

  size_t open() const { return open_.size(); }
  int opens() const { return opens_; }
  int closed_wrong() const { return closed_wrong_; }

 private:
  static uint64_t CountOf(const perf_event_attr& attr) {
    if (attr.type == PERF_TYPE_SOFTWARE) return attr.config == PERF_COUNT_SW_TASK_CLOCK ? 400 : 3;
    if (attr.config == PERF_COUNT_HW_CPU_CYCLES) return 2000;
    if (attr.config != PERF_COUNT_HW_INSTRUCTIONS) return 5;
    if (attr.exclude_kernel) return 700;
    if (attr.exclude_user) return 300;
    return 1000;
  }

  int hardware_errno_;
  int next_fd_ = 100;
  int opens_ = 0;
  int closed_wrong_ = 0;
  std::map<int, perf_event_attr> open_;
};

struct ProbeRun {
  MetricSet metrics;
  ProbeReport report;
};

// One repetition of the cpu probe over `pmu` in system scope (one event per
// counter and CPU), as the runner drives it.
ProbeRun RunProbe(SyntheticPmu& pmu, const nlohmann::json& params = nlohmann::json::object()) {
  std::unique_ptr<Probe> probe = MakeCpuCountersProbe(pmu);
  ProbeOptions options;
  options.scope = ProbeScope::kSystem;
  options.params = params;
  probe->Attach(options, nullptr);
  probe->Reset();
  ProbeRun run;
  probe->Collect(1.0, run.metrics);
  run.report = probe->Report();
  return run;
}

double Cpus() { return static_cast<double>(libbpf_num_possible_cpus()); }

std::vector<std::string> MetricsOf(CpuCounterSet set) {
  std::vector<std::string> metrics;
  for (const CpuCounter& c : CpuCounters(set)) metrics.push_back(c.metric);
  return metrics;
}

TEST(CpuCounterChoice, WithAPmuTheProbeCountsHardwareInstructionsInAllInUserSpaceAndInTheKernel) {
  SyntheticPmu pmu(0);
  const CpuCounterChoice choice = ChooseCpuCounters(pmu);
  EXPECT_EQ(choice.set, CpuCounterSet::kHardware);
  EXPECT_EQ(choice.why_not_hardware, "");
  EXPECT_EQ(pmu.open(), 0u);  // the probe's open is closed again

  const ProbeRun run = RunProbe(pmu);
  EXPECT_EQ(run.metrics.at("cpu.instructions").value, 1000 * Cpus());
  EXPECT_EQ(run.metrics.at("cpu.instructions.user").value, 700 * Cpus());
  EXPECT_EQ(run.metrics.at("cpu.instructions.kernel").value, 300 * Cpus());
  EXPECT_EQ(run.metrics.at("cpu.cycles").value, 2000 * Cpus());
  EXPECT_EQ(run.metrics.at("cpu.instructions").kind, MetricKind::kCounter);
  EXPECT_FALSE(run.metrics.count("cpu.task_clock"));
  ASSERT_EQ(run.report.hooks.size(), CpuCounters(CpuCounterSet::kHardware).size());
  EXPECT_EQ(run.report.hooks[0].target, "hardware:instructions");
  EXPECT_TRUE(run.report.hooks[0].rejected.empty());
  // The software set's metrics are what a check cannot have here, and why.
  ASSERT_EQ(run.report.unavailable.size(), 1u);
  EXPECT_EQ(run.report.unavailable[0].metrics, MetricsOf(CpuCounterSet::kSoftware));
  EXPECT_NE(run.report.unavailable[0].reason.find("this host has a PMU"), std::string::npos);
  EXPECT_NE(run.report.unavailable[0].instead.find("\"counters\": \"software\""), std::string::npos);
  EXPECT_EQ(pmu.open(), 0u);
  EXPECT_EQ(pmu.closed_wrong(), 0);

  // "hardware" takes the same set; "software" the software one on any host.
  EXPECT_EQ(RunProbe(pmu, {{"counters", "hardware"}}).metrics.at("cpu.instructions").value, 1000 * Cpus());
  const ProbeRun software = RunProbe(pmu, {{"counters", "software"}});
  EXPECT_EQ(software.metrics.at("cpu.task_clock").value, 400 * Cpus());
  EXPECT_FALSE(software.metrics.count("cpu.instructions"));
  ASSERT_EQ(software.report.unavailable.size(), 1u);
  EXPECT_EQ(software.report.unavailable[0].metrics, MetricsOf(CpuCounterSet::kHardware));
  EXPECT_NE(software.report.unavailable[0].reason.find("the suite sets \"counters\": \"software\""), std::string::npos);
}

// What the kernel answers where no PMU driver registered the hardware events.
TEST(CpuCounterChoice, WithoutAPmuTheProbeCountsSoftwareEventsAndSaysWhy) {
  for (int err : {EOPNOTSUPP, ENOENT, ENODEV}) {
    SCOPED_TRACE(strerror(err));
    SyntheticPmu pmu(err);
    const CpuCounterChoice choice = ChooseCpuCounters(pmu);
    EXPECT_EQ(choice.set, CpuCounterSet::kSoftware);
    EXPECT_EQ(choice.why_not_hardware.rfind("no hardware PMU (perf_event_open(hardware instructions): ", 0), 0u)
        << choice.why_not_hardware;
    EXPECT_NE(choice.why_not_hardware.find(ErrnoText(err)), std::string::npos) << choice.why_not_hardware;

    const ProbeRun run = RunProbe(pmu);
    EXPECT_EQ(run.metrics.at("cpu.task_clock").value, 400 * Cpus());
    for (const std::string& metric : MetricsOf(CpuCounterSet::kHardware)) EXPECT_FALSE(run.metrics.count(metric));
    ASSERT_FALSE(run.report.hooks.empty());
    EXPECT_EQ(run.report.hooks[0].target, "software:task-clock");
    EXPECT_EQ(run.report.hooks[0].rejected, std::vector<std::string>{"hardware: " + choice.why_not_hardware});
    // Why cpu.instructions is missing, for a check on it: the reason and what to do.
    ASSERT_EQ(run.report.unavailable.size(), 1u);
    const UnavailableMetrics& hardware = run.report.unavailable[0];
    EXPECT_EQ(hardware.metrics, MetricsOf(CpuCounterSet::kHardware));
    EXPECT_EQ(hardware.reason, choice.why_not_hardware + ", so it counts software events");
    EXPECT_NE(hardware.instead.find("--instrument"), std::string::npos) << hardware.instead;
    EXPECT_EQ(pmu.open(), 0u);
    EXPECT_EQ(pmu.closed_wrong(), 0);

    // Asked for by name, the hardware set fails the attach (exit 3) with the same reason.
    std::unique_ptr<Probe> probe = MakeCpuCountersProbe(pmu);
    ProbeOptions options;
    options.scope = ProbeScope::kSystem;
    options.params = {{"counters", "hardware"}};
    try {
      probe->Attach(options, nullptr);
      ADD_FAILURE() << "attached hardware counters without a PMU";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kInfra);
      EXPECT_NE(std::string(e.what()).find("probe cpu: \"counters\": \"hardware\" but " + choice.why_not_hardware),
                std::string::npos)
          << e.what();
    }
  }
}

// A PMU the kernel will not let this process use is not a missing PMU: the
// reason says what the kernel answered instead.
TEST(CpuCounterChoice, ARefusedHardwareCounterIsNotReportedAsAMissingPmu) {
  SyntheticPmu pmu(EACCES);
  const CpuCounterChoice choice = ChooseCpuCounters(pmu);
  EXPECT_EQ(choice.set, CpuCounterSet::kSoftware);
  EXPECT_EQ(choice.why_not_hardware,
            "hardware counters not usable: perf_event_open(hardware instructions): " + ErrnoText(EACCES));
  EXPECT_EQ(pmu.opens(), 1);
}

}  // namespace
}  // namespace perfgate
