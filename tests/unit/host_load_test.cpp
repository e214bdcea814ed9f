#include "run/host_load.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace perfgate {
namespace {

TEST(HostLoad, ParsesTheAggregateCpuLineIncludingSteal) {
  const std::string stat =
      "cpu  100 5 50 1000 20 3 2 10 7 0\n"
      "cpu0 50 2 25 500 10 1 1 5 0 0\n"
      "intr 12345\n";
  std::optional<CpuTimes> t = ParseProcStat(stat);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->busy_ticks, 100u + 5 + 50 + 3 + 2 + 10);  // idle, iowait and guest excluded
  EXPECT_EQ(t->steal_ticks, 10u);
  EXPECT_FALSE(ParseProcStat("intr 1\n").has_value());
  EXPECT_FALSE(ParseProcStat("cpu  1 2\n").has_value());
}

TEST(HostLoad, OtherCpusSubtractsTheWorkloadAndNeverGoesNegative) {
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  CpuTimes before{1000, 0};
  CpuTimes after{1000 + static_cast<uint64_t>(3 * hz), 0};     // 3 CPU-seconds busy
  EXPECT_NEAR(OtherCpus(before, after, 1.0, 2.0), 1.0, 1e-9);  // 2 of them others', over 2 s
  EXPECT_EQ(OtherCpus(before, after, 5.0, 2.0), 0.0);
  EXPECT_EQ(OtherCpus(after, before, 0.0, 2.0), 0.0);
  EXPECT_EQ(OtherCpus(before, after, 0.0, 0.0), 0.0);
  EXPECT_TRUE(ReadCpuTimes().has_value());
}

TEST(HostLoad, PressureSomeTotalIsRead) {
  EXPECT_EQ(ParsePressureSome("some avg10=0.50 avg60=0.20 avg300=0.05 total=123456\n"
                              "full avg10=0.00 avg60=0.00 avg300=0.00 total=42\n"),
            123456u);
  EXPECT_FALSE(ParsePressureSome("full avg10=0.00 total=42\n").has_value());
  EXPECT_FALSE(ParsePressureSome("some avg10=0.50\n").has_value());
  EXPECT_FALSE(ParsePressureSome("some total=x\n").has_value());
}

MetricSet Load(double other, double cpu_s, double wall_s, double steal = 0) {
  MetricSet m;
  m[kHostOtherCpus] = ScalarMetric(kHostOtherCpus, other, "cpus", Better::kNone);
  m[kHostStealCpus] = ScalarMetric(kHostStealCpus, steal, "cpus", Better::kNone);
  m["workload.cpu_time"] = ScalarMetric("workload.cpu_time", cpu_s, "s");
  m["workload.wall_time"] = ScalarMetric("workload.wall_time", wall_s, "s");
  return m;
}

TEST(HostLoad, TaintedWhenOtherWorkLeftTheWorkloadNoCpu) {
  // Two CPUs, the workload busy on one: other work on the other one is fine.
  EXPECT_EQ(TaintOf(Load(0.8, 1.0, 1.0), 2), "");
  // ... but other work beyond it leaves no CPU idle.
  EXPECT_EQ(TaintOf(Load(1.3, 0.9, 1.0), 2), "other work kept 1.30 of 2 CPUs busy, leaving 0.00 idle");
  // A workload that fills both CPUs itself, with a little other work: not the neighbours' doing.
  EXPECT_EQ(TaintOf(Load(0.3, 1.9, 1.0), 2), "");
  EXPECT_EQ(TaintOf(Load(0.0, 0.1, 1.0, 0.4), 2), "the hypervisor stole 0.40 CPUs");
  EXPECT_EQ(TaintOf(MetricSet{}, 2), "") << "the host's numbers missing";
}

// A neighbour on the workload's CPU with the other CPU idle: host.other_cpus
// (1 CPU busy, 0.5 idle) does not see it; the waits behind it do.
TEST(HostLoad, TaintedWhenTheWorkloadWaitedForCpusRunningOtherTasksBeyondTheBound) {
  MetricSet m = Load(1.0, 0.5, 1.0);
  EXPECT_EQ(TaintOf(m, 2), "");
  m[kHostRunqWaitBehindOthers] = ScalarMetric(kHostRunqWaitBehindOthers, 0.2, "s", Better::kNone);
  EXPECT_EQ(TaintOf(m, 2), "") << "within the bound: 0.20 of 1 s";
  m[kHostRunqWaitBehindOthers].value = 0.45;
  EXPECT_EQ(TaintOf(m, 2), "the workload waited 0.45 s (45 % of its wall time) for CPUs running other tasks");
  // Summed over the workload's threads, it can exceed the wall time.
  m[kHostRunqWaitBehindOthers].value = 2.5;
  EXPECT_EQ(TaintOf(m, 2), "the workload waited 2.5 s (250 % of its wall time) for CPUs running other tasks");
}

// A constant neighbour that both arms of a round ran beside: a fair pair,
// kept; a burst that hit one arm only is not.
TEST(HostLoad, ArmsBesideTheSameLoadAreAFairPairAndABurstOnOneArmIsNot) {
  const MetricSet baseline = Load(1.0, 0.9, 1.0), candidate = Load(1.1, 1.0, 1.1);
  EXPECT_TRUE(SawTheSameLoad({&baseline, &candidate}));
  const MetricSet burst = Load(1.6, 0.9, 1.5);
  EXPECT_FALSE(SawTheSameLoad({&baseline, &burst}));
  const MetricSet stolen = Load(1.0, 0.9, 1.0, 0.5);
  EXPECT_FALSE(SawTheSameLoad({&baseline, &stolen}));
  MetricSet waited = Load(1.0, 0.9, 1.0), behind = Load(1.0, 0.9, 1.0);
  waited[kHostRunqWaitBehindOthers] = ScalarMetric(kHostRunqWaitBehindOthers, 0.05, "s", Better::kNone);
  behind[kHostRunqWaitBehindOthers] = ScalarMetric(kHostRunqWaitBehindOthers, 0.6, "s", Better::kNone);
  EXPECT_FALSE(SawTheSameLoad({&waited, &behind})) << "only one arm waited behind others";
  EXPECT_FALSE(SawTheSameLoad({&baseline})) << "one arm is no pair";
}

}  // namespace
}  // namespace perfgate
