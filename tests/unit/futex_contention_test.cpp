// Ranking the futex words a workload waited on (probes/futex_contention.h):
// the kernel's sums are per (process, word, stack); reports want words.
#include "probes/futex_contention.h"

#include <gtest/gtest.h>

#include <vector>

#include "probes/probe.h"

namespace perfgate {
namespace {

TEST(MostContendedFutexes, SumsTheStacksOfOneWordAndKeepsItsHeaviestStack) {
  std::vector<FutexWaitSum> sums = {
      {.tgid = 7, .uaddr = 0x1000, .user_stack_id = 3, .time_ns = 100, .count = 1},
      {.tgid = 7, .uaddr = 0x1000, .user_stack_id = 5, .time_ns = 300, .count = 2},
      {.tgid = 7, .uaddr = 0x2000, .user_stack_id = 4, .time_ns = 350, .count = 9},
  };
  std::vector<ContendedFutex> top = MostContendedFutexes(sums, 10);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].uaddr, 0x1000u);
  EXPECT_EQ(top[0].time_ns, 400u);
  EXPECT_EQ(top[0].count, 3u);
  EXPECT_EQ(top[0].user_stack_id, 5);
  EXPECT_EQ(top[1].uaddr, 0x2000u);
  EXPECT_EQ(top[1].user_stack_id, 4);
}

TEST(MostContendedFutexes, SameAddressInTwoProcessesIsTwoWords) {
  std::vector<FutexWaitSum> sums = {{.tgid = 1, .uaddr = 0x1000, .time_ns = 10, .count = 1},
                                    {.tgid = 2, .uaddr = 0x1000, .time_ns = 20, .count = 1}};
  std::vector<ContendedFutex> top = MostContendedFutexes(sums, 10);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].tgid, 2u);
  EXPECT_EQ(top[1].tgid, 1u);
}

TEST(MostContendedFutexes, KeepsTheTopNMostFirstWithDeterministicTies) {
  std::vector<FutexWaitSum> sums = {{.tgid = 1, .uaddr = 0x30, .time_ns = 5, .count = 1},
                                    {.tgid = 1, .uaddr = 0x20, .time_ns = 5, .count = 2},
                                    {.tgid = 1, .uaddr = 0x10, .time_ns = 5, .count = 2},
                                    {.tgid = 1, .uaddr = 0x40, .time_ns = 1, .count = 9}};
  std::vector<ContendedFutex> top = MostContendedFutexes(sums, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].uaddr, 0x10u);  // more waits, then the lower address
  EXPECT_EQ(top[1].uaddr, 0x20u);
  EXPECT_EQ(top[2].uaddr, 0x30u);
}

TEST(MostContendedFutexes, WithoutStacksTheIdStaysNegative) {
  std::vector<ContendedFutex> top = MostContendedFutexes({{.tgid = 1, .uaddr = 0x10, .time_ns = 5, .count = 1}}, 1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_LT(top[0].user_stack_id, 0);
  EXPECT_TRUE(MostContendedFutexes({}, 5).empty());
}

// The lock probes' metrics explain a regression; they are not its outcome.
TEST(LockMetrics, AreKernelMetricsNotOutcomes) {
  const MetricVocabulary probes(ProbeMetricDeclarations());
  EXPECT_EQ(probes.RoleOf("lock.futex_wait"), MetricRole::kKernel);
  EXPECT_EQ(probes.RoleOf("lock.mmap_lock_wait_time"), MetricRole::kKernel);
  EXPECT_EQ(probes.RoleOf("locks.mutex_wait_time"), MetricRole::kOutcome);  // pg-locks' own number
}

}  // namespace
}  // namespace perfgate
