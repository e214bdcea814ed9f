// The probes' pure user-side helpers: syscall names of this architecture, and
// picking the top entries of the per-syscall counts and off-CPU stacks.
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <cctype>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "probes/hooks.h"
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


// A program that reads a field this kernel's records lack (the tcp probe's
// tcp_probe tracepoint on Linux 6.1: no skaddr): the error names the field,
// not only the verifier's count of instructions.
TEST(LoadFailureSummary, NamesTheRelocationTheKernelCouldNotResolve) {
  const std::string log =
      "libbpf: prog 'tcp_rtt_tracepoint': BPF program load failed: Invalid argument\n"
      "libbpf: prog 'tcp_rtt_tracepoint': -- BEGIN PROG LOAD LOG --\n"
      "0: R1=ctx(off=0,imm=0) R10=fp0\n"
      "0: (bf) r6 = r1\n"
      "1: <invalid CO-RE relocation>\n"
      "failed to resolve CO-RE relocation <byte_off> [12] struct trace_event_raw_tcp_probe___pg.skaddr (0:3 @ offset "
      "24)\n"
      "processed 3 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0 mark_read 0\n"
      "-- END PROG LOAD LOG --\n"
      "libbpf: prog 'tcp_rtt_tracepoint': failed to load: -22\n";
  EXPECT_EQ(LoadFailureSummary(log, "tcp_rtt_tracepoint"),
            "libbpf: prog 'tcp_rtt_tracepoint': BPF program load failed: Invalid argument; failed to resolve CO-RE "
            "relocation <byte_off> [12] struct trace_event_raw_tcp_probe___pg.skaddr (0:3 @ offset 24) (this kernel's "
            "BTF lacks it); verifier: processed 3 insns (limit 1000000) max_states_per_insn 0 total_states 0 "
            "peak_states 0 mark_read 0");
  // A verifier rejection without a failed relocation: the verdict only.
  const std::string rejected =
      "libbpf: prog 'p': BPF program load failed: Permission denied\n"
      "libbpf: prog 'p': -- BEGIN PROG LOAD LOG --\n"
      "invalid mem access 'scalar'\n"
      "-- END PROG LOAD LOG --\n";
  EXPECT_EQ(LoadFailureSummary(rejected, "p"),
            "libbpf: prog 'p': BPF program load failed: Permission denied; verifier: invalid mem access 'scalar'");
}

}  // namespace
}  // namespace perfgate
