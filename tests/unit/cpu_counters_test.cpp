// The cpu probe's pure side: its two counter sets, and turning the counting
// events' readings into metrics, scaled where the PMU multiplexed them.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <set>
#include <string>
#include <vector>

#include "probes/cpu.h"
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

}  // namespace
}  // namespace perfgate
