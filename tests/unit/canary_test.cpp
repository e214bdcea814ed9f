// The host canary (run/canary.h): what it measures and when it calls a
// repetition a slow spell.
#include "run/canary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace perfgate {
namespace {

CanaryReading Reading(double cpu, double memory = 0.07, double io = 1e-4, double fault = 5e-4) {
  return {.cpu_s = cpu, .memory_s = memory, .fault_s = fault, .io_s = io, .elapsed_s = 0.001};
}

TEST(Canary, ReadsEveryPartAsATimePerUnitOfWork) {
  const CanaryReading r = RunCanary(0.002);
  ASSERT_TRUE(r.cpu_s);
  EXPECT_GT(*r.cpu_s, 0);
  ASSERT_TRUE(r.memory_s);
  EXPECT_GT(*r.memory_s, 0);
  // Fresh pages faulted in: at least a page's fault and zeroing per MiB's
  // 256 pages, at most far slower than any host would be.
  ASSERT_TRUE(r.fault_s);
  EXPECT_GT(*r.fault_s, 256 * 1e-8);
  EXPECT_LT(*r.fault_s, 1.0);
  EXPECT_GT(r.elapsed_s, 0);
  MetricSet metrics;
  AddCanaryMetrics(r, metrics);
  EXPECT_EQ(metrics.at(kHostCanaryCpu).unit, "s");
  EXPECT_EQ(metrics.at(kHostCanaryElapsed).value, r.elapsed_s);
  const CanaryReading back = CanaryOf(metrics);
  EXPECT_EQ(back.cpu_s, r.cpu_s);
  EXPECT_EQ(back.fault_s, r.fault_s);
  EXPECT_EQ(back.io_s, r.io_s);
  EXPECT_EQ(metrics.at(kHostCanaryFault).value, *r.fault_s);
}

TEST(Canary, TheWorkPerUnitDoesNotDependOnTheBudget) {
  // The same loop at 1 ms and at 8 ms: its time per unit within a factor
  // that no slower host would stay under. The fastest of five readings of
  // each size: a neighbour that preempts one reading only ever lengthens
  // it (beside a parallel build, one 8 ms reading once took 3x a 1 ms one's).
  RunCanary(0.001);
  double small = HUGE_VAL, large = HUGE_VAL, small_elapsed = HUGE_VAL, large_elapsed = HUGE_VAL;
  for (int i = 0; i < 5; ++i) {
    const CanaryReading s = RunCanary(0.001), l = RunCanary(0.008);
    small = std::min(small, *s.cpu_s), large = std::min(large, *l.cpu_s);
    small_elapsed = std::min(small_elapsed, s.elapsed_s), large_elapsed = std::min(large_elapsed, l.elapsed_s);
  }
  EXPECT_LT(large / small, 2.5);
  EXPECT_GT(large / small, 0.4);
  EXPECT_GT(large_elapsed, small_elapsed);
}

TEST(Canary, TheHalfAfterAPauseDoesNotHideAThrottledHalf) {
  // Before the repetition, on a refilled quota: full speed; after it, held
  // back: the repetition's reading is the throttled half's, not halfway.
  const CanaryReading before{.cpu_s = 1.0, .memory_s = 0.07, .fault_s = 4e-4, .io_s = std::nullopt, .elapsed_s = 0.002};
  const CanaryReading after{.cpu_s = 2.0, .memory_s = 0.05, .fault_s = 9e-4, .io_s = 1e-4, .elapsed_s = 0.003};
  const CanaryReading both = BracketReading(before, after);
  EXPECT_EQ(both.cpu_s, 2.0);
  EXPECT_EQ(both.memory_s, 0.07);
  EXPECT_EQ(both.fault_s, 9e-4);
  EXPECT_EQ(both.io_s, 1e-4);  // the reads run after only
  EXPECT_DOUBLE_EQ(both.elapsed_s, 0.005);
}

TEST(Canary, ASlowSpellIsACanaryFarAboveTheRunsMedian) {
  HostCanary canary;
  // Too few canaries before it: no median to hold it against.
  EXPECT_EQ(canary.SpellOf(Reading(1.0)), "");
  EXPECT_EQ(canary.SpellOf(Reading(3.0)), "");
  EXPECT_EQ(canary.SpellOf(Reading(1.02)), "");
  EXPECT_EQ(canary.SpellOf(Reading(1.4)), "");  // within the spell factor of the median (1.02)
  // The median of 1.0, 3.0, 1.02 and 1.4 (the upper of the middle two).
  const std::string spell = canary.SpellOf(Reading(2.5));
  EXPECT_NE(spell.find("the host ran slower for a spell: host.canary.cpu took 1.79x its median"), std::string::npos) << spell;
  // The stream as well; not the direct reads, which vary too much.
  EXPECT_NE(canary.SpellOf(Reading(1.0, 0.2)).find("host.canary.memory"), std::string::npos);
  // And the faults: fresh memory slower to come by.
  EXPECT_NE(canary.SpellOf(Reading(1.0, 0.07, 1e-4, 2e-3)).find("host.canary.fault"), std::string::npos);
  EXPECT_EQ(canary.SpellOf(Reading(1.0, 0.07, 1e-2)), "");
}

}  // namespace
}  // namespace perfgate
