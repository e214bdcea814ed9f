// The why's ranking (explain/explain.h, Attribute): which kernel-side
// metrics are causes of a failing check, priced and ordered, and which are
// the host's noise or outcomes.
#include "explain/explain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/results.h"
#include "report_fixtures.h"

namespace perfgate {
namespace {

using testing::Attribute;
using testing::HostileResults;
using testing::IsHostMetric;
using testing::IsOutcomeMetric;
using testing::Jitter;
using testing::KernelShifts;
using testing::Latencies;
using testing::MakeCheck;
using testing::MoreGetppidCalls;
using testing::ScenarioWithBaselineRepetitions;
using testing::Sides;
using testing::Vocabulary;

TEST(Attribution, WorkloadAndAdapterMetricsAreOutcomes) {
  EXPECT_TRUE(IsOutcomeMetric("workload.wall_time"));
  EXPECT_TRUE(IsOutcomeMetric("fio.job1.read.clat"));
  EXPECT_TRUE(IsOutcomeMetric("camera.time_to_first_frame"));
  EXPECT_FALSE(IsOutcomeMetric("sched.runq_latency"));
  EXPECT_FALSE(IsOutcomeMetric("syscalls.count"));
  EXPECT_FALSE(IsOutcomeMetric("tcp.retransmits"));
}

TEST(Attribution, WithoutBaselineRepetitionsListsOnlyKernelChecksThatClearlyGrew) {
  RunResults r = HostileResults();
  // runq p99 55 -> 57 in three noisy repetitions did not clearly grow;
  // workload.* are outcomes; sched.switches did not move; page_alloc has no baseline.
  EXPECT_TRUE(KernelShifts(r.scenarios[0]).empty());

  ScenarioResult s;
  s.checks.push_back(
      MakeCheck("sched.runq_latency", "p99", Verdict::kRegression, {50, 51, 52, 50, 51}, {80, 81, 82, 80, 81}, 60));
  s.checks.push_back(
      MakeCheck("mm.page_alloc", "per_op", Verdict::kImprovement, {50, 51, 52, 50, 51}, {20, 21, 22, 20, 21}, -60));
  s.checks.push_back(MakeCheck("host.other_cpus", "value", Verdict::kPass, {0.1, 0.1, 0.1, 0.1, 0.1},
                               {1.1, 1.1, 1.1, 1.1, 1.1}, 1000));
  std::vector<KernelShift> shifts = KernelShifts(s);
  ASSERT_EQ(shifts.size(), 1u);
  EXPECT_EQ(shifts[0].metric, "sched.runq_latency");
  EXPECT_EQ(shifts[0].statistic, "p99");
  EXPECT_EQ(shifts[0].pricing, Pricing::kUnpriced);  // one statistic is not a time
}

TEST(Attribution, PricedMetricsLeadAndNoisyOnesAreLeftOut) {
  std::vector<KernelShift> shifts = KernelShifts(ScenarioWithBaselineRepetitions());
  ASSERT_EQ(shifts.size(), 2u);
  // Per operation, since the workload counted its operations: 0.03 more
  // syscalls per op at the default 0.5 us each.
  EXPECT_EQ(shifts[0].metric, "syscalls.count");
  EXPECT_EQ(shifts[0].statistic, "per_op");
  EXPECT_EQ(shifts[0].pricing, Pricing::kEvents);
  EXPECT_TRUE(shifts[0].per_op);
  EXPECT_NEAR(shifts[0].accounted_s, 0.03 * 0.5e-6, 0.005 * 0.5e-6);
  // Reclaims without their latency have no price: after the priced ones.
  EXPECT_EQ(shifts[1].metric, "mm.reclaim");
  EXPECT_EQ(shifts[1].statistic, "count");
  EXPECT_EQ(shifts[1].pricing, Pricing::kUnpriced);
  EXPECT_NEAR(shifts[1].change_pct, 900, 1e-6);
  // Run-queue latency's 20 % within +-60 % noise is not a clear growth.
  EXPECT_EQ(KernelShifts(ScenarioWithBaselineRepetitions(), 1).size(), 1u);
}

TEST(Attribution, MoreCallsPerOperationLeadAnImprovedLatencyAndHostLoadAreNotCauses) {
  ScenarioResult s = MoreGetppidCalls();
  Explanation a = Attribute(s);
  ASSERT_FALSE(a.causes.empty());
  EXPECT_EQ(a.causes[0].metric, "syscalls.count.getppid");
  EXPECT_EQ(a.causes[0].statistic, "per_op");
  EXPECT_NEAR(a.causes[0].change_pct, 50, 1e-6);
  // 8 more calls per operation at the median sampled latency, about 1 us.
  EXPECT_NEAR(a.causes[0].event_cost_s, 1e-6, 0.05e-6);
  EXPECT_NEAR(a.causes[0].accounted_s, 8e-6, 0.6e-6);
  EXPECT_GT(a.causes[0].accounted_low_s, 0);
  EXPECT_LE(a.causes[0].accounted_low_s, a.causes[0].accounted_s);
  // The wall time grew 10 us per operation: the calls account for most of it.
  ASSERT_TRUE(a.per_op);
  ASSERT_TRUE(a.wall_change_s);
  EXPECT_NEAR(*a.wall_change_s, 10e-6, 1e-6);
  ASSERT_TRUE(a.causes[0].share);
  EXPECT_GT(*a.causes[0].share, 0.5);
  for (const KernelShift& shift : a.causes) {
    EXPECT_NE(shift.metric, "syscalls.latency");  // it prices the calls; its p99 improved
    EXPECT_NE(shift.metric, "host.other_cpus");
    EXPECT_NE(shift.metric, "sched.runq_latency");  // did not move
    // syscalls.count less its getppid calls did not grow.
    EXPECT_NE(shift.metric, "syscalls.count");
  }
  ASSERT_EQ(a.host.size(), 1u);
  EXPECT_EQ(a.host[0].metric, "host.other_cpus");
  EXPECT_NEAR(a.host[0].change_pct, 200, 1e-6);
}

// As many getppid calls per operation; each of them 5 us slower (a kernel
// module hooked it). The probe's estimate of getppid's own time says which
// syscall got slower.
TEST(Attribution, ASlowerSyscallIsNamedByItsTime) {
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    const double j = Jitter(i);
    const double getppid = 16000 * j, getppid_ns = candidate ? 6000 : 1000;
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.18 : 0.1) * j, "s");
    m["syscalls.count"] = CounterMetric("syscalls.count", "count", getppid + 4000 * j, 0.1);
    m["syscalls.count.getppid"] = CounterMetric("syscalls.count.getppid", "count", getppid, 0.1);
    m["syscalls.time.getppid"] = CounterMetric("syscalls.time.getppid", "ns", getppid * getppid_ns, 0.1);
    m["syscalls.latency"] = HistogramMetric("syscalls.latency", "ns",
                                            Latencies({{static_cast<uint64_t>(getppid_ns), 1000}, {1000, 250}}), 0.1);
  });
  Explanation a = Attribute(s);
  ASSERT_FALSE(a.causes.empty());
  EXPECT_EQ(a.causes[0].metric, "syscalls.time.getppid");
  EXPECT_EQ(a.causes[0].pricing, Pricing::kWaitTime);
  // 16000 calls 5 us slower for 1000 operations.
  EXPECT_NEAR(a.causes[0].accounted_s, 80e-6, 4e-6);
  for (const KernelShift& shift : a.causes) {
    EXPECT_NE(shift.metric, "syscalls.count.getppid");  // as many calls
    EXPECT_NE(shift.metric, "syscalls.count");
  }
}

