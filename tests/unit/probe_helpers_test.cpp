// The probes' pure user-side helpers: syscall names of this architecture, and
// picking the top entries of the per-syscall counts and off-CPU stacks.
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <cctype>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "probes/offcpu_stacks.h"
#include "probes/syscalls.h"

namespace perfgate {
namespace {

TEST(SyscallName, NamesSyscallsOfThisArchitecture) {
#if defined(__x86_64__)
  // Cross-checked against the C library's numbers where it has them.
  EXPECT_EQ(SyscallName(SYS_read), "read");
  EXPECT_EQ(SyscallName(SYS_getppid), "getppid");
  EXPECT_EQ(SyscallName(SYS_getpid), "getpid");
  EXPECT_EQ(SyscallName(SYS_exit_group), "exit_group");
  EXPECT_EQ(SyscallName(SYS_openat), "openat");
#ifdef SYS_rseq
  EXPECT_EQ(SyscallName(SYS_rseq), "rseq");
#endif
#ifdef SYS_pidfd_send_signal
  EXPECT_EQ(SyscallName(SYS_pidfd_send_signal), "pidfd_send_signal");
#endif
#ifdef SYS_futex_waitv
  EXPECT_EQ(SyscallName(SYS_futex_waitv), "futex_waitv");
#endif
  EXPECT_EQ(SyscallName(110), "getppid");
  EXPECT_EQ(SyscallName(469), "file_setattr");
#else
  GTEST_SKIP() << "the syscall table is x86_64's";
#endif
}

TEST(SyscallName, UnknownNumbersAreNamedByNumber) {
  EXPECT_EQ(SyscallName(-1), "syscall_-1");
  EXPECT_EQ(SyscallName(400), "syscall_400");  // unused on x86_64
  EXPECT_EQ(SyscallName(100000), "syscall_100000");
}

TEST(SyscallName, NamesAreUniqueMetricNameParts) {
  std::set<std::string> seen;
  for (long nr = 0; nr < 512; ++nr) {
    std::string name = SyscallName(nr);
    EXPECT_TRUE(seen.insert(name).second) << name;
    for (char c : name) EXPECT_TRUE(std::islower(c) || std::isdigit(c) || c == '_') << name;
  }
}

TEST(TopSyscalls, MostCalledFirstTiesByNumberZerosLeftOut) {
  std::vector<uint64_t> counts(512, 0);
  counts[110] = 500;
  counts[0] = 20;
  counts[1] = 20;
  counts[39] = 7;
  auto top = TopSyscalls(counts, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].nr, 110u);
  EXPECT_EQ(top[0].count, 500u);
  EXPECT_EQ(top[1].nr, 0u);
  EXPECT_EQ(top[2].nr, 1u);
  EXPECT_EQ(TopSyscalls(counts, 10).size(), 4u);
  EXPECT_TRUE(TopSyscalls(counts, 0).empty());
  EXPECT_TRUE(TopSyscalls(std::vector<uint64_t>(512, 0), 10).empty());
}

OffCpuStack Stack(uint32_t tgid, uint64_t time_ns, uint64_t count) {
  OffCpuStack stack;
  stack.tgid = tgid;
  stack.time_ns = time_ns;
  stack.count = count;
  return stack;
}

TEST(MostOffCpuTime, MostTimeFirstThenMostWaits) {
  auto top = MostOffCpuTime({Stack(1, 10, 1), Stack(2, 50, 1), Stack(3, 50, 4), Stack(4, 5, 9)}, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].tgid, 3u);
  EXPECT_EQ(top[1].tgid, 2u);
  EXPECT_EQ(top[2].tgid, 1u);
  EXPECT_EQ(MostOffCpuTime({Stack(1, 1, 1)}, 5).size(), 1u);
  EXPECT_TRUE(MostOffCpuTime({}, 5).empty());
}

}  // namespace
}  // namespace perfgate