// 50 % more getppid calls per operation, each as fast: its time names them,
// and neither its calls nor the total count are counted again beside it.
TEST(Attribution, MoreCallsOfASyscallWhoseTimeIsKeptAreCountedOnce) {
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    const double j = Jitter(i);
    const double getppid = (candidate ? 24000 : 16000) * j;
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.108 : 0.1) * j, "s");
    m["syscalls.count"] = CounterMetric("syscalls.count", "count", getppid + 4000 * j, 0.1);
    m["syscalls.count.getppid"] = CounterMetric("syscalls.count.getppid", "count", getppid, 0.1);
    m["syscalls.time.getppid"] = CounterMetric("syscalls.time.getppid", "ns", getppid * 1000, 0.1);
    m["syscalls.latency"] = HistogramMetric("syscalls.latency", "ns", Latencies({{1000, 1000}}), 0.1);
  });
  Explanation a = Attribute(s);
  ASSERT_EQ(a.causes.size(), 1u);
  EXPECT_EQ(a.causes[0].metric, "syscalls.time.getppid");
  EXPECT_GT(a.causes[0].accounted_low_s, 0);
  // syscalls.count less the getppid calls did not grow.
  ScenarioResult without_time = s;
  for (auto* reps : {&without_time.repetitions, &without_time.baseline_repetitions}) {
    for (Repetition& rep : *reps) rep.metrics.erase("syscalls.time.getppid");
  }
  Explanation b = Attribute(without_time);
  ASSERT_EQ(b.causes.size(), 1u);
  EXPECT_EQ(b.causes[0].metric, "syscalls.count.getppid");
}

TEST(Attribution, SlowerSyscallsOnABusierHostAreNotMoreSyscalls) {
  // As many calls per operation; the candidate's sampled calls took twice as long.
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.12 : 0.1) * Jitter(i), "s");
    m["syscalls.count"] = CounterMetric("syscalls.count", "count", 20000 * Jitter(i), 0.1);
    m["syscalls.latency"] =
        HistogramMetric("syscalls.latency", "ns", Latencies({{candidate ? 2000u : 1000u, 1000}}), 0.1);
  });
  EXPECT_TRUE(Attribute(s).causes.empty());
}

TEST(Attribution, MetricsThatImprovedAreNeverCauses) {
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.2 : 0.1) * Jitter(i), "s");
    m["mm.page_faults"] = CounterMetric("mm.page_faults", "count", (candidate ? 10 : 1000) * 1000 * Jitter(i), 1);
    m["sched.offcpu_time"] = CounterMetric("sched.offcpu_time", "ns", (candidate ? 1 : 50) * 1e6 * Jitter(i), 1);
  });
  EXPECT_TRUE(Attribute(s).causes.empty());
}

TEST(Attribution, EventsArePricedPerEventAndWaitsAsMeasured) {
  // Per operation: 64 more page faults (1 us each), 64 more pages (0.2 us
  // each), off-CPU waiting from 20 % of the run to 25.6 % (10 us of the
  // candidate's 180), 2000 more run-queue waits of 1 us per 1000 operations (2 us).
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    const double j = Jitter(i);
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.180 : 0.100) * j, "s");
    m["mm.page_faults"] = CounterMetric("mm.page_faults", "count", (candidate ? 128 : 64) * 1000 * j, 1);
    m["mm.page_alloc"] = CounterMetric("mm.page_alloc", "pages", (candidate ? 128 : 64) * 1000 * j, 1);
    m["sched.offcpu_time"] = CounterMetric("sched.offcpu_time", "ns", (candidate ? 46e6 : 20e6) * j, 1);
    m["sched.runq_latency"] =
        HistogramMetric("sched.runq_latency", "ns", Latencies({{1000, candidate ? 3000 : 1000}}), 1);
  });
  Explanation a = Attribute(s);
  ASSERT_EQ(a.causes.size(), 4u);
  EXPECT_EQ(a.causes[0].metric, "mm.page_faults");
  EXPECT_EQ(a.causes[0].pricing, Pricing::kEvents);
  EXPECT_NEAR(a.causes[0].accounted_s, 64e-6, 3e-6);
  EXPECT_EQ(a.causes[1].metric, "mm.page_alloc");
  EXPECT_NEAR(a.causes[1].accounted_s, 64 * 0.2e-6, 1e-6);
  EXPECT_EQ(a.causes[2].metric, "sched.offcpu_time");
  EXPECT_EQ(a.causes[2].pricing, Pricing::kWaitTime);
  EXPECT_EQ(a.causes[2].statistic, "per_op");
  EXPECT_NEAR(a.causes[2].accounted_s, 10e-6, 1e-6);
  EXPECT_EQ(a.causes[3].metric, "sched.runq_latency");
  EXPECT_EQ(a.causes[3].pricing, Pricing::kLatencySum);
  EXPECT_EQ(a.causes[3].statistic, "sum_per_op");
  EXPECT_NEAR(a.causes[3].accounted_s, 2e-6, 0.2e-6);
  for (size_t i = 1; i < a.causes.size(); ++i) EXPECT_GE(a.causes[i - 1].accounted_low_s, a.causes[i].accounted_low_s);
  // Shares of the 80 us per operation the wall time grew.
  ASSERT_TRUE(a.causes[0].share);
  EXPECT_NEAR(*a.causes[0].share, a.causes[0].accounted_low_s / 80e-6, 0.05);
}

TEST(Attribution, ALockWaitIsNotCountedAgainAsTheSleepItIsPartOf) {
  // Off CPU asleep 100 -> 150 us per op, all of the growth in futex waits.
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    const double j = Jitter(i);
    const double futex_ns = (candidate ? 70e3 : 20e3) * 1000 * j;
    const double other_sleep_ns = 80e3 * 1000 * j;
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.25 : 0.2) * j, "s");
    m["lock.futex_wait_time"] = CounterMetric("lock.futex_wait_time", "ns", futex_ns, 1);
    m["lock.futex_wait"] = HistogramMetric("lock.futex_wait", "ns", Latencies({{1000, 1000}}), 1);
    m["sched.offcpu_time"] = CounterMetric("sched.offcpu_time", "ns", futex_ns + other_sleep_ns, 1);
    // The histogram's sum from bucket midpoints; 1 ms waits, their count the total / 1 ms.
    m["sched.offcpu.sleep"] = HistogramMetric(
        "sched.offcpu.sleep", "ns",
        Latencies({{1000000, static_cast<uint64_t>(std::llround((futex_ns + other_sleep_ns) / 1e6))}}), 1);
  });
  Explanation a = Attribute(s);
  ASSERT_FALSE(a.causes.empty());
  EXPECT_EQ(a.causes[0].metric, "lock.futex_wait_time");
  // Per second of the run, 10 % -> 28 %, of the candidate's 250 us per op.
  EXPECT_NEAR(a.causes[0].accounted_s, 45e-6, 3e-6);
  for (const KernelShift& shift : a.causes) {
    EXPECT_NE(shift.metric, "lock.futex_wait");  // the same waits as lock.futex_wait_time
    if (shift.metric == "sched.offcpu.sleep") {
      EXPECT_EQ(shift.excluding, std::vector<std::string>{"lock.futex_wait_time"});
      EXPECT_LT(shift.accounted_s, 0.1 * a.causes[0].accounted_s);  // bucket midpoints' error at most
    }
  }
}

// A start whose page cache reclaim took: it reads 20 MB, with
// the antagonist 40 MB of which 20 MB read back, and waits for the disk
// 0.2 s, then 0.45 s. Half its reads were read-back, so half its I/O waits
// are reclaim's cost; the rest of the waits did not grow beyond the run's.
TEST(Attribution, PagesReadBackAfterReclaimTakeTheirShareOfTheIoWaits) {
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    const double j = Jitter(i);
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.7 : 0.4) * j, "s");
    m["coldstart.disk_read_bytes"] = ScalarMetric("coldstart.disk_read_bytes", candidate ? 40e6 : 20e6, "bytes");
    m[kReclaimRefaultBytes] = CounterMetric(kReclaimRefaultBytes, "bytes", candidate ? 20e6 : 0, 1);
    const auto waits = static_cast<uint64_t>(std::llround((candidate ? 450 : 200) * j));
    m["sched.offcpu.io"] = HistogramMetric("sched.offcpu.io", "ns", Latencies({{1000000, waits}}), 1);
  });
  Explanation a = Attribute(s);
  ASSERT_FALSE(a.causes.empty());
  EXPECT_EQ(a.causes[0].metric, kReclaimRefaultBytes);
  EXPECT_EQ(a.causes[0].pricing, Pricing::kReadBack);
  EXPECT_NEAR(a.causes[0].accounted_s, 0.225 / 1000, 0.02 / 1000);  // per op: Sides counts 1000
  for (const KernelShift& shift : a.causes) EXPECT_NE(shift.metric, "sched.offcpu.io") << DescribeShift(shift);

  // Nothing read back: the I/O waits are the start's own, reclaim costs nothing.
  ScenarioResult own = Sides([](MetricSet& m, bool candidate, int i) {
    const double j = Jitter(i);
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.7 : 0.4) * j, "s");
    m["coldstart.disk_read_bytes"] = ScalarMetric("coldstart.disk_read_bytes", candidate ? 40e6 : 20e6, "bytes");
    m[kReclaimRefaultBytes] = CounterMetric(kReclaimRefaultBytes, "bytes", 0, 1);
    const auto waits = static_cast<uint64_t>(std::llround((candidate ? 450 : 200) * j));
    m["sched.offcpu.io"] = HistogramMetric("sched.offcpu.io", "ns", Latencies({{1000000, waits}}), 1);
  });
  a = Attribute(own);
  ASSERT_FALSE(a.causes.empty());
  EXPECT_EQ(a.causes[0].metric, "sched.offcpu.io");
  for (const KernelShift& shift : a.causes) EXPECT_NE(shift.metric, kReclaimRefaultBytes);
}

TEST(Attribution, WaitsThatOnlyStretchWithTheRunAreNotCauses) {
  // Twice the page faults; an idle helper thread sleeps as long as the run
  // lasts, and the loop is preempted in proportion to its CPU time.
  auto run = [](double other_cpus) {
    return Sides([other_cpus](MetricSet& m, bool candidate, int i) {
      const double j = Jitter(i);
      const double wall = (candidate ? 0.2 : 0.1) * j, cpu = (candidate ? 0.16 : 0.08) * j;
      m["workload.wall_time"] = ScalarMetric("workload.wall_time", wall, "s");
      m["workload.cpu_time"] = ScalarMetric("workload.cpu_time", cpu, "s");
      m["host.other_cpus"] = ScalarMetric("host.other_cpus", other_cpus, "cpus", Better::kNone);
      m["mm.page_faults"] = CounterMetric("mm.page_faults", "count", (candidate ? 128 : 64) * 1000 * j, 1);
      m["sched.offcpu_time"] = CounterMetric("sched.offcpu_time", "ns", (wall + 0.01) * 1e9, 1);
      m["sched.runq_latency"] = HistogramMetric(
          "sched.runq_latency", "ns", Latencies({{10000, static_cast<uint64_t>(std::llround(cpu * 1e9 / 4e4))}}), 1);
    });
  };
  Explanation quiet = Attribute(run(0.1));
  ASSERT_EQ(quiet.causes.size(), 1u);
  EXPECT_EQ(quiet.causes[0].metric, "mm.page_faults");
  EXPECT_TRUE(quiet.cpu_waits.empty());

  // Waiting for a CPU more per CPU-second on a busy host: the host's noise.
  ScenarioResult busy = run(1.0);
  for (Repetition& rep : busy.repetitions) {
    rep.metrics["sched.runq_latency"] = HistogramMetric("sched.runq_latency", "ns", Latencies({{10000, 8000}}), 1);
  }
  Explanation a = Attribute(busy);
  ASSERT_EQ(a.causes.size(), 1u);
  EXPECT_EQ(a.causes[0].metric, "mm.page_faults");
  ASSERT_EQ(a.cpu_waits.size(), 1u);
  EXPECT_EQ(a.cpu_waits[0].metric, "sched.runq_latency");
  EXPECT_NE(DescribeHost(a, false).find("waits for a CPU on the busy host: sched.runq_latency +"), std::string::npos);
  // On a quiet host the same growth is a cause.
  for (auto* reps : {&busy.repetitions, &busy.baseline_repetitions}) {
    for (Repetition& rep : *reps) rep.metrics["host.other_cpus"].value = 0.1;
  }
  Explanation calm = Attribute(busy);
  ASSERT_EQ(calm.causes.size(), 2u);
  EXPECT_EQ(calm.causes[1].metric, "sched.runq_latency");
}

TEST(Attribution, ASleepIsNotChargedWithTheWaitForACpuAfterItsWakeUp) {
  // As many sleeps of 1 ms; on the candidate's side each wake-up waited
  // 1 ms more for a CPU, which sched.offcpu.sleep counts and runqlat sees.
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    const double j = Jitter(i);
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.15 : 0.1) * j, "s");
    m["host.other_cpus"] = ScalarMetric("host.other_cpus", 1.5, "cpus", Better::kNone);
    m["sched.offcpu_time"] = CounterMetric("sched.offcpu_time", "ns", (candidate ? 0.2 : 0.1) * j * 1e9, 1);
    m["sched.offcpu.sleep"] =
        HistogramMetric("sched.offcpu.sleep", "ns", Latencies({{candidate ? 2000000u : 1000000u, 100}}), 1);
    m["sched.runq_latency"] =
        HistogramMetric("sched.runq_latency", "ns", Latencies({{candidate ? 1000000u : 1000u, 100}}), 1);
  });
  Explanation a = Attribute(s);
  for (const KernelShift& shift : a.causes) EXPECT_NE(shift.metric, "sched.offcpu.sleep");
  ASSERT_EQ(a.cpu_waits.size(), 1u);  // the host was busy: its noise
  EXPECT_EQ(a.cpu_waits[0].metric, "sched.runq_latency");
}

TEST(Attribution, WithoutOperationsTimeIsPerRepetition) {
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", (candidate ? 0.3 : 0.2) * Jitter(i), "s");
    m["lock.mmap_lock_wait_time"] =
        CounterMetric("lock.mmap_lock_wait_time", "ns", (candidate ? 90e6 : 10e6) * Jitter(i), 1);
  });
  for (auto* reps : {&s.repetitions, &s.baseline_repetitions}) {
    for (Repetition& rep : *reps) rep.metrics["lock.mmap_lock_wait_time"].ops.reset();
  }
  Explanation a = Attribute(s);
  EXPECT_FALSE(a.per_op);
  ASSERT_EQ(a.causes.size(), 1u);
  EXPECT_EQ(a.causes[0].statistic, "count");
  EXPECT_FALSE(a.causes[0].per_op);
  EXPECT_NEAR(a.causes[0].accounted_s, 0.080, 0.004);
  ASSERT_TRUE(a.causes[0].share);
  EXPECT_GT(*a.causes[0].share, 0.6);
  EXPECT_EQ(FormatAccounted(a.causes[0].accounted_s, false).substr(0, 1), "+");
  EXPECT_NE(FormatAccounted(a.causes[0].accounted_s, false).find("/rep"), std::string::npos);
}

TEST(Attribution, TimesPerOperationReadInSeconds) {
  EXPECT_EQ(FormatShiftValue(147000, "ns/op"), FormatQuantity(147e-6, "s") + "/op");
  EXPECT_EQ(FormatShiftValue(3, "count/op"), FormatQuantity(3, "count/op"));
  EXPECT_EQ(FormatShiftValue(2e6, "ns"), FormatQuantity(2e6, "ns"));
  EXPECT_EQ(FormatAccounted(-2e-3, false), "-" + FormatQuantity(2e-3, "s") + "/rep");
}

TEST(Attribution, HostLoadAndProcessCountsAreKernelSide) {
  EXPECT_FALSE(IsOutcomeMetric("host.other_cpus"));
  EXPECT_FALSE(IsOutcomeMetric("proc.forks"));
  EXPECT_FALSE(IsOutcomeMetric("workload.page_faults"));  // the kernel's count, read by the runner
  EXPECT_TRUE(IsHostMetric("host.other_cpus"));
  EXPECT_FALSE(IsHostMetric("sched.runq_latency"));
}

// Two kernels (a kernel A/B): what differs between them is named either
// way, failing or not; what moved less than 5 %, or within its noise, is not.
TEST(KernelDifferences, MetricsThatClearlyMovedEitherWayAreNamed) {
  ScenarioResult s = Sides([](MetricSet& m, bool candidate, int i) {
    const double j = Jitter(i);
    m["workload.wall_time"] = ScalarMetric("workload.wall_time", 0.1 * j, "s");
    m["mm.page_alloc"] = CounterMetric("mm.page_alloc", "pages", (candidate ? 6000 : 8000) * j, 0.1);
    m["syscalls.count"] = CounterMetric("syscalls.count", "count", (candidate ? 20600 : 20000) * j, 0.1);
    m["sched.switches"] = CounterMetric("sched.switches", "count", (candidate ? 1300 : 1000) * j, 0.1);
  });
  const std::vector<KernelShift> d = KernelDifferences(s, Vocabulary());
  std::vector<std::string> names;
  for (const KernelShift& shift : d) names.push_back(shift.metric);
  EXPECT_NE(std::find(names.begin(), names.end(), "mm.page_alloc"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "sched.switches"), names.end());
  // +3 %: below the threshold however clear.
  EXPECT_EQ(std::find(names.begin(), names.end(), "syscalls.count"), names.end());
  for (const KernelShift& shift : d) {
    if (shift.metric == "mm.page_alloc") {
      EXPECT_NEAR(shift.change_pct, -25, 1);
    }
  }
}

}  // namespace
}  // namespace perfgate
